"""The pydantic models and the JSON Schema agree, and every version round-trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _profiles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from refitwire import (
    PublishedShard,
    PublishedTensor,
    RendezvousPayload,
    released_versions,
    to_decoded,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)
from refitwire import (
    schema_document as schema,
)
from refitwire._registry import fast_validator
from refitwire._spec import knows, version_key
from strategies import payloads, tensors

LATEST_SCHEMA = schema("rendezvous", released_versions()[-1])


def subschema(name: str) -> dict[str, Any]:
    """A $defs entry as a standalone schema hypothesis-jsonschema can draw from."""
    defs = LATEST_SCHEMA["$defs"]
    return {**defs[name], "$defs": defs}


def known(instance: dict[str, Any], model: type[Any]) -> dict[str, Any]:
    return {k: v for k, v in instance.items() if k in model.model_fields}


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(from_schema(subschema("shard")))
def test_every_schema_valid_shard_is_a_valid_model(instance: dict[str, Any]) -> None:
    PublishedShard.model_validate(known(instance, PublishedShard))


@settings(
    max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(from_schema(subschema("tensor")))
def test_every_schema_valid_tensor_is_a_valid_model(instance: dict[str, Any]) -> None:
    tensor = known(instance, PublishedTensor)
    tensor["shards"] = [known(s, PublishedShard) for s in tensor["shards"]]
    PublishedTensor.model_validate(tensor)


@given(tensors)
def test_every_model_dumps_to_a_schema_valid_tensor(tensor: PublishedTensor) -> None:
    dumped = json.loads(tensor.model_dump_json(exclude_none=True))
    document = {"schema": LATEST_SCHEMA["properties"]["schema"]["const"], "agent_name": "",
                "agent_meta_b64": "", "tensors": [dumped]}  # fmt: skip
    assert fast_validator("rendezvous", released_versions()[-1], wire.default_registry()).is_valid(document)


@pytest.mark.parametrize(
    ("member", "bad"),
    [("addr", -1), ("addr", 2**64), ("addr", "4096"), ("addr", True), ("device_id", -1),
     ("digest", "ABC"), ("shape", [-1]), ("agent_name", 5)],
)  # fmt: skip
def test_the_model_rejects_what_the_schema_rejects(member: str, bad: Any) -> None:
    shard = {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0], "shape": [1], member: bad}
    document = {
        "schema": "mx.reshard.shard_table.v1",
        "agent_name": "a",
        "agent_meta_b64": "",
        "tensors": [{"name": "t", "dtype": "int8", "elsize": 1, "full_shape": [1], "shards": [shard]}],
    }
    assert not fast_validator("rendezvous", "1.2.0", wire.default_registry()).is_valid(document)
    with pytest.raises(ValueError):
        PublishedShard.model_validate(shard)


def test_the_model_is_stricter_than_json_schema_about_integral_floats() -> None:
    """JSON Schema counts 4096.0 as an integer; the spec (INTEGER_LITERAL) and the model do not."""
    with pytest.raises(ValueError):
        PublishedShard(agent_name="a", device_id=0, addr=4096.0, shard_offset=(), shape=())  # type: ignore[arg-type]


@pytest.mark.parametrize("version", released_versions())
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(payload=payloads)
def test_a_blob_round_trips_at_every_version(version: str, payload: dict[str, Any]) -> None:
    blob = wrap_rendezvous_blob(**payload, spec_version=version)
    read = unwrap_rendezvous_blob(blob, spec_version=version)
    assert read.agent_metadata == payload["agent_metadata"]
    assert read[1:3] == (payload["agent_name"], payload["metadata_endpoint"])
    expected_step = (
        payload["publisher_step"] if knows(wire.default_registry(), version, "publisher_step") else None
    )
    assert read.publisher_step == expected_step
    for got, sent in zip(read.tensors, payload["tensors"], strict=True):
        keep_digest = knows(wire.default_registry(), version, "digest")
        assert got == sent.model_copy(update={"shards": tuple(
            s if keep_digest else s.model_copy(update={"digest": None}) for s in sent.shards
        )})  # fmt: skip


@given(
    payload=payloads, reader=st.sampled_from(released_versions()), writer=st.sampled_from(released_versions())
)
@settings(max_examples=examples(100))
def test_any_reader_reads_any_writer_and_sees_only_what_both_know(
    payload: dict[str, Any], reader: str, writer: str
) -> None:
    blob = wrap_rendezvous_blob(**payload, spec_version=writer)
    both = min(reader, writer, key=version_key)
    step = payload["publisher_step"] if knows(wire.default_registry(), both, "publisher_step") else None
    digests = knows(wire.default_registry(), both, "digest")
    sent = RendezvousPayload(
        payload["agent_metadata"], payload["agent_name"], payload["metadata_endpoint"],
        [t.model_copy(update={"shards": tuple(s if digests else s.model_copy(update={"digest": None}) for s in t.shards)})
         for t in payload["tensors"]],
        step,
    )  # fmt: skip
    assert to_decoded(unwrap_rendezvous_blob(blob, spec_version=reader), reader) == to_decoded(sent, reader)
