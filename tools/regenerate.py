"""Regenerate everything the schemas determine, in order: python tools/regenerate.py [--check].

The one command after a schema change (docs/wire-model.md, "Adding an optional member"), run
from the checkout with any interpreter that has the kit's dependencies: the tools import this
checkout's own packages (``tools/_clone.py``), never an installed kit's. In order:

1. every member whose keywords go past its type names its rule (``x-rule``), and every
   ``x-rule`` of every schema file has its row in ``schema/SPEC.md``;
2. the golden vectors, with the released upstream readers' and writers' verdicts measured
   (``build_vectors.py --measure-upstream``; needs the upstream environments,
   ``$REFITWIRE_ENVS``), then built again so the verdicts set each vector's tier, and the
   expected-failure entries of the released upstream follow them;
3. the merge vectors, with what the released ``merge_shard_tables`` gives measured
   (``build_merge_vectors.py``), and the digest vectors, each input digested by the released
   ``verify.tensor_digest`` (``build_digest_vectors.py``; ``--check`` digests them again);
4. the testee protocol's decoded and envelope schemas from the newest release (``build_protocol.py``);
5. the coverage table (``build_coverage.py``), which fails when a rule at a place has no vector;
6. the gate's rule catalogue in docs/gate.md, from ``refitwire.gate.RULES`` (``build_rule_catalogue.py``),
   and SPEC.md's members table (section 1) from the newest schema (``build_spec_members.py``);
7. compat/IMPLEMENTERS.md's list of every protocol message and member, from schema/protocol/
   (``build_implementers.py``);
8. every list keyed by case IDs (the expected failures, the upstream verdicts' failures and
   writes, the IDs README.md, compat/IMPLEMENTERS.md and docs/ cite) carried over to the cases'
   IDs now, and no entry an ID no case has (``carry_case_ids.py``: it records the vector files
   before step 2, so an ID is found again by the name or the bytes of its vector).

``--check`` writes nothing and exits 1 when any step would change a file (or a rule has no row).
Run it again after ``refitwire schema release``: the protocol then includes the new version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _clone

if TYPE_CHECKING:
    from refitwire.wire import Registry

TOOLS = Path(__file__).resolve().parent
STEPS = (
    ("the golden vectors: the released readers' and writers' verdicts", ["build_vectors.py", "--measure-upstream"]),
    ("the golden vectors, their tiers and the upstream expected failures", ["build_vectors.py"]),
    ("the merge vectors, with the released merges measured", ["build_merge_vectors.py"]),
    ("the digest vectors, digested by the released modelexpress", ["build_digest_vectors.py"]),
    ("the testee protocol's decoded and envelope schemas", ["build_protocol.py"]),
    ("the coverage table", ["build_coverage.py"]),
    ("the members table of schema/SPEC.md", ["build_spec_members.py"]),
    ("the gate's rule catalogue in docs/gate.md", ["build_rule_catalogue.py"]),
    ("the protocol's members in compat/IMPLEMENTERS.md", ["build_implementers.py"]),
)  # fmt: skip
CHECKS = (
    ("the golden vectors and their upstream verdicts", ["build_vectors.py", "--check"]),
    ("the merge vectors", ["build_merge_vectors.py", "--check"]),
    ("the digest vectors", ["build_digest_vectors.py", "--check"]),
    ("the testee protocol's decoded and envelope schemas", ["build_protocol.py", "--check"]),
    ("the coverage table", ["build_coverage.py", "--check"]),
    ("the members table of schema/SPEC.md", ["build_spec_members.py", "--check"]),
    ("the gate's rule catalogue in docs/gate.md", ["build_rule_catalogue.py", "--check"]),
    ("the protocol's members in compat/IMPLEMENTERS.md", ["build_implementers.py", "--check"]),
    ("the lists keyed by case IDs", ["carry_case_ids.py", "--check"]),
)


def rules_without_rows() -> list[str]:
    """``file pointer: RULE`` for each ``x-rule`` of a schema file that SPEC.md has no row for."""
    from refitwire.wire import Registry, spec_rules

    schema = _clone.ROOT / "schema"
    known = {rule.id for rule in spec_rules(Registry.from_folder(schema)).rules}
    missing = []
    for document in sorted(
        {p.parent.name for p in schema.glob("*/*.json")} - {"protocol", "report", "vectors"}
    ):
        for path in sorted((schema / document).glob("*.json")):
            for at, rule in _rules(json.loads(path.read_text(encoding="utf-8")), ""):
                if rule not in known:
                    missing.append(
                        f"{path.relative_to(_clone.ROOT)} {at}: {rule!r} has no row in schema/SPEC.md"
                    )
    return missing


def members_without_version() -> list[str]:
    """``file: member`` for each member of a schema file that names no ``x-added-in``: every
    member says the version that added it (SPEC.md section 3), which the gate checks too
    (``ADDED_IN_MISSING``). The boolean schema ``true`` (any JSON value) has no room for it;
    ``{"x-added-in": VERSION}`` allows the same values and says when."""
    from refitwire.wire import Registry

    registry = Registry.from_folder(_clone.ROOT / "schema")
    missing = []
    for document in registry.documents:
        for version in registry.known_versions(document):
            for member in registry.wire_model(document, version).members():
                if "x-added-in" in member.schema:
                    continue
                line = f"schema/{document}/{version}.json {member.place}: no x-added-in"
                if not member.schema:  # true or {}: any JSON value
                    line += f' (for any JSON value write {{"x-added-in": "{version}"}}, not true or {{}})'
                missing.append(line)
    return missing


def members_without_rule(registry: Registry) -> list[str]:
    """``file member: keywords`` for each member (or its items) whose keywords, past its type,
    state no SPEC rule: a value breaking one would be rejected naming no rule of SPEC.md
    (``WireModel.rule_at`` finds no ``x-rule`` at or above it). docs/wire-model.md asks every
    member that holds values to bounds, a pattern or a list for an ``x-rule`` and its row."""
    from refitwire.wire import KEYWORDS, spec_rules

    known = {rule.id for rule in spec_rules(registry).rules}
    missing = []
    for document in registry.documents:
        for version in registry.known_versions(document):
            model = registry.wire_model(document, version)
            for member in model.members():
                for value in (member, member.items):  # (its items are a member of their own)
                    if value is None:
                        continue
                    at = member.first_path(item=value is not member)
                    asserting = [k for k in value.schema if k in KEYWORDS and k != "type"
                                 and KEYWORDS[k].asserts and KEYWORDS[k].descent is None]  # fmt: skip
                    unruled = [k for k in asserting if model.rule_at(k, at) not in known]
                    if unruled:
                        where = member.place + ("" if value is member else " (its items)")
                        missing.append(
                            f"schema/{document}/{version}.json {where}: {', '.join(unruled)} with no x-rule"
                        )
    return missing


def _rules(node: Any, at: str) -> Iterator[tuple[str, str]]:
    from refitwire.wire import join

    if isinstance(node, dict):
        for key, value in node.items():
            if key == "x-rule":
                yield join(at, key), str(value)
            else:
                yield from _rules(value, join(at, key))
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _rules(value, join(at, n))


def main(argv: list[str]) -> int:
    check = "--check" in argv
    unstamped = members_without_version()
    for line in unstamped:
        print(line, file=sys.stderr)
    if unstamped:
        print(
            "every member names the version that added it (x-added-in), then run this again", file=sys.stderr
        )
        return 1
    missing = rules_without_rows()
    for line in missing:
        print(line, file=sys.stderr)
    if missing:
        print("add a row to schema/SPEC.md for each rule (section 2), then run this again", file=sys.stderr)
        return 1
    from refitwire.wire import Registry

    unruled = members_without_rule(Registry.from_folder(_clone.ROOT / "schema"))
    for line in unruled:
        print(line, file=sys.stderr)
    if unruled:
        print(
            'name the SPEC rule each of these states: an "x-rule" at the member, with its row in '
            "schema/SPEC.md (section 2), then run this again",
            file=sys.stderr,
        )
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        ids = str(Path(tmp) / "vectors-before.json")  # the vectors as they were, to find listed IDs again
        steps = CHECKS if check else (
            ("the lists keyed by case IDs, by the vectors' names", ["carry_case_ids.py", "--snapshot", ids]),
            *STEPS,
            ("the lists keyed by case IDs", ["carry_case_ids.py", "--previous", ids]),
        )  # fmt: skip
        for what, step in steps:
            print(f"== {what}: python tools/{' '.join(step)}", flush=True)
            done = subprocess.run([sys.executable, str(TOOLS / step[0]), *step[1:]], cwd=_clone.ROOT)
            if done.returncode != 0:
                print(f"tools/{step[0]} failed (exit {done.returncode})", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
