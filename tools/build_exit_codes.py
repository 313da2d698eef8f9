"""Write README.md's table of exit statuses from ``refitwire.cli.EXIT_STATUSES``.

Run: python tools/build_exit_codes.py [--check]. The statuses are stated once, in
``cli/__init__.py`` (``refitwire --help`` shows the same list); the table after
"| exit | meaning |" follows them. ``--check`` writes nothing and exits 1 when the table is
stale (tests/test_cli.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import _clone
from refitwire.cli import EXIT_STATUSES

DOC = Path(__file__).resolve().parent.parent / "README.md"
HEADER = "| exit | meaning |"


def table() -> list[str]:
    return [HEADER, "|---|---|", *(f"| {code} | {text} |" for code, text in EXIT_STATUSES)]


def rebuilt(text: str) -> str:
    """``text`` with the table after HEADER (up to the next blank line) generated anew."""
    lines = text.split("\n")
    start, end = _clone.table_lines(lines, HEADER)
    return "\n".join([*lines[:start], *table(), *lines[end:]])


def main(argv: list[str]) -> int:
    return _clone.refresh(DOC, rebuilt, "the table of exit statuses", "--check" in argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
