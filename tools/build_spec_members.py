"""Write SPEC.md's members table (section 1) from the schemas: python tools/build_spec_members.py [--check].

The table says what the schemas say of each top-level member of the rendezvous blob (its
name, JSON type, presence and the version that added it), so it is generated from the newest
schema's wire model rather than kept beside it by hand: a member made required in the table
alone is a stale table here (``--check`` exits 1) and, once committed, a change to released
text at the gate (``SPEC_TEXT_CHANGED``). Only the *meaning* column is prose, kept from the
table as written (a new member's reads ``(fill in: ...)`` until someone writes it). A row
whose ``since`` is a new version applies to that version only, so adding a member changes no
released version's text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import _clone
from refitwire.wire import EMPTY_WHEN_ABSENT

SPEC = _clone.ROOT / "schema" / "SPEC.md"
HEADER = "| member | type | presence | since | meaning |"
#: The presence of the member readers read as "" when absent, which writers always write (WRITE_ENDPOINT).
ALWAYS_WRITTEN = "optional for readers; writers always write it"


def _type(member: Any, written: dict[str, Any]) -> str:
    """A member's JSON type as the table writes it (``written``: its schema as the file has it):
    ``array of tensor`` for an array of a ``$defs`` entry."""
    names = []
    for name in (t for t in member.types if t != "null"):
        items = written.get("items", {}) if name == "array" else {}
        ref = items.get("$ref", "") if isinstance(items, dict) else ""
        names.append(f"array of {ref.rsplit('/', 1)[-1]}" if ref else name)
    return " or ".join(names)


def rows(meanings: dict[str, str]) -> list[str]:
    """The table, header first, from the newest schema of this checkout; ``meanings``: by member."""
    registry = _clone.registry()
    version = (*registry.released_versions(), *registry.candidate_versions("rendezvous"))[-1]
    model, schema = registry.wire_model("rendezvous", version), registry.load_schema("rendezvous", version)
    out = [HEADER, "|---|---|---|---|---|"]
    for member in model.top.members:  # in writer order
        presence = "required" if member.required else "optional"
        presence = ALWAYS_WRITTEN if member.name == EMPTY_WHEN_ABSENT else presence
        meaning = meanings.get(member.name, f"(fill in: what `{member.name}` means)")
        kind = _type(member, schema.get("properties", {}).get(member.name, {}))
        out.append(f"| `{member.name}` | {kind} | {presence} | {member.added_in} | {meaning} |")
    return out


def rebuilt(text: str) -> str:
    """``text`` with the members table (from HEADER to the next blank line) generated anew."""
    lines = text.split("\n")
    start, end = _clone.table_lines(lines, HEADER)
    meanings = {}
    for row in lines[start + 2 : end]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 5:
            meanings[cells[0].strip("`")] = cells[4]
    return "\n".join([*lines[:start], *rows(meanings), *lines[end:]])


def main(argv: list[str]) -> int:
    return _clone.refresh(Path(SPEC), rebuilt, "the members table (section 1)", "--check" in argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
