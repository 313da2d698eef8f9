"""Mutation self-test: breaking variants of the real 1.2.0 schemas, each flagged with the right rule.

Every mutant is a proposed 1.3.0; the gate must call it breaking, name the expected rule at
the expected pointer, and back each direction the rule breaks with a verified witness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema_rs
import pytest
from _gate_helpers import real
from refitwire import wire
from refitwire.gate import RULES, Document, Rule, close, compare

Mutation = Callable[[dict[str, Any]], None]


def _shard(s: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = s["$defs"]["shard"]["properties"]
    return props


def _tensor(s: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = s["$defs"]["tensor"]["properties"]
    return props


# (id, document, mutation, rule, pointer, witness directions expected)
MUTANTS: list[tuple[str, str, Mutation, str, str, tuple[str, ...]]] = [
    ("step-required", "rendezvous", lambda s: s["required"].append("publisher_step"),
     Rule.REQUIRED_ADDED, "/required", ("BACKWARD",)),
    ("new-required", "rendezvous",
     lambda s: (s["properties"].__setitem__("rank", {"type": "integer", "x-added-in": "1.3.0"}),
                s["required"].append("rank")),
     Rule.PROPERTY_ADDED_REQUIRED, "/properties/rank", ("BACKWARD",)),
    ("agent-name-removed", "rendezvous",
     lambda s: (s["properties"].pop("agent_name"), s["required"].remove("agent_name")),
     Rule.PROPERTY_REMOVED_REQUIRED, "/properties/agent_name", ("FORWARD",)),
    ("step-removed", "rendezvous", lambda s: s["properties"].pop("publisher_step"),
     Rule.PROPERTY_REMOVED_OPTIONAL, "/properties/publisher_step", ()),
    ("agent-name-optional", "rendezvous", lambda s: s["required"].remove("agent_name"),
     Rule.REQUIRED_REMOVED, "/required", ("FORWARD",)),
    ("addr-string", "rendezvous", lambda s: _shard(s)["addr"].__setitem__("type", "string"),
     Rule.TYPE_CHANGED, "/$defs/shard/properties/addr/type", ("BACKWARD", "FORWARD")),
    ("addr-number", "rendezvous", lambda s: _shard(s)["addr"].__setitem__("type", "number"),
     Rule.TYPE_WIDENED, "/$defs/shard/properties/addr/type", ("FORWARD",)),
    ("digest-not-null", "rendezvous", lambda s: _shard(s)["digest"].__setitem__("type", "string"),
     Rule.NULLABLE_REMOVED, "/$defs/shard/properties/digest/type", ("BACKWARD",)),
    ("agent-name-nullable", "rendezvous",
     lambda s: s["properties"]["agent_name"].__setitem__("type", ["string", "null"]),
     Rule.NULLABLE_ADDED, "/properties/agent_name/type", ("FORWARD",)),
    ("wire-id", "rendezvous",
     lambda s: s["properties"]["schema"].__setitem__("const", "mx.reshard.shard_table.v2"),
     Rule.WIRE_ID_CHANGED, "/properties/schema/const", ("BACKWARD", "FORWARD")),
    ("elsize-max-16", "rendezvous", lambda s: _tensor(s)["elsize"].__setitem__("maximum", 16),
     Rule.NUMERIC_BOUND_TIGHTENED, "/$defs/tensor/properties/elsize/maximum", ("BACKWARD",)),
    ("elsize-max-128", "rendezvous", lambda s: _tensor(s)["elsize"].__setitem__("maximum", 128),
     Rule.NUMERIC_BOUND_LOOSENED, "/$defs/tensor/properties/elsize/maximum", ("FORWARD",)),
    ("device-min-neg", "rendezvous", lambda s: _shard(s)["device_id"].__setitem__("minimum", -1),
     Rule.NUMERIC_BOUND_LOOSENED, "/$defs/shard/properties/device_id/minimum", ("FORWARD",)),
    ("tensors-min-1", "rendezvous", lambda s: s["properties"]["tensors"].__setitem__("minItems", 1),
     Rule.LENGTH_BOUND_TIGHTENED, "/properties/tensors/minItems", ("BACKWARD",)),
    ("name-min-1", "rendezvous", lambda s: _tensor(s)["name"].__setitem__("minLength", 1),
     Rule.LENGTH_BOUND_TIGHTENED, "/$defs/tensor/properties/name/minLength", ("BACKWARD",)),
    ("dtype-torch-only", "rendezvous",
     lambda s: _tensor(s)["dtype"].__setitem__("pattern", "^torch\\.[a-z][a-z0-9_]*$"),
     Rule.PATTERN_CHANGED, "/$defs/tensor/properties/dtype/pattern", ("BACKWARD",)),
    ("digest-any", "rendezvous", lambda s: _shard(s)["digest"].pop("pattern"),
     Rule.PATTERN_REMOVED, "/$defs/shard/properties/digest/pattern", ("FORWARD",)),
    ("shard-closed", "rendezvous",
     lambda s: s["$defs"]["shard"].__setitem__("additionalProperties", False),
     Rule.ADDITIONAL_PROPERTIES_CLOSED, "/$defs/shard/additionalProperties", ("BACKWARD",)),
    ("dtype-enum", "rendezvous", lambda s: _tensor(s)["dtype"].__setitem__("enum", ["torch.bfloat16"]),
     Rule.ENUM_INTRODUCED, "/$defs/tensor/properties/dtype/enum", ("BACKWARD",)),
    ("step-added-in-gone", "rendezvous", lambda s: s["properties"]["publisher_step"].pop("x-added-in"),
     Rule.ADDED_IN_MISSING, "/properties/publisher_step", ()),
    ("digest-restamped", "rendezvous", lambda s: _shard(s)["digest"].__setitem__("x-added-in", "1.0.0"),
     Rule.ADDED_IN_CHANGED, "/$defs/shard/properties/digest/x-added-in", ()),
    ("table-shape-closed", "shard-table",
     lambda s: s["$defs"]["tensor"].__setitem__("additionalProperties", False),
     Rule.ADDITIONAL_PROPERTIES_CLOSED, "/$defs/tensor/additionalProperties", ("BACKWARD",)),
    ("table-tensors-required-gone", "shard-table", lambda s: s["required"].remove("tensors"),
     Rule.REQUIRED_REMOVED, "/required", ("FORWARD",)),
    # keywords about which members an object has, which the gate does not model: a witness
    # still comes from the object's members dropped and added (``_member_edits``)
    ("step-needs-endpoint", "rendezvous",
     lambda s: s.__setitem__("dependentRequired", {"publisher_step": ["metadata_endpoint"]}),
     Rule.UNCLASSIFIED_CHANGE, "/dependentRequired", ("BACKWARD",)),
    ("shard-unknown-integers", "rendezvous",
     lambda s: s["$defs"]["shard"].__setitem__("additionalProperties", {"type": "integer"}),
     Rule.ADDITIONAL_PROPERTIES_CLOSED, "/$defs/shard/additionalProperties", ("BACKWARD",)),
    ("shard-needs-digest", "rendezvous", lambda s: s["$defs"]["shard"].__setitem__("minProperties", 6),
     Rule.LENGTH_BOUND_TIGHTENED, "/$defs/shard/minProperties", ("BACKWARD",)),
]  # fmt: skip


def _mutant(document: str, mutate: Mutation) -> Document:
    schema = real(document, "1.2.0")
    schema["x-spec-version"] = "1.3.0"
    mutate(schema)
    return Document(f"{document}/1.3.0", schema)


#: Mutants whose witness search ends in Hypothesis's last resort and finds nothing in one
#: direction (no blob can show it): sixty whole blobs drawn, half a minute on a loaded two-core
#: machine, so the slow tier's (tests/README.md).
EXHAUSTIVE_SEARCH = ("step-needs-endpoint",)


@pytest.mark.parametrize(
    "mutant",
    [
        pytest.param(m, id=m[0], marks=[pytest.mark.slow] if m[0] in EXHAUSTIVE_SEARCH else [])
        for m in MUTANTS
    ],
)
def test_mutant_is_flagged_with_its_rule_and_witness(mutant: tuple[Any, ...]) -> None:
    _, document, mutate, rule_id, pointer, directions = mutant
    old = Document(f"{document}/1.2.0", real(document, "1.2.0"))
    new = _mutant(document, mutate)
    findings = compare(old, new, "1.3.0", registry=wire.default_registry())
    assert RULES[rule_id].breaking
    [finding] = [f for f in findings if f.change.rule == rule_id and f.change.pointer == pointer]
    assert sorted(w.direction for w in finding.witnesses) == sorted(directions)
    assert sorted(finding.no_witness) == sorted(set(finding.change.directions) - set(directions))
    for witness in finding.witnesses:
        writer, reader = (old, new) if witness.direction == "BACKWARD" else (new, old)
        writes = writer.schema if rule_id == Rule.ADDITIONAL_PROPERTIES_CLOSED else close(writer.schema)
        assert jsonschema_rs.validator_for(writes).is_valid(witness.blob)
        assert not jsonschema_rs.validator_for(reader.schema).is_valid(witness.blob)


#: Mutants that are a plain compatible change seen from an older release, which never had the member.
NEW_TO_THE_CANDIDATE = {
    ("step-removed", "1.0.0"),
    ("step-removed", "1.1.0"),  # 1.3.0 lacks publisher_step, as they do
    ("digest-any", "1.0.0"),
    ("digest-not-null", "1.0.0"),  # digest is an optional addition there
}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_mutant_breaks_against_every_release_that_has_the_member(mutant: tuple[Any, ...]) -> None:
    """Transitive: 1.0.0 and 1.1.0 see the change too, unless it is about a member they never had."""
    name, document, mutate, *_ = mutant
    new = _mutant(document, mutate)
    for against in ("1.0.0", "1.1.0"):
        # Whether a change breaks is the rules' call, made without witnesses: their search (a
        # minute or more where none exists, as for dependentRequired) is the test above's subject.
        findings = compare(
            Document(against, real(document, against)),
            new,
            "1.3.0",
            witnesses=False,
            registry=wire.default_registry(),
        )
        lacks_member = (name, against) in NEW_TO_THE_CANDIDATE
        assert any(f.change.breaking for f in findings) is not lacks_member, (against, findings)


def test_the_unchanged_candidate_passes_against_every_release() -> None:
    for document in ("rendezvous", "shard-table"):
        schema = real(document, "1.2.0")
        schema["x-spec-version"] = "1.3.0"
        for against in ("1.0.0", "1.1.0", "1.2.0"):
            findings = compare(
                Document(against, real(document, against)),
                Document("1.3.0", schema),
                "x",
                registry=wire.default_registry(),
            )
            assert not any(f.change.breaking for f in findings), [f.change for f in findings]
