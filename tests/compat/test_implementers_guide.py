"""compat/IMPLEMENTERS.md's list of every protocol message and member is written from
schema/protocol/ (tools/build_implementers.py), and `tools/regenerate.py --check` sees it stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from refitwire.compat._protocol import expected, kinds

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool() -> object:
    sys.path.insert(0, str(TOOLS))
    try:
        import build_implementers
    finally:
        sys.path.remove(str(TOOLS))
    return build_implementers


def test_the_guide_lists_the_protocol_as_the_schemas_have_it() -> None:
    done = subprocess.run([sys.executable, str(TOOLS / "build_implementers.py"), "--check"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_required_member_of_every_reply_is_in_the_guide() -> None:
    text = (TOOLS.parent / "compat" / "IMPLEMENTERS.md").read_text(encoding="utf-8")
    for kind in kinds("response"):
        assert f"| {kind.words} |" in text, kind.name
        for member in kind.schema["required"]:
            row = f"| `{member}` | {expected(kind.schema['properties'][member])} |"
            assert row.replace("|", "\\|")[2:-2] in text.replace("|", "\\|"), (kind.name, row)


def test_a_stale_section_is_rebuilt_and_fails_the_check() -> None:
    tool = _tool()
    text = tool.GUIDE.read_text(encoding="utf-8")  # type: ignore[attr-defined]
    assert tool.rebuilt(text) == text  # type: ignore[attr-defined]
    stale = text.replace("| `reason` | a string |", "| `reason` | anything |")
    assert stale != text and tool.rebuilt(stale) == text  # type: ignore[attr-defined]


def test_regenerate_check_runs_the_guide_check() -> None:
    sys.path.insert(0, str(TOOLS))
    try:
        import regenerate
    finally:
        sys.path.remove(str(TOOLS))
    assert ["build_implementers.py", "--check"] in [step for _, step in regenerate.CHECKS]
    assert ["build_implementers.py"] in [step for _, step in regenerate.STEPS]
