"""docs/gate.md's rule catalogue is written from the rules themselves (tools/build_rule_catalogue.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from refitwire.gate import RULES

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def test_the_catalogue_in_the_docs_is_the_rules() -> None:
    done = subprocess.run([sys.executable, str(TOOLS / "build_rule_catalogue.py"), "--check"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_changed_rule_makes_the_catalogue_stale() -> None:
    sys.path.insert(0, str(TOOLS))
    try:
        import build_rule_catalogue
    finally:
        sys.path.remove(str(TOOLS))
    text = build_rule_catalogue.DOC.read_text(encoding="utf-8")
    assert build_rule_catalogue.rebuilt(text) == text
    some = next(iter(RULES.values()))
    stale = text.replace(f"| {some.doc} |", "| something else |")
    assert stale != text and build_rule_catalogue.rebuilt(stale) == text
