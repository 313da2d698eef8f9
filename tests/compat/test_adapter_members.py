"""The upstream adapter hands a declared version's new members to a tree's writer at every level
(``wrap_rendezvous_blob`` for the top, ``PublishedTensor`` and ``PublishedShard`` for a tensor's
and a shard's) and reads them back from whatever the tree's unwrap returns: a NamedTuple with
dataclasses (what the releases return), pydantic models, or the plain dicts ``json.loads`` gives.

In-process: a stand-in ``rendezvous`` module per shape, a tree of a few lines that writes a
member when it is given one and returns what it read, as a pull request adding the three members
would. The members are this test's own (``--member LEVEL:NAME`` takes any name).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import types
from typing import Any, NamedTuple

import pydantic
import pytest
from refitwire import wire
from refitwire.compat.cases._built_cases import base_payload
from refitwire.compat.upstream.adapter_testee import Adapter

#: (level as ``--member`` names it, name): one new member at each level.
MEMBERS = (("", "digest_algorithm"), ("tensors", "storage_layout"), ("tensors.shards", "memory_kind"))
TOP, TENSOR, SHARD = (name for _, name in MEMBERS)


def _payload(with_members: bool) -> dict[str, Any]:
    payload = base_payload("1.2.0", wire.default_registry())
    if with_members:
        payload[TOP] = "blake2b-128"
        for tensor in payload["tensors"]:
            tensor[TENSOR] = "row-major"
            for shard in tensor["shards"]:
                shard[SHARD] = "dram"
    return payload


def _wire_tree(shard: type, tensor: type, read: Any) -> Any:
    """A tree whose writer takes the top member as a parameter and writes each member exactly
    when it is given one; ``read(blob)`` is its unwrap, returning its own shape."""

    def optional(obj: Any, name: str) -> dict[str, Any]:
        value = getattr(obj, name)
        return {} if value is None else {name: value}

    def wrap(meta: bytes, agent: str, endpoint: str, tensors: list[Any], publisher_step: Any = None,
             digest_algorithm: str | None = None) -> bytes:  # fmt: skip
        table = [
            {"name": t.name, "dtype": t.dtype, "elsize": t.elsize, "full_shape": list(t.full_shape),
             **optional(t, TENSOR),
             "shards": [{"agent_name": s.agent_name, "device_id": s.device_id, "addr": s.addr,
                         "shard_offset": list(s.shard_offset), "shape": list(s.shape), **optional(s, "digest"),
                         **optional(s, SHARD)} for s in t.shards]}
            for t in tensors
        ]  # fmt: skip
        payload = {"schema": "mx.reshard.shard_table.v1", "agent_name": agent, "metadata_endpoint": endpoint,
                   "agent_meta_b64": base64.b64encode(meta).decode(), "tensors": table}  # fmt: skip
        if publisher_step is not None:
            payload["publisher_step"] = publisher_step
        if digest_algorithm is not None:
            payload[TOP] = digest_algorithm
        return json.dumps(payload).encode()

    return types.SimpleNamespace(PublishedShard=shard, PublishedTensor=tensor, wrap_rendezvous_blob=wrap,
                                 unwrap_rendezvous_blob=lambda blob: read(json.loads(blob)))  # fmt: skip


@dataclasses.dataclass
class DataShard:
    agent_name: str
    device_id: int
    addr: int
    shard_offset: tuple[int, ...]
    shape: tuple[int, ...]
    digest: str | None = None
    memory_kind: str | None = None


@dataclasses.dataclass
class DataTensor:
    name: str
    dtype: str
    elsize: int
    full_shape: tuple[int, ...]
    shards: list[DataShard]
    storage_layout: str | None = None


class TuplePayload(NamedTuple):
    agent_metadata: bytes
    agent_name: str
    metadata_endpoint: str
    tensors: list[Any]
    publisher_step: int | None = None
    tensor_count: int | None = None
    digest_algorithm: str | None = None


class ModelShard(pydantic.BaseModel):
    agent_name: str
    device_id: int
    addr: int
    shard_offset: tuple[int, ...]
    shape: tuple[int, ...]
    digest: str | None = None
    memory_kind: str | None = None


class ModelTensor(pydantic.BaseModel):
    name: str
    dtype: str
    elsize: int
    full_shape: tuple[int, ...]
    shards: list[ModelShard]
    storage_layout: str | None = None


class ModelPayload(pydantic.BaseModel):
    agent_metadata: bytes
    agent_name: str
    metadata_endpoint: str
    tensors: list[ModelTensor]
    publisher_step: int | None = None
    digest_algorithm: str | None = None


def _as_tuple(doc: dict[str, Any]) -> TuplePayload:
    tensors = [
        DataTensor(t["name"], t["dtype"], t["elsize"], tuple(t["full_shape"]),
                   [DataShard(s["agent_name"], s["device_id"], s["addr"], tuple(s["shard_offset"]), tuple(s["shape"]),
                              s.get("digest"), s.get(SHARD)) for s in t["shards"]], t.get(TENSOR))
        for t in doc["tensors"]
    ]  # fmt: skip
    return TuplePayload(base64.b64decode(doc["agent_meta_b64"]), doc["agent_name"], doc.get("metadata_endpoint", ""),
                        tensors, doc.get("publisher_step"), len(tensors), doc.get(TOP))  # fmt: skip


def _as_model(doc: dict[str, Any]) -> ModelPayload:
    return ModelPayload(agent_metadata=base64.b64decode(doc["agent_meta_b64"]), **{
        k: v for k, v in doc.items() if k not in ("schema", "agent_meta_b64")})  # fmt: skip


def _as_dict(doc: dict[str, Any]) -> dict[str, Any]:
    """The parsed payload itself, with the metadata decoded: a tree that returns plain JSON."""
    return {**doc, "agent_metadata": base64.b64decode(doc["agent_meta_b64"])}


SHAPES = {
    "namedtuple-of-dataclasses": (DataShard, DataTensor, _as_tuple),
    "pydantic-models": (ModelShard, ModelTensor, _as_model),
    "dicts": (DataShard, DataTensor, _as_dict),
}


def _ask(adapter: Adapter, request: dict[str, Any]) -> dict[str, Any]:
    answer, _ = adapter.handle(json.dumps({"seq": 1, **request}).encode())
    assert answer is not None
    return answer


@pytest.mark.parametrize("shape", SHAPES)
def test_declared_members_are_written_at_every_level_and_read_back(shape: str) -> None:
    adapter = Adapter(_wire_tree(*SHAPES[shape]), verify=None, spec_version="1.3.0", members=MEMBERS)
    payload = _payload(with_members=True)
    written = _ask(adapter, {"cmd": "write", "payload": payload})
    assert "blob_b64" in written, written
    document = json.loads(base64.b64decode(written["blob_b64"]))
    assert document[TOP] == payload[TOP]
    assert [t[TENSOR] for t in document["tensors"]] == [t[TENSOR] for t in payload["tensors"]]
    assert [s[SHARD] for t in document["tensors"] for s in t["shards"]] == [
        s[SHARD] for t in payload["tensors"] for s in t["shards"]
    ]
    read = _ask(adapter, {"cmd": "read", "blob_b64": written["blob_b64"]})
    assert read.get("payload") == {k: v for k, v in payload.items() if k != "schema"}, read


@pytest.mark.parametrize("shape", SHAPES)
def test_absent_members_are_not_written_and_read_back_as_null(shape: str) -> None:
    adapter = Adapter(_wire_tree(*SHAPES[shape]), verify=None, spec_version="1.3.0", members=MEMBERS)
    written = _ask(adapter, {"cmd": "write", "payload": _payload(with_members=False)})
    text = base64.b64decode(written["blob_b64"]).decode()
    assert not [name for _, name in MEMBERS if f'"{name}"' in text]
    read = _ask(adapter, {"cmd": "read", "blob_b64": written["blob_b64"]})["payload"]
    assert read[TOP] is None
    assert {t[TENSOR] for t in read["tensors"]} == {None}
    assert {s[SHARD] for t in read["tensors"] for s in t["shards"]} == {None}


def test_a_record_class_that_takes_any_keyword_is_handed_the_declared_members() -> None:
    class KeywordShard(DataShard):
        def __init__(self, agent_name: str, device_id: int, addr: int, shard_offset: tuple[int, ...],
                     shape: tuple[int, ...], digest: str | None = None, **more: Any) -> None:  # fmt: skip
            super().__init__(agent_name, device_id, addr, shard_offset, shape, digest, more.get(SHARD))

    adapter = Adapter(_wire_tree(KeywordShard, DataTensor, _as_tuple), verify=None, members=MEMBERS)
    written = _ask(adapter, {"cmd": "write", "payload": _payload(with_members=True)})
    document = json.loads(base64.b64decode(written["blob_b64"]))
    assert {s[SHARD] for t in document["tensors"] for s in t["shards"]} == {"dram"}
