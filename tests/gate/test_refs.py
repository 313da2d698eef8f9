"""The gate reads ``$ref`` through the wire's one resolver and keeps schema locations through it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from refitwire import wire
from refitwire.gate import Document, GateError, Rule, compare, diff
from refitwire.wire import References, RefError


def _toy(defs_key: str, ref: str) -> dict[str, Any]:
    """A document whose one member reaches its type through two references (an alias, then ``ref``)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "x-spec-version": "1.0.0",
        "type": "object",
        "properties": {"count": {"$ref": f"#/{defs_key}/alias", "x-added-in": "1.0.0"}},
        defs_key: {
            "alias": {"$ref": ref},
            "real": {"$anchor": "counted", "type": "integer", "minimum": 0, "maximum": 10},
        },
    }


@pytest.mark.parametrize("defs_key", ["$defs", "definitions"])
@pytest.mark.parametrize("how", ["pointer", "anchor"])
def test_a_change_behind_a_chain_of_references_is_placed_where_it_is(defs_key: str, how: str) -> None:
    ref = f"#/{defs_key}/real" if how == "pointer" else "#counted"
    old = _toy(defs_key, ref)
    new = copy.deepcopy(old)
    new["x-spec-version"] = "1.1.0"
    new[defs_key]["real"]["maximum"] = 5
    changes = diff(Document("old", old), Document("new", new))
    assert [(c.rule, c.pointer, c.path) for c in changes] == [
        (Rule.NUMERIC_BOUND_TIGHTENED, f"/{defs_key}/real/maximum", "/count")
    ]
    (finding,) = compare(Document("old", old), Document("new", new), "new", registry=wire.default_registry())
    # an old writer's 6..10 is rejected by the new reader: found by reading through both references
    assert [w.direction for w in finding.witnesses] == ["BACKWARD"]
    assert 5 < finding.witnesses[0].blob["count"] <= 10


def test_a_reference_cycle_is_a_gate_error_naming_it() -> None:
    schema = _toy("$defs", "#/$defs/alias")  # alias -> alias
    with pytest.raises(GateError, match="reference cycle through '#/\\$defs/alias'"):
        diff(Document("old", schema), Document("new", schema))


def test_the_resolver_says_where_a_reference_leads_and_merges_what_is_beside_it() -> None:
    schema = _toy("$defs", "#counted")
    refs = References(schema)
    assert refs.lookup("#counted")[0] == "/$defs/real"
    assert refs.lookup("#/%24defs/real")[0] == "/$defs/real"  # a fragment is percent-decoded first
    node, at = refs.follow(schema["properties"]["count"], "/properties/count")
    assert (at, node["maximum"]) == ("/$defs/real", 10)
    assert refs.deref({"$ref": "#counted", "maximum": 3, "minimum": -4}) == {
        "$anchor": "counted", "type": "integer", "minimum": 0, "maximum": 3,
    }  # fmt: skip
    with pytest.raises(RefError, match="does not resolve"):
        refs.lookup("#/$defs/missing")
    recursive = {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}}
    with pytest.raises(RefError, match="cycle"):
        References(recursive).inline(recursive["$defs"]["node"])
    assert References(recursive).deref({"$ref": "#/$defs/node"})["properties"] == {
        "next": {"$ref": "#/$defs/node"}
    }
