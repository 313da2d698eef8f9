"""Member shapes a red-team round found the library could not take (each stopped ``import
refitwire``, refused valid blobs, or read them back otherwise), in one candidate: with no code
edited they are read and written as their schemas say.

In-process, like ``test_new_level.py``: the candidate registry is passed explicitly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _gate_helpers import candidate_registry
from refitwire import (
    InvalidBlob,
    from_decoded,
    to_decoded,
    unwrap_rendezvous_blob,
    wrap_rendezvous_blob,
)
from refitwire.wire import Registry

TOP = {
    "anything": {"$ref": "#/$defs/anything"},  # a reference to the schema `true`
    "label": {"$ref": "#/$defs/short", "maxLength": 10},  # both maxLengths apply: 3
    "code": {"type": "string", "pattern": "^(?!x)[a-z]{1,4}$"},  # a lookahead (ECMA-262, not Rust's regex)
    "a-b": {"type": "integer", "minimum": 0, "maximum": 9},  # a name that is no identifier
}
TENSOR = {
    "ratio": {"type": "number"},  # an integer in it stays an integer
    "half": {"type": "integer", "minimum": 0, "maximum": 10.5},  # a fractional bound of an integer
    "subs": {
        "type": "array",
        "items": {"type": "object", "required": ["z"], "properties": {"z": {"const": 1}}},
    },
}
SHARD = {
    "opt": {"type": "array", "items": {"type": ["integer", "null"], "minimum": 0, "maximum": 9}},
    "tp": {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "items": {"type": "integer"},
    },  # items after the first
}
DEFS = {"anything": True, "short": {"type": "string", "maxLength": 3}}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    def edit(document: str, schema: dict[str, Any]) -> None:
        added = {"x-added-in": "1.3.0", "description": "a member of a new shape"}
        schema["$defs"].update(DEFS)
        schema["$defs"]["tensor"]["properties"].update({k: {**v, **added} for k, v in TENSOR.items()})
        schema["$defs"]["shard"]["properties"].update({k: {**v, **added} for k, v in SHARD.items()})
        if document == "rendezvous":
            schema["properties"].update({k: {**v, **added} for k, v in TOP.items()})

    return candidate_registry(tmp_path_factory.mktemp("shapes"), edit)


def _decoded(registry: Registry, **top: Any) -> dict[str, Any]:
    shard = {"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [4], "digest": None,
             "opt": [1, None], "tp": ["s", 1, 2]}  # fmt: skip
    tensor = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [4], "shards": [shard],
              "ratio": 1, "half": 10, "subs": [{}]}  # fmt: skip
    return {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==", "publisher_step": None,
            "tensors": [tensor], "anything": {"x": [1]}, "label": "abc", "code": "ab", "a-b": 3, **top}  # fmt: skip


def _written(registry: Registry, decoded: dict[str, Any]) -> bytes:
    payload = from_decoded(decoded, registry)
    return wrap_rendezvous_blob(*payload[:4], payload.publisher_step, spec_version="1.3.0", registry=registry,
                                **payload.optional_members)  # fmt: skip


def test_each_shape_is_written_and_read_back_as_given(registry: Registry) -> None:
    blob = _written(registry, _decoded(registry))
    written = json.loads(blob)
    assert written["tensors"][0]["subs"] == [{"z": 1}]  # the required constant, written without being given
    for lazy in (False, True):
        decoded = to_decoded(unwrap_rendezvous_blob(blob, spec_version="1.3.0", lazy=lazy, registry=registry),
                             "1.3.0", registry)  # fmt: skip
        tensor = decoded["tensors"][0]
        assert (
            type(tensor["ratio"]) is int and tensor["half"] == 10 and tensor["shards"][0]["opt"] == [1, None]
        )
        assert tensor["shards"][0]["tp"] == ["s", 1, 2]
        assert (decoded["anything"], decoded["label"], decoded["code"], decoded["a-b"]) == (
            {"x": [1]},
            "abc",
            "ab",
            3,
        )
    from refitwire._quorum import quorum_envelope

    assert quorum_envelope(blob, "1.3.0", registry) is not None  # the count-only read's own fast path


@pytest.mark.parametrize(
    ("given", "rule", "at"),
    [
        ({"label": "abcdefghij"}, "SCHEMA", "/label"),  # the target's maxLength 3 holds beside a 10
        ({"code": "xy"}, "SCHEMA", "/code"),  # the lookahead holds
        ({"a-b": 10}, "SCHEMA", "/a-b"),
    ],
)
def test_each_shape_refuses_what_its_schema_refuses(
    registry: Registry, given: dict[str, Any], rule: str, at: str
) -> None:
    with pytest.raises(InvalidBlob) as caught:
        _written(registry, _decoded(registry, **given))
    assert (caught.value.rule, caught.value.pointer) == (rule, at)


@pytest.mark.parametrize(("level", "name"), [("shard", "model_config"), ("tensor", "_private")])
def test_a_member_name_pydantic_keeps_is_refused_naming_it_not_a_traceback(
    tmp_path: Any, level: str, name: str
) -> None:
    """The typed models keep members under their wire names, so a name pydantic keeps for itself
    cannot be a field: the schema folder is refused naming the member and its level."""
    from refitwire._models import classes_of
    from refitwire.wire import SchemaFolderError

    def edit(document: str, schema: dict[str, Any]) -> None:
        member = {"type": "integer", "x-added-in": "1.3.0", "description": "a reserved name"}
        schema["$defs"][level]["properties"][name] = member

    candidate = candidate_registry(tmp_path, edit)
    with pytest.raises(SchemaFolderError, match=f"'{name}': a leading '_' or a name of BaseModel's own"):
        classes_of(candidate)


def test_a_top_level_name_msgspec_cannot_rename_is_read_without_the_count_only_fast_path(
    tmp_path: Any,
) -> None:
    """A name holding a backslash or a quote: the count-only read's Struct cannot be renamed to it
    (msgspec refuses), so every blob of that version takes the full read, which reads it."""

    def edit(document: str, schema: dict[str, Any]) -> None:
        if document == "rendezvous":
            schema["properties"]['a\\b"c'] = {"type": "integer", "x-added-in": "1.3.0", "description": "odd"}

    candidate = candidate_registry(tmp_path, edit)
    blob = _written(candidate, {**_bare(), 'a\\b"c': 4})
    for with_tensors in (True, False):
        read = unwrap_rendezvous_blob(
            blob, spec_version="1.3.0", with_tensors=with_tensors, registry=candidate
        )
        assert (read.optional_members['a\\b"c'], read.entry_count()) == (4, 1)


def _bare() -> dict[str, Any]:
    shard = {
        "agent_name": "a",
        "device_id": 0,
        "addr": 4096,
        "shard_offset": [0],
        "shape": [4],
        "digest": None,
    }
    tensor = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [4], "shards": [shard]}
    return {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==", "publisher_step": None,
            "tensors": [tensor]}  # fmt: skip
