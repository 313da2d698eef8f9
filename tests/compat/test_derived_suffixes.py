"""A derived result's suffix (``ID#rule``, ``ID:bytes``) is written once, in compat/_results.py:
the kinds declare it (``Kind.derived``) and the checks name their results with it, so a suffix
spelt anew in a check cannot drift from what ``--case``, the report and the page parse."""

from __future__ import annotations

import ast
from pathlib import Path

import refitwire.compat
from refitwire.compat._results import BYTES, REASON
from refitwire.compat.runner._kinds import KINDS

COMPAT = Path(refitwire.compat.__file__).resolve().parent


def spelt(tree: ast.Module) -> list[tuple[int, str]]:
    """Text (an f-string's literal parts included) naming a suffix; docstrings say what they are."""
    docs = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and any(suffix in node.value for suffix in (REASON, BYTES))
    ]


#: Where a suffix is text: its definition, and the kinds' ID schemes (``read:<vector id>[#rule]``),
#: which describe each kind's IDs to people (``--case`` help, the docs).
WRITTEN = {"_results.py", "_kinds.py"}


def test_no_compat_module_spells_a_suffix() -> None:
    found = {
        path.relative_to(COMPAT).as_posix(): hits
        for path in sorted(COMPAT.rglob("*.py"))  # its subpackages too
        if path.name not in WRITTEN and (hits := spelt(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_scan_sees_a_spelt_suffix() -> None:
    assert spelt(ast.parse('case = f"{case_id}#rule"')) == [(1, "#rule")]
    assert spelt(ast.parse('"""Names ID:bytes."""')) == []


def test_every_suffix_is_some_kinds() -> None:
    assert {suffix for kind in KINDS for suffix in kind.derived} == {REASON, BYTES}
