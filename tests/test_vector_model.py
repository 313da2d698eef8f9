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
