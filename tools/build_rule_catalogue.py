"""Write the gate's rule catalogue into docs/gate.md from ``refitwire.gate.RULES``.

Run: python tools/build_rule_catalogue.py [--check]. The table under "## The rule catalogue"
is one row per rule (ID, category, severity, the directions it breaks, its meaning), in the
catalogue's order: the rules are stated once, in ``gate/_rules.py``, and the page follows
them. ``--check`` writes nothing and exits 1 when the page is stale (tests/gate/test_rule_catalogue.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import _clone
from refitwire.gate import RULES

DOC = Path(__file__).resolve().parent.parent / "docs" / "gate.md"
HEADER = "| rule | category | severity | breaks | meaning |"


def table() -> list[str]:
    rows = [HEADER, "|---|---|---|---|---|"]
    for rule in RULES.values():
        breaks = ", ".join(rule.directions) or "—"
        remedy = f" To fix it, {rule.remedy}" if rule.remedy else ""  # (else: accept it in the baseline)
        rows.append(f"| `{rule.id}` | {rule.category} | {rule.severity} | {breaks} | {rule.doc}{remedy} |")
    return rows


def rebuilt(text: str) -> str:
    """``text`` with the table after HEADER (up to the next blank line) generated anew."""
    lines = text.split("\n")
    start, end = _clone.table_lines(lines, HEADER)
    return "\n".join([*lines[:start], *table(), *lines[end:]])


def main(argv: list[str]) -> int:
    return _clone.refresh(DOC, rebuilt, "the rule catalogue", "--check" in argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
