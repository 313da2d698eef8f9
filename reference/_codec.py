"""Writing and reading the rendezvous blob and the standalone shard table.

Writers emit exactly what the released upstream writer emits for the same input:
``json.dumps`` with Python's defaults, members in the documented order, absent
optional members omitted (never ``null``). Readers check everything (schema and
semantic rules) before they hand anything back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from refitwire._errors import InvalidBlob, pointer
from refitwire._models import PublishedShard, PublishedTensor, RendezvousPayload
from refitwire._spec import LATEST, WIRE_SCHEMA_ID, check_version, knows
from refitwire._validate import check, parse

__all__ = [
    "decode_shard_table",
    "encode_shard_table",
    "merge_shard_tables",
    "rendezvous_document",
    "unwrap_rendezvous_blob",
    "wrap_rendezvous_blob",
]


# -- writing -------------------------------------------------------------------------------


def wrap_rendezvous_blob(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None = None,
    *,
    spec_version: str = LATEST,
) -> bytes:
    """The blob a publisher posts. ``spec_version`` writes what an older writer would have."""
    document = rendezvous_document(
        agent_metadata, agent_name, metadata_endpoint, tensors, publisher_step, spec_version
    )
    return _dump(document)


def rendezvous_document(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None = None,
    spec_version: str = LATEST,
) -> dict[str, Any]:
    """The checked JSON object behind ``wrap_rendezvous_blob``, before serialization."""
    check_version(spec_version)
    if not isinstance(agent_metadata, (bytes, bytearray, memoryview)):
        raise InvalidBlob.single("TYPE", "/agent_meta_b64", agent_metadata, "agent metadata is bytes")
    document: dict[str, Any] = {
        "schema": WIRE_SCHEMA_ID,
        "agent_name": agent_name,
        "metadata_endpoint": metadata_endpoint,
        "agent_meta_b64": base64.b64encode(agent_metadata).decode("ascii"),
        "tensors": _entries(tensors, spec_version),
    }
    if publisher_step is not None and knows(spec_version, "publisher_step"):
        document["publisher_step"] = publisher_step
    check(document, "rendezvous", spec_version)  # never write what a reader would refuse
    return document


def encode_shard_table(tensors: Sequence[PublishedTensor], *, spec_version: str = LATEST) -> bytes:
    check_version(spec_version)
    document = {"schema": WIRE_SCHEMA_ID, "tensors": _entries(tensors, spec_version)}
    check(document, "shard-table", spec_version)
    return _dump(document)


def _dump(document: dict[str, Any]) -> bytes:
    # Python's defaults on purpose: ", " and ": " separators, ASCII escapes, insertion order.
    return json.dumps(document).encode("ascii")


def _entries(tensors: Sequence[PublishedTensor], version: str) -> list[dict[str, Any]]:
    with_digest = knows(version, "digest")
    entries = []
    for tensor in tensors:
        if not isinstance(tensor, PublishedTensor):
            tensor = PublishedTensor.model_validate(tensor)
        shards = []
        for shard in tensor.shards:
            entry: dict[str, Any] = {
                "agent_name": shard.agent_name,
                "device_id": shard.device_id,
                "addr": shard.addr,
                "shard_offset": list(shard.shard_offset),
                "shape": list(shard.shape),
            }
            if with_digest and shard.digest is not None:
                entry["digest"] = shard.digest
            shards.append(entry)
        entries.append({
            "name": tensor.name,
            "dtype": tensor.dtype,
            "elsize": tensor.elsize,
            "full_shape": list(tensor.full_shape),
            "shards": shards,
        })  # fmt: skip
    return entries


# -- reading -------------------------------------------------------------------------------


def unwrap_rendezvous_blob(
    blob: bytes, *, with_tensors: bool = True, spec_version: str = LATEST
) -> RendezvousPayload:
    """Check and decode one blob as a reader of ``spec_version`` would.

    Raises InvalidBlob (a ValueError) naming the rule and JSON pointer on bad input.
    With ``with_tensors=False`` the table is checked and counted but not decoded.
    """
    check_version(spec_version)
    document = parse(blob)
    check(document, "rendezvous", spec_version)
    step = document.get("publisher_step") if knows(spec_version, "publisher_step") else None
    entries = document["tensors"]
    return RendezvousPayload(
        agent_metadata=base64.b64decode(document["agent_meta_b64"]),
        agent_name=document["agent_name"],
        metadata_endpoint=document.get("metadata_endpoint") or "",
        tensors=_tensors(entries, spec_version) if with_tensors else [],
        publisher_step=step,
        tensor_count=None if with_tensors else len(entries),
    )


def decode_shard_table(blob: bytes, *, spec_version: str = LATEST) -> list[PublishedTensor]:
    """Decode a standalone shard table (a rendezvous blob also decodes as one)."""
    check_version(spec_version)
    document = parse(blob)
    check(document, "shard-table", spec_version)
    return _tensors(document["tensors"], spec_version)


def _tensors(entries: list[dict[str, Any]], version: str) -> list[PublishedTensor]:
    # The entries are already checked, so the models are built without re-validation.
    with_digest = knows(version, "digest")
    shard, tensor = PublishedShard.model_construct, PublishedTensor.model_construct
    return [
        tensor(
            name=e["name"],
            dtype=e["dtype"],
            elsize=e["elsize"],
            full_shape=tuple(e["full_shape"]),
            shards=tuple(
                shard(
                    agent_name=s["agent_name"],
                    device_id=s["device_id"],
                    addr=s["addr"],
                    shard_offset=tuple(s["shard_offset"]),
                    shape=tuple(s["shape"]),
                    digest=s.get("digest") if with_digest else None,
                )
                for s in e["shards"]
            ),
        )
        for e in entries
    ]


# -- merging -------------------------------------------------------------------------------


def merge_shard_tables(tables: Iterable[Sequence[PublishedTensor]]) -> list[PublishedTensor]:
    """Merge per-rank tables by tensor name, keeping one shard per distinct box.

    Replicas (the same box from several ranks) collapse to the first one seen, in table
    then shard order, so each region has one owner. Ranks that disagree on a tensor's
    dtype, element size or full shape are an error (rule MERGE_CONSISTENT).
    """
    merged: dict[str, tuple[PublishedTensor, dict[tuple[Any, Any], PublishedShard]]] = {}
    for r, table in enumerate(tables):
        for t, tensor in enumerate(table):
            known = merged.get(tensor.name)
            if known is None:
                merged[tensor.name] = known = (tensor, {})
            elif _geometry(known[0]) != _geometry(tensor):
                raise InvalidBlob.single(
                    "MERGE_CONSISTENT", pointer("tensors", t), tensor.name,
                    f"table {r} publishes {_geometry(tensor)}, an earlier one {_geometry(known[0])}",
                )  # fmt: skip
            for shard in tensor.shards:
                known[1].setdefault((shard.shard_offset, shard.shape), shard)
    return [first.model_copy(update={"shards": tuple(boxes.values())}) for first, boxes in merged.values()]


def _geometry(tensor: PublishedTensor) -> tuple[str, int, tuple[int, ...]]:
    return (tensor.dtype.removeprefix("torch."), tensor.elsize, tuple(tensor.full_shape))
