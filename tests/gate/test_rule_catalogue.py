"""docs/gate.md's rule catalogue is written from the rules themselves (tools/build_rule_catalogue.py)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import refitwire.gate
from refitwire.gate import RULES, Rule

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


# -- each rule is one member of Rule, named (never spelt) by the code that emits it -------------

GATE = Path(refitwire.gate.__file__).resolve().parent
#: The rule IDs ever published (reports, baselines, SARIF and docs carry them): a lock, so a renamed or
#: dropped rule fails here. A new rule is added to the catalogue and to this file in the same change.
PUBLISHED = Path(__file__).with_name("published-rule-ids.txt")


def _gate_modules() -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(GATE.glob("*.py"))}


def _emitted(tree: ast.Module) -> set[str]:
    """Members named as ``Rule.X`` anywhere but in a comparison or a set of rules to test against:
    the rules this module puts into a Change (directly, or through a variable it passes on)."""
    tested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Compare, ast.Set)):
            tested.update(id(sub) for sub in ast.walk(node))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Rule"
        and id(node) not in tested
    }


def _spelt(tree: ast.Module) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RULES
    ]


def test_every_rule_is_emitted_by_a_gate_module() -> None:
    emitted: dict[str, set[str]] = {}
    for name, tree in _gate_modules().items():
        if name != "_rules.py":
            for member in _emitted(tree):
                emitted.setdefault(member, set()).add(name)
    assert set(emitted) - set(RULES) == set()  # mypy and the AttributeError guard this too
    assert [r.id for r in Rule if r.id not in emitted] == []


def test_no_module_spells_a_rule_id() -> None:
    """Only the catalogue writes an ID as text; anywhere else (a gate module, or the CLI, compat,
    the library or the tools that read findings) a typo would be a new, undocumented rule."""
    trees = {f"gate/{name}": tree for name, tree in _gate_modules().items() if name != "_rules.py"}
    # Installed (not from a checkout), the gate's folder lies inside refitwire's: it is read above.
    gate = Path(importlib.import_module("refitwire.gate").__file__ or "").resolve().parent
    for package in ("refitwire", "refitwire.compat", "refitwire.cli", "refitwire.refit", "refitwire.bench"):
        folder = Path(importlib.import_module(package).__file__ or "").resolve().parent
        for path in sorted(p for p in folder.rglob("*.py") if not p.resolve().is_relative_to(gate)):
            trees.setdefault(path.as_posix(), ast.parse(path.read_text(encoding="utf-8")))
    for path in sorted(TOOLS.glob("*.py")):
        trees[f"tools/{path.name}"] = ast.parse(path.read_text(encoding="utf-8"))
    spelt = {name: found for name, tree in trees.items() if (found := _spelt(tree))}
    assert spelt == {}


def test_the_catalogue_writes_each_id_once() -> None:
    found = _spelt(_gate_modules()["_rules.py"])
    assert sorted(value for _, value in found) == sorted(RULES)


def test_a_rule_is_its_id() -> None:
    for member in Rule:
        assert member.name == member.id == member == str(member) == f"{member}"
        assert json.loads(json.dumps({"rule": member})) == {"rule": member.id}
        assert RULES[member.id] is member is Rule(member.id)


def test_published_rule_ids_never_change() -> None:
    lines = PUBLISHED.read_text(encoding="utf-8").splitlines()
    published = [line for line in lines if line and not line.startswith("#")]
    assert sorted(set(published) - set(RULES)) == [], "a published rule ID was renamed or removed"
    assert sorted(set(RULES) - set(published)) == [], f"a new rule: add its ID to {PUBLISHED.name}"
