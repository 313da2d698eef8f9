"""Constants a candidate adds: an optional one at the top and in the tensor, and a required one
in the objects of a new level. An optional constant's presence is what it says, so the decoded
form holds it (``null`` when absent) and a writer writes it only when given it; a required one
says nothing, so the decoded form leaves it out and a writer writes it without being given it
(SPEC.md section 6). With no code edited, both round-trip byte for byte.

In-process, like ``test_new_level.py``: the candidate registry is passed explicitly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _gate_helpers import candidate_registry
from refitwire import from_decoded, to_decoded, unwrap_rendezvous_blob, wrap_rendezvous_blob
from refitwire._errors import InvalidBlob
from refitwire.compat.cases._built_cases import refusal_cases
from refitwire.wire import Registry, decoded_members

FLAVOR = {"description": "The wire flavour.", "type": "string", "const": "mx-v2", "x-added-in": "1.3.0"}
PINNED = {"description": "Pinned in host memory.", "type": "boolean", "const": True, "x-added-in": "1.3.0"}
#: a new level whose objects require a constant
EXTENTS = {
    "description": "Row extents.", "type": "array", "x-added-in": "1.3.0",
    "items": {"type": "object", "required": ["kind", "n"], "properties": {
        "kind": {"const": "row"}, "n": {"type": "integer", "minimum": 0, "maximum": 9}}},
}  # fmt: skip
TENSOR = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [4],
          "shards": [{"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [4]}]}  # fmt: skip


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    def edit(document: str, schema: dict[str, Any]) -> None:
        schema["$defs"]["tensor"]["properties"]["pinned"] = PINNED
        if document == "rendezvous":
            schema["properties"].update(flavor=FLAVOR, extents=EXTENTS)

    return candidate_registry(tmp_path_factory.mktemp("constants"), edit)


def _written(registry: Registry, decoded: dict[str, Any]) -> bytes:
    payload = from_decoded(decoded, registry)
    return wrap_rendezvous_blob(*payload[:4], payload.publisher_step, spec_version="1.3.0", registry=registry,
                                **payload.optional_members)  # fmt: skip


def _decoded(registry: Registry, **members: Any) -> dict[str, Any]:
    model = registry.wire_model("rendezvous", "1.3.0")
    tensor = {**{m.name: None for m in decoded_members(model.level("tensors"))}, **TENSOR}
    top = {m.name: None for m in decoded_members(model.top)}
    return {**top, "agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==",
            "tensors": [tensor], **members}  # fmt: skip


def test_the_decoded_form_holds_optional_constants_and_leaves_required_ones_out(registry: Registry) -> None:
    model = registry.wire_model("rendezvous", "1.3.0")
    assert "flavor" in [m.name for m in decoded_members(model.top)]
    assert "schema" not in [m.name for m in decoded_members(model.top)]  # required: it says nothing
    assert "pinned" in [m.name for m in decoded_members(model.level("tensors"))]
    assert [m.name for m in decoded_members(model.level("extents"))] == ["n"]


@pytest.mark.parametrize("present", [True, False])
def test_an_optional_constant_is_written_when_given_and_only_then(registry: Registry, present: bool) -> None:
    given = _decoded(registry, flavor="mx-v2" if present else None)
    given["tensors"][0]["pinned"] = True if present else None
    blob = _written(registry, given)
    document = json.loads(blob)
    assert ("flavor" in document, "pinned" in document["tensors"][0]) == (present, present)
    payload = unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry)
    decoded = to_decoded(payload, "1.3.0", registry)
    assert (decoded["flavor"], decoded["tensors"][0]["pinned"]) == (
        ("mx-v2", True) if present else (None, None)
    )
    assert _written(registry, decoded) == blob  # the round trip keeps presence and absence


def test_a_required_constant_of_a_new_level_is_written_without_being_given(registry: Registry) -> None:
    blob = _written(registry, _decoded(registry, extents=[{"n": 3}]))
    assert json.loads(blob)["extents"] == [{"kind": "row", "n": 3}]
    decoded = to_decoded(
        unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry), "1.3.0", registry
    )
    assert decoded["extents"] == [{"n": 3}] and _written(registry, decoded) == blob


def test_a_level_given_as_another_json_type_is_refused_naming_type(registry: Registry) -> None:
    with pytest.raises(InvalidBlob) as caught:
        _written(registry, _decoded(registry, extents=7))
    assert (caught.value.rule, caught.value.pointer) == ("TYPE", "/extents")


def test_another_value_of_an_optional_constant_is_a_refusal_case(registry: Registry) -> None:
    broken = [c for c in refusal_cases("1.3.0", registry) if c.payload.get("flavor") not in (None, "mx-v2")]
    assert broken and {c.rule for c in broken} <= {"SCHEMA", "TYPE"}
    assert any(c.rule == "SCHEMA" for c in broken)  # a string, not the constant
