"""The upstream adapter follows a tree's API by name, whatever kind of class it uses: a pull
request that turns ``PublishedShard`` into a NamedTuple or ``RendezvousPayload`` into a dataclass
changes nothing on the wire, and the adapter must not report it as the tree refusing or
rejecting anything. What the adapter cannot use at all is reported as the adapter's, with an
errored answer naming it, never as a rejection of a valid blob.

In-process: a stand-in ``rendezvous`` module whose functions are the reference's, with the
classes of each kind.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import types
from typing import Any, NamedTuple

import pytest
from refitwire import PublishedShard as RefShard
from refitwire import PublishedTensor as RefTensor
from refitwire import RendezvousPayload, unwrap_rendezvous_blob, wire, wrap_rendezvous_blob
from refitwire.compat.cases._built_cases import base_payload
from refitwire.compat.upstream.adapter_testee import Adapter

_NONE = dataclasses.MISSING


def _fields(cls: Any) -> list[tuple[str, Any, Any]]:
    """(name, type, default or _NONE) of each field of one of the reference's own classes: the
    shape of the released API, read from it rather than restated."""
    if hasattr(cls, "model_fields"):
        # an optional member defaults to None; a required one has no default (not is_required(),
        # which the pydantic floor this kit supports answers otherwise for the generated models)
        return [(n, f.annotation, None if f.default is None else _NONE) for n, f in cls.model_fields.items()]
    defaults = cls._field_defaults
    return [(n, cls.__annotations__[n], defaults.get(n, _NONE)) for n in cls._fields[:5]]


def _dataclass(name: str, fields: list[tuple[str, Any, Any]], frozen: bool = False) -> Any:
    spec = [(n, t) if d is _NONE else (n, t, dataclasses.field(default=d)) for n, t, d in fields]
    return dataclasses.make_dataclass(name, spec, frozen=frozen)


def _named_tuple(name: str, fields: list[tuple[str, Any, Any]]) -> Any:
    made: Any = NamedTuple(name, [(n, t) for n, t, _ in fields])  # type: ignore[misc]
    made.__new__.__defaults__ = tuple(d for _, _, d in fields if d is not _NONE) or None
    return made


DataShard = _dataclass("DataShard", _fields(RefShard))
TupleShard = _named_tuple("TupleShard", _fields(RefShard))
DataTensor = _dataclass("DataTensor", _fields(RefTensor))
TuplePayload = _named_tuple("TuplePayload", _fields(RendezvousPayload))
DataPayload = _dataclass("DataPayload", _fields(RendezvousPayload), frozen=True)


def _module(shard: type, payload: type | None) -> Any:
    def wrap(
        meta: bytes, agent: str, endpoint: str, tensors: list[Any], publisher_step: int | None = None
    ) -> bytes:
        table = [RefTensor(**{**vars(t), "shards": [RefShard(**s._asdict() if hasattr(s, "_asdict") else vars(s))
                                                      for s in t.shards]}) for t in tensors]  # fmt: skip
        return wrap_rendezvous_blob(meta, agent, endpoint, table, publisher_step)

    def unwrap(blob: bytes) -> Any:
        read = unwrap_rendezvous_blob(blob)
        return object() if payload is None else payload(*read[:4], read.publisher_step)

    return types.SimpleNamespace(PublishedShard=shard, PublishedTensor=DataTensor, wrap_rendezvous_blob=wrap,
                                 unwrap_rendezvous_blob=unwrap)  # fmt: skip


def _ask(adapter: Adapter, request: dict[str, Any]) -> dict[str, Any]:
    answer, _ = adapter.handle(json.dumps({"seq": 1, **request}).encode())
    assert answer is not None
    return answer


@pytest.mark.parametrize(("shard", "payload"), [(DataShard, TuplePayload), (TupleShard, DataPayload)])
def test_classes_of_another_kind_read_and_write_alike(shard: type, payload: type) -> None:
    adapter = Adapter(_module(shard, payload), verify=None)
    written = _ask(adapter, {"cmd": "write", "payload": base_payload("1.2.0", wire.default_registry())})
    assert "blob_b64" in written, written
    read = _ask(adapter, {"cmd": "read", "blob_b64": written["blob_b64"]})
    assert (
        read.get("payload", {}).get("tensors") == base_payload("1.2.0", wire.default_registry())["tensors"]
    ), read


def test_what_the_adapter_cannot_read_is_its_own_error_not_a_rejection() -> None:
    adapter = Adapter(_module(DataShard, None), verify=None)
    blob = base64.b64encode(wrap_rendezvous_blob(b"m", "a", "h:1", [])).decode()
    answer = _ask(adapter, {"cmd": "read", "blob_b64": blob})
    assert answer.get("errored") and "refitwire's upstream adapter" in answer["message"], answer
    assert not answer.get("rejected")
