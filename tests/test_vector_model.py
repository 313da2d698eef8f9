"""tools/_vector_model.py: the base blob the mechanical vectors vary holds an integer wherever a
member may hold one, so the integer vectors (literal forms, aliases) have an integer to rewrite,
whichever of a member's values its domain lists first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _support import tools_module
from refitwire import wire
from refitwire.wire import Member


@pytest.fixture(scope="module")
def vector_model() -> Iterator[Any]:
    yield from tools_module("_vector_model")


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "string", "maxLength": 4}, {"type": "integer", "minimum": 0, "maximum": 9}]},
        {"if": {"type": "integer"}, "then": {"type": "integer", "maximum": 9}, "else": {"type": "string"}},
    ],
)
def test_a_member_that_may_be_an_integer_is_one_in_the_base_blob(vector_model: Any, schema: Any) -> None:
    member = Member(
        "either", ("tensors", "shards"), False, wire.schema_types(schema), False, None, "1.3.0", schema
    )
    assert () in member.integer_places
    assert type(vector_model.fullest(member)) is int


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_an_integer_is_held_to_the_bounds_of_the_one_branch_that_takes_integers(keyword: str) -> None:
    schema = {
        keyword: [{"type": "string"}, {"type": "integer", "minimum": 0, "maximum": 3}],
        "description": "d",
    }
    assert wire.integer_bounds(schema) == (0, 3)
    both = {keyword: [{"type": "integer", "maximum": 3}, {"type": "integer", "minimum": 9}]}
    assert wire.integer_bounds(both) == (None, None)  # two branches take integers: neither alone


def test_an_item_that_contains_counts_is_not_the_one_a_vector_changes(vector_model: Any) -> None:
    """Changing the item ``contains`` counts would break ``contains`` too: the vectors change the
    first item it does not count, and the base blob holds one (``compat.keywords._composed``)."""
    from refitwire.compat.keywords import domain

    schema = {"type": "array", "items": {"type": "integer"}, "contains": {"const": 5}}
    first = domain(schema)[0]
    assert first[vector_model._free_item(first, schema)] != 5
    assert vector_model._free_item([5, 5], schema) == 2  # none free
    assert vector_model._free_item([5], {"type": "array"}) == 0
