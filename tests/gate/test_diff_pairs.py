"""The fixture pairs: one old/new schema pair per rule, with the verdict each must get."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from _gate_helpers import PAIRS, toy
from refitwire import wire
from refitwire.gate import RULES, Rule, close, compare, diff

CASES = PAIRS["cases"]
#: Rules that are not about two schema documents: tested in test_gate_git.py.
NOT_DIFF_RULES = {
    Rule.RELEASED_FILE_MODIFIED,
    Rule.RELEASED_FILE_REMOVED,
    Rule.VERSION_NOT_NEWER,
    Rule.MAJOR_WITHOUT_NEW_WIRE_ID,
    Rule.MAJOR_VERSION_BREAK,
    Rule.BASELINE_STALE,
    Rule.BASELINE_EXPIRED,
    Rule.MATRIX_DISAGREES,
    Rule.VERSION_STAMP_MISMATCH,
    Rule.RELEASE_ENTRY_MISMATCH,
    Rule.DOCUMENT_UNKNOWN,
    Rule.MULTIPLE_OF_CHANGED,  # needs an old multipleOf: test_multiple_of_neither_divides below
}


def _pair(case: dict[str, Any]) -> tuple[Any, Any]:
    return toy(PAIRS["base"], "old"), toy(case["new"], "new")


def test_every_diff_rule_has_a_pair() -> None:
    covered = {e["rule"] for case in CASES for e in case["expect"]}
    spec_rules = {r for r in RULES if r.startswith("SPEC_")}  # SPEC.md's tables: tests/gate/test_gate_spec.py
    assert set(RULES) - NOT_DIFF_RULES - spec_rules - covered == set()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_rules_and_pointers(case: dict[str, Any]) -> None:
    old, new = _pair(case)
    found = sorted((c.rule, c.pointer) for c in diff(old, new))
    assert found == sorted((e["rule"], e["pointer"]) for e in case["expect"])


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_verdict(case: dict[str, Any]) -> None:
    old, new = _pair(case)
    assert any(c.breaking for c in diff(old, new)) is case["breaking"]


@pytest.mark.parametrize("case", [c for c in CASES if c["witnesses"]], ids=lambda c: c["id"])
def test_witnesses_separate_the_versions(case: dict[str, Any]) -> None:
    old, new = _pair(case)
    findings = {f.change.rule: f for f in compare(old, new, "new", registry=wire.default_registry())}
    for rule_id, directions in case["witnesses"].items():
        finding = findings[rule_id]
        assert sorted(w.direction for w in finding.witnesses) == sorted(directions)
        for witness in finding.witnesses:
            writer, reader = (old, new) if witness.direction == "BACKWARD" else (new, old)
            open_writer = rule_id == Rule.ADDITIONAL_PROPERTIES_CLOSED
            writes = writer.schema if open_writer else close(writer.schema)
            assert jsonschema_rs.validator_for(writes).is_valid(witness.blob), witness
            assert not jsonschema_rs.validator_for(reader.schema).is_valid(witness.blob), witness


def test_no_witness_is_reported_not_invented() -> None:
    case = next(c for c in CASES if c["id"] == Rule.PATTERN_CHANGED)
    old, new = _pair(case)
    [finding] = compare(old, new, "new", registry=wire.default_registry())
    assert finding.no_witness == ("FORWARD",)


def test_compatible_pairs_have_no_witness_search() -> None:
    for case in CASES:
        if not case["breaking"]:
            old, new = _pair(case)
            assert all(
                not f.witnesses and not f.no_witness
                for f in compare(old, new, "new", registry=wire.default_registry())
            )


def test_multiple_of_neither_divides_breaks_both_ways() -> None:
    old_schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "multipleOf": 2, "x-added-in": "1.0.0"}},
    }
    new_schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "multipleOf": 3, "x-added-in": "1.0.0"}},
    }
    [finding] = compare(
        toy(old_schema, "old"), toy(new_schema, "new"), "new", registry=wire.default_registry()
    )
    assert finding.change.rule == Rule.MULTIPLE_OF_CHANGED
    assert sorted(w.direction for w in finding.witnesses) == ["BACKWARD", "FORWARD"]


@pytest.mark.parametrize(
    ("old", "new"),
    [({"additionalProperties": True}, {"additionalProperties": {}}),
     ({"pattern": "^[0-9a-f]+$"}, {"pattern": "^[0-9a-cd-f]+$"}),
     ({"type": ["string", "null"], "enum": ["a", "b", None]}, {"type": ["null", "string"], "enum": [None, "b", "a"]}),
     ({"type": "integer", "minimum": 0}, {"type": "integer", "exclusiveMinimum": -1})],
)  # fmt: skip
def test_equivalent_forms_are_not_breaking(old: dict[str, Any], new: dict[str, Any]) -> None:
    def wrap(node: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"v": {**node, "x-added-in": "1.0.0"}}}

    changes = diff(toy(wrap(old), "old"), toy(wrap(new), "new"))
    assert {c.rule for c in changes} <= {Rule.EQUIVALENT_REWRITE}, changes


@pytest.mark.parametrize(
    ("old", "new"),
    [({"pattern": "^[0-9a-f]+$"}, {"pattern": "^[0-9a-e]+$"}),
     ({"pattern": "^abc$"}, {"pattern": "(?i)^abc$"}),
     ({"pattern": "^a b$"}, {"pattern": "(?x)^a b$"}),
     ({"pattern": "^a{,3}$"}, {"pattern": "^a{0,3}$"}),
     ({"type": "integer", "maximum": 64}, {"type": "integer", "exclusiveMaximum": 64}),
     ({"type": "number", "maximum": 64}, {"type": "number", "exclusiveMaximum": 65})],
)  # fmt: skip
def test_near_miss_forms_are_still_changes(old: dict[str, Any], new: dict[str, Any]) -> None:
    """A rewrite that looks equivalent but admits other values is never reported as equivalent."""

    def wrap(node: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": {"v": {**node, "x-added-in": "1.0.0"}}}

    changes = diff(toy(wrap(old), "old"), toy(wrap(new), "new"))
    assert changes, "a change that admits other values was not reported"
    assert Rule.EQUIVALENT_REWRITE not in {c.rule for c in changes}, changes
