"""regenerate refuses a member whose keywords state no SPEC rule (issue 45): its vectors would
cite a rule SPEC.md does not have. docs/wire-model.md asks each member for an ``x-rule``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _support import tools_module
from refitwire import schema_document, wire

CANDIDATE = "1.9.0"


@pytest.fixture(scope="module")
def regenerate() -> Iterator[Any]:
    yield from tools_module("regenerate")


def _candidate(members: dict[str, dict[str, Any]], shard: dict[str, dict[str, Any]]) -> wire.Registry:
    schema = schema_document("rendezvous", wire.default_registry().released_versions()[-1])
    schema["x-spec-version"] = CANDIDATE
    schema["properties"].update(members)
    schema["$defs"]["shard"]["properties"].update(shard)
    return wire.default_registry().with_resource("rendezvous", CANDIDATE, schema)


def test_every_member_of_the_released_schemas_states_its_rules(regenerate: Any) -> None:
    assert regenerate.members_without_rule(wire.default_registry()) == []


def test_a_member_with_bounds_and_no_rule_is_named_with_its_keywords(regenerate: Any) -> None:
    ratio = {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "x-added-in": CANDIDATE}
    tags = {"type": "array", "items": {"type": "string", "maxLength": 8}, "x-added-in": CANDIDATE}
    found = regenerate.members_without_rule(_candidate({"ratio": ratio}, {"tags": tags}))
    assert found == [
        f"schema/rendezvous/{CANDIDATE}.json /ratio: exclusiveMinimum, maximum with no x-rule",
        f"schema/rendezvous/{CANDIDATE}.json /tensors/*/shards/*/tags (its items): maxLength with no x-rule",
    ]


def test_a_rule_at_the_member_or_above_it_or_a_type_alone_is_enough(regenerate: Any) -> None:
    ruled = {"type": "integer", "minimum": 0, "x-rule": "STEP_RANGE", "x-added-in": CANDIDATE}
    items = {"type": "array", "items": {"type": "integer", "minimum": 0}, "x-rule": "SIZE_RANGE",
             "x-added-in": CANDIDATE}  # fmt: skip
    typed = {"type": ["string", "null"], "description": "a label", "x-added-in": CANDIDATE}
    found = regenerate.members_without_rule(_candidate({"rank": ruled, "label": typed}, {"dims": items}))
    assert found == []
