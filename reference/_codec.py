"""Writing and reading the rendezvous blob and the standalone shard table.

Writers emit exactly what the released upstream writer emits for the same input:
``json.dumps`` with Python's defaults, members in the documented order, absent
optional members omitted (never ``null``). Readers check everything (schema and
semantic rules) before they hand anything back.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import orjson
from refitwire._errors import InvalidBlob, pointer
from refitwire._models import PublishedShard, PublishedTensor, RendezvousPayload, as_model
from refitwire._quorum import quorum_envelope
from refitwire._spec import LATEST, WIRE_SCHEMA_ID, check_version, knows
from refitwire._validate import check, no_gc, read, table_models

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
    """The blob a publisher posts. ``spec_version`` writes what an older writer would have.

    ``tensors`` are models (a mapping with a model's fields is converted, or refused with
    InvalidBlob). What is written is checked first by the reader's own rules; a table a
    reader would refuse raises InvalidBlob and is never written.
    """
    args = (agent_metadata, agent_name, metadata_endpoint, tensors, publisher_step, spec_version)
    with no_gc():
        return _written(_document(*args, checked=False), "rendezvous", spec_version)


def rendezvous_document(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None = None,
    spec_version: str = LATEST,
) -> dict[str, Any]:
    """The checked JSON object behind ``wrap_rendezvous_blob``, before serialization (lists for arrays)."""
    args = (agent_metadata, agent_name, metadata_endpoint, tensors, publisher_step, spec_version)
    return _document(*args, mutable=True)


def _document(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None,
    spec_version: str,
    *,
    mutable: bool = False,
    checked: bool = True,
) -> dict[str, Any]:
    check_version(spec_version)
    if not isinstance(agent_metadata, (bytes, bytearray, memoryview)):
        raise InvalidBlob.single("TYPE", "/agent_meta_b64", agent_metadata, "agent metadata is bytes")
    document: dict[str, Any] = {
        "schema": WIRE_SCHEMA_ID,
        "agent_name": agent_name,
        "metadata_endpoint": metadata_endpoint,
        "agent_meta_b64": base64.b64encode(agent_metadata).decode("ascii"),
        "tensors": _entries(tensors, spec_version, mutable),
    }
    if publisher_step is not None and knows(spec_version, "publisher_step"):
        document["publisher_step"] = publisher_step
    if checked:
        check(document, "rendezvous", spec_version)  # never hand out what a reader would refuse
    return document


def encode_shard_table(tensors: Sequence[PublishedTensor], *, spec_version: str = LATEST) -> bytes:
    """The standalone shard table, checked like a blob (see ``wrap_rendezvous_blob``)."""
    check_version(spec_version)
    with no_gc():
        document = {"schema": WIRE_SCHEMA_ID, "tensors": _entries(tensors, spec_version, False)}
        return _written(document, "shard-table", spec_version)


def _written(document: dict[str, Any], kind: str, version: str) -> bytes:
    """The bytes of ``document`` once the engine has checked it: never write what a reader would refuse."""
    check(document, kind, version)
    return _dump(document)


def _entries(tensors: Sequence[PublishedTensor], version: str, mutable: bool) -> list[dict[str, Any]]:
    """The table as JSON-ready dicts in writer order: each model's fields as they are,
    absent optionals and what ``version`` does not know left out.

    A shard with every member is its model's own field dict, shared, not copied (nothing
    downstream writes to it); arrays stay the models' tuples (jsonschema-rs, the rules,
    orjson and ``json.dumps`` all take a tuple as an array) unless ``mutable`` asks for
    copies with lists.
    """
    with_digest = knows(version, "digest")
    entries = []
    for t, tensor in enumerate(tensors):
        if type(tensor) is not PublishedTensor:  # tested here: most tables are all models
            tensor = as_model(PublishedTensor, tensor, ("tensors", t))
        fields = tensor.__dict__
        shards = []
        for s, shard in enumerate(fields["shards"]):
            if type(shard) is not PublishedShard:
                shard = as_model(PublishedShard, shard, ("tensors", t, "shards", s))
            entry = shard.__dict__
            if mutable or not with_digest or entry["digest"] is None:
                entry = dict(entry)
                if not with_digest or entry["digest"] is None:
                    del entry["digest"]
                if mutable:
                    entry["shard_offset"], entry["shape"] = list(entry["shard_offset"]), list(entry["shape"])
            shards.append(entry)
        entry = dict(fields)
        entry["shards"] = shards
        if mutable:
            entry["full_shape"] = list(entry["full_shape"])
        entries.append(entry)
    return entries


def _dump(document: dict[str, Any]) -> bytes:
    # Python's defaults on purpose: ", " and ": " separators, ASCII escapes, insertion order.
    tensors = document.get("tensors")
    table = _compact_table(tensors) if isinstance(tensors, list) else None
    if table is None:
        return json.dumps(document).encode("ascii")
    # The envelope through json.dumps, the table through orjson, spliced at "tensors".
    keys = list(document)
    at = keys.index("tensors")
    head = json.dumps({k: document[k] for k in keys[:at]})[:-1]
    tail = json.dumps({k: document[k] for k in keys[at + 1 :]})[1:]
    return b"".join((
        head.encode("ascii"), b', "tensors": ' if at else b'"tensors": ', table,
        b", " + tail.encode("ascii") if len(tail) > 1 else b"}",
    ))  # fmt: skip


_UNSAFE = (",", ":", '"', "\\")


def _compact_table(entries: list[Any]) -> bytes | None:
    """The ``tensors`` array in exactly ``json.dumps``'s bytes, or None when that is not sure.

    orjson writes compact JSON (",", ":") in insertion order with the same integer text.
    Widening every "," and ":" gives ``json.dumps``'s default separators exactly when no
    string holds a "," or ":", and the escaping agrees when every string is printable
    ASCII without '"' or a backslash. That is checked on the free-form strings, tensor
    and agent names; ``dtype`` and ``digest`` are pinned to safe characters by the schema,
    which the writer has already checked. Anything else takes the plain ``json.dumps`` path.
    """
    try:
        names = "".join([entry["name"] for entry in entries])
        agents = "".join({shard["agent_name"] for entry in entries for shard in entry["shards"]})
        for joined in (names, agents):
            if not (joined.isascii() and joined.isprintable()) or any(c in joined for c in _UNSAFE):
                return None
        compact = orjson.dumps(entries)
    except (KeyError, TypeError, orjson.JSONEncodeError):
        return None
    return compact.replace(b",", b", ").replace(b":", b": ")


# -- reading -------------------------------------------------------------------------------


def unwrap_rendezvous_blob(
    blob: bytes, *, with_tensors: bool = True, spec_version: str = LATEST, lazy: bool = False
) -> RendezvousPayload:
    """Check and decode one blob as a reader of ``spec_version`` would.

    Raises InvalidBlob (a ValueError) naming the rule and JSON pointer on bad input.

    With ``with_tensors=False`` (the quorum read) the envelope is checked and the entries
    are counted, but the entries are neither decoded nor checked: they are checked when the
    table is read. See ``refitwire._quorum.quorum_envelope`` for exactly what is checked.

    With ``lazy=True`` the whole blob is still checked before this returns, but ``tensors``
    is a read-only sequence (:class:`LazyTable`) that builds each entry's models the first
    time it is read, instead of a list built up front.
    """
    check_version(spec_version)
    if not with_tensors:
        envelope = quorum_envelope(blob, spec_version)
        if envelope is not None:
            meta, agent_name, endpoint, step, count = envelope
            return RendezvousPayload(
                agent_metadata=base64.b64decode(meta),
                agent_name=agent_name,
                metadata_endpoint=endpoint or "",
                tensors=[],
                publisher_step=step,
                tensor_count=count,
            )
    with no_gc():
        got = read(blob, "rendezvous", spec_version, build=with_tensors and not lazy)
    members = got.members
    lazily = with_tensors and lazy
    return RendezvousPayload(
        agent_metadata=base64.b64decode(members["agent_meta_b64"]),
        agent_name=members["agent_name"],
        metadata_endpoint=members.get("metadata_endpoint") or "",
        tensors=LazyTable(got.entries, spec_version, typed=got.typed) if lazily else got.tensors,
        publisher_step=members.get("publisher_step") if knows(spec_version, "publisher_step") else None,
        tensor_count=None if with_tensors else len(got.entries),
    )


def decode_shard_table(blob: bytes, *, spec_version: str = LATEST) -> list[PublishedTensor]:
    """Decode a standalone shard table (a rendezvous blob also decodes as one)."""
    check_version(spec_version)
    with no_gc():
        return read(blob, "shard-table", spec_version, build=True).tensors


class LazyTable(Sequence[PublishedTensor]):
    """A checked table whose models are built on first read (``unwrap(..., lazy=True)``).

    Every rule has already been checked; reading an entry only fills its models. Supports
    what a receiver does with a table: ``len``, indexing, slicing, iteration and ``==``
    against a list, a tuple or another table. It is read-only, and pickles as the list of
    its models.
    """

    __slots__ = ("_built", "_entries", "_typed", "_version")

    def __init__(self, entries: Sequence[Any], version: str, *, typed: bool) -> None:
        self._entries = entries
        self._version = version
        self._typed = typed
        self._built: list[PublishedTensor | None] = [None] * len(entries)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> PublishedTensor: ...
    @overload
    def __getitem__(self, index: slice) -> list[PublishedTensor]: ...
    def __getitem__(self, index: int | slice) -> PublishedTensor | list[PublishedTensor]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        model = self._built[index]
        if model is None:
            model = self._built[index] = table_models(
                [self._entries[index]], self._version, typed=self._typed
            )[0]
        return model

    def __iter__(self) -> Iterator[PublishedTensor]:
        for i in range(len(self._entries)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, LazyTable)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[list[PublishedTensor]], tuple[list[PublishedTensor]]]:
        # Pickled (to a worker process, say) as the plain list of its models.
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"LazyTable({len(self)} entries)"


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
