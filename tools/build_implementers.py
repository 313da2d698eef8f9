"""Write the guide's list of every protocol message and member into compat/IMPLEMENTERS.md.

Run: python tools/build_implementers.py [--check]. The section between the marker comments
``<!-- generated: protocol replies -->`` and ``<!-- end generated: protocol replies -->`` is
the least a testee does and, per kind of request and reply, every member with what it must be,
read from schema/protocol/ through the same kinds the runner words a bad reply with
(``refitwire.compat._protocol.kinds``): the guide and the runner's messages cannot disagree
with the schemas or each other. ``--check`` writes nothing and exits 1 when the section is
stale (tests/compat/test_implementers_guide.py; ``tools/regenerate.py --check``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _clone
from refitwire.compat._protocol import Kind, kinds, needs

GUIDE = Path(__file__).resolve().parent.parent / "compat" / "IMPLEMENTERS.md"
BEGIN = "<!-- generated: protocol replies -->"
END = "<!-- end generated: protocol replies -->"


def _named(kind: Kind) -> str:
    """A kind's required members as a list: "`seq`, `skipped`: true, `reason`"."""
    constants = kind.flags
    return ", ".join(
        f"`{m}`" + (f": {_json(constants[m])}" if m in constants else "")
        for m in kind.schema.get("required", ())
    )


def _json(value: object) -> str:
    return json.dumps(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _rows(kind: Kind, first: str) -> list[str]:
    rows = []
    for member in kind.members:
        optional = "" if member.required else " (optional)"
        label = first if not rows else ""
        rows.append(f"| {label} | `{member.at.lstrip('/')}`{optional} | {_cell(member.expected)} |")
    return rows or [f"| {first} | — | — |"]


def section() -> list[str]:
    """The generated lines, markers included."""
    replies = {k.name: k for k in kinds("response")}
    lines = [
        BEGIN,
        "<!-- written by python tools/build_implementers.py from schema/protocol/: edit the schemas, not this -->",
        "",
        "### Every message, member by member",
        "",
        f"**The least a testee does**: answer `start` with {replies['started'].words} "
        f"({_named(replies['started'])}); answer every later request with exactly one line that echoes "
        f"its `seq`: the reply its command asks for, {replies['skipped'].words} ({_named(replies['skipped'])}) "
        f"to a command it does not do, or {replies['errored'].words} ({_named(replies['errored'])}) to a "
        "request it could not handle; and exit with status 0 on `stop` or at the end of its input.",
        "",
        "**Requests** (`schema/protocol/request.json`); a member not listed here may be added later:"
        " ignore it.",
        "",
        "| request | member | must be |",
        "|---|---|---|",
    ]
    for kind in kinds("request"):
        lines += _rows(kind, kind.words)
    lines += [
        "",
        "**Replies** (`schema/protocol/response.json`; `*` is every item of an array, and a member"
        " marked optional is one its object may leave out). A reply that"
        " breaks its schema fails its case, and the message names the member as this table does"
        f' ("{needs("implementation")}").',
        "",
        "| reply | member | must be |",
        "|---|---|---|",
    ]
    for kind in kinds("response"):
        lines += _rows(kind, kind.words)
    return [*lines, "", END]


def rebuilt(text: str) -> str:
    """``text`` with the lines from BEGIN to END generated anew."""
    lines = text.split("\n")
    start, end = lines.index(BEGIN), lines.index(END)
    return "\n".join([*lines[:start], *section(), *lines[end + 1 :]])


def main(argv: list[str]) -> int:
    return _clone.refresh(GUIDE, rebuilt, "the protocol's members", "--check" in argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
