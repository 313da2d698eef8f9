"""Writing and reading the rendezvous blob and the standalone shard table.

Writers emit exactly what the released upstream writer emits for the same input:
``json.dumps`` with Python's defaults, members in the documented order, absent
optional members omitted (never ``null``). Readers check everything (schema and
semantic rules) before they hand anything back.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from refitwire._dumps import dumps
from refitwire._errors import InvalidBlob
from refitwire._lazy_table import LazyTable
from refitwire._models import RendezvousPayload, as_model, table_levels
from refitwire._nested import with_written_levels
from refitwire._quorum import quorum_envelope
from refitwire._spec import resolved
from refitwire._table import table_shape
from refitwire._validate import check, no_gc, read

if TYPE_CHECKING:
    from refitwire._models import PublishedShard, PublishedTensor
from refitwire._wire import NO_CONST, Registry, pointer

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
    spec_version: str | None = None,
    registry: Registry | None = None,
    **members: Any,
) -> bytes:
    """The blob a publisher posts. ``spec_version`` writes what an older writer would have.

    ``tensors`` are models (a mapping with a model's fields is converted, or refused with
    InvalidBlob). ``members``: other optional top-level members by name (those a later
    schema added); like ``publisher_step``, one the version does not declare is left out,
    and ``None`` is absent. What is written is checked first by the reader's own rules; a
    table a reader would refuse raises InvalidBlob and is never written. ``registry``: where
    ``spec_version`` is read (default: the default registry; a candidate's is its own).
    """
    spec_version, registry = resolved(spec_version, registry)
    args = (agent_metadata, agent_name, metadata_endpoint, tensors, publisher_step, spec_version)
    with no_gc():
        document = _document(*args, members, checked=False, registry=registry)
        return _written(document, "rendezvous", spec_version, registry)


def rendezvous_document(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None = None,
    spec_version: str | None = None,
    *,
    registry: Registry,
    **members: Any,
) -> dict[str, Any]:
    """The checked JSON object behind ``wrap_rendezvous_blob``, before serialization (lists for arrays)."""
    spec_version, registry = resolved(spec_version, registry)
    args = (agent_metadata, agent_name, metadata_endpoint, tensors, publisher_step, spec_version)
    return _document(*args, members, mutable=True, registry=registry)


def _document(
    agent_metadata: bytes,
    agent_name: str,
    metadata_endpoint: str,
    tensors: Sequence[PublishedTensor],
    publisher_step: int | None,
    spec_version: str,
    members: dict[str, Any],
    *,
    mutable: bool = False,
    checked: bool = True,
    registry: Registry,
) -> dict[str, Any]:
    if not isinstance(agent_metadata, (bytes, bytearray, memoryview)):
        raise InvalidBlob.single("TYPE", "/agent_meta_b64", agent_metadata, "agent metadata is bytes")
    unheard = [name for name in members if not any(name in registry.wire_model("rendezvous", v).top
                                                     for v in registry.known_versions())]  # fmt: skip
    if unheard:
        raise TypeError(f"no spec version declares the member(s) {', '.join(map(repr, unheard))}")
    values = {
        **members,
        "agent_name": agent_name,
        "metadata_endpoint": metadata_endpoint,
        "agent_meta_b64": base64.b64encode(agent_metadata).decode("ascii"),
        "publisher_step": publisher_step,
    }
    document: dict[str, Any] = {}
    model = registry.wire_model("rendezvous", spec_version)
    table_level, _ = table_levels(model)
    for member in model.top.members:  # the writer's order
        if not member.in_decoded_form:  # a required constant: written, never given
            document[member.name] = member.const
        elif member.child == table_level:
            document[member.name] = _entries(tensors, spec_version, mutable, registry)
        elif values.get(member.name) is not None:
            document[member.name] = values[member.name]
    # a level at the top a later schema adds: its objects as written (null members are absent)
    with_written_levels(
        document, [(m.name, m.child) for m in model.top.members if m.child not in (None, table_level)], model
    )
    if checked:
        check(document, "rendezvous", spec_version, registry)  # never hand out what a reader would refuse
    return document


def encode_shard_table(
    tensors: Sequence[PublishedTensor], *, spec_version: str | None = None, registry: Registry | None = None
) -> bytes:
    """The standalone shard table, checked like a blob (see ``wrap_rendezvous_blob``)."""
    spec_version, registry = resolved(spec_version, registry)
    with no_gc():
        top = registry.wire_model("shard-table", spec_version).top
        document = {
            m.name: m.const if m.const is not NO_CONST else _entries(tensors, spec_version, False, registry)
            for m in top.members
            if m.required
        }
        return _written(document, "shard-table", spec_version, registry)


def _written(document: dict[str, Any], kind: str, version: str, registry: Registry) -> bytes:
    """The bytes of ``document`` once the engine has checked it: never write what a reader would refuse."""
    check(document, kind, version, registry)
    return dumps(document, registry)


def _entries(
    tensors: Sequence[PublishedTensor], version: str, mutable: bool, registry: Registry
) -> list[dict[str, Any]]:
    """The table as JSON-ready dicts in writer order: each model's fields as they are,
    absent optionals and what ``version`` does not know left out.

    A shard with every member is its model's own field dict, shared, not copied (nothing
    downstream writes to it); arrays stay the models' tuples (jsonschema-rs, the rules,
    orjson and ``json.dumps`` all take a tuple as an array) unless ``mutable`` asks for
    copies with lists.
    """
    shape = table_shape("rendezvous", version, registry)
    classes = shape.classes
    tensor_class, shard_class = classes.tensor, classes.shard
    drop_shard, optional_shard = shape.shard_unknown, shape.shard_known
    drop_tensor, optional_tensor = shape.tensor_unknown, shape.tensor_known
    model = registry.wire_model("rendezvous", version)
    nested_tensor, nested_shard = shape.nested
    # The first optional member is tested inline (most versions have one: this is the hot loop).
    first = optional_shard[0] if optional_shard else None
    more = optional_shard[1:]
    entries = []
    for t, tensor in enumerate(tensors):
        if type(tensor) is not tensor_class:  # tested here: most tables are all models
            tensor = as_model(tensor_class, tensor, ("tensors", t))
        fields = tensor.__dict__
        shards = []
        for s, shard in enumerate(fields["shards"]):
            if type(shard) is not shard_class:
                shard = as_model(shard_class, shard, ("tensors", t, "shards", s))
            entry = shard.__dict__
            if (
                mutable
                or drop_shard
                or (first is not None and entry[first] is None)
                or (more and None in [entry[name] for name in more])
            ):
                entry = _omitted(entry, drop_shard, optional_shard)
                if mutable:
                    entry["shard_offset"], entry["shape"] = list(entry["shard_offset"]), list(entry["shape"])
            if nested_shard:
                entry = with_written_levels(
                    entry if entry is not shard.__dict__ else dict(entry), nested_shard, model
                )
            shards.append(entry)
        entry = (
            _omitted(fields, drop_tensor, optional_tensor) if drop_tensor or optional_tensor else dict(fields)
        )
        entry["shards"] = shards
        if nested_tensor:
            entry = with_written_levels(entry, nested_tensor, model)
        if mutable:
            entry["full_shape"] = list(entry["full_shape"])
        entries.append(entry)
    return entries


def _omitted(fields: dict[str, Any], unknown: tuple[str, ...], optional: tuple[str, ...]) -> dict[str, Any]:
    """A copy of a model's fields without what the version does not know or what is absent."""
    entry = dict(fields)
    for name in unknown:
        del entry[name]
    for name in optional:
        if entry[name] is None:
            del entry[name]
    return entry


# -- reading -------------------------------------------------------------------------------


def unwrap_rendezvous_blob(
    blob: bytes,
    *,
    with_tensors: bool = True,
    spec_version: str | None = None,
    lazy: bool = False,
    registry: Registry | None = None,
) -> RendezvousPayload:
    """Check and decode one blob as a reader of ``spec_version`` would.

    Raises InvalidBlob (a ValueError) naming the rule and JSON pointer on bad input.

    With ``with_tensors=False`` (the quorum read) the envelope is checked and the entries
    are counted, but the entries are neither decoded nor checked: they are checked when the
    table is read. See ``refitwire._quorum.quorum_envelope`` for exactly what is checked.

    With ``lazy=True`` the whole blob is still checked before this returns, but ``tensors``
    is a read-only sequence (:class:`LazyTable`) that builds each entry's models the first
    time it is read, instead of a list built up front.

    ``registry``: where ``spec_version`` is read (default: the default registry; a
    candidate's is its own, whose models carry the candidate's members).
    """
    spec_version, registry = resolved(spec_version, registry)
    if not with_tensors:
        envelope = quorum_envelope(blob, spec_version, registry)
        if envelope is not None:
            return _payload(envelope[0], spec_version, [], envelope[1], registry)
    with no_gc():
        got = read(blob, "rendezvous", spec_version, build=with_tensors and not lazy, registry=registry)
    lazily = with_tensors and lazy
    tensors = (
        LazyTable(got.entries, spec_version, typed=got.typed, registry=registry) if lazily else got.tensors
    )
    return _payload(got.members, spec_version, tensors, None if with_tensors else len(got.entries), registry)


def _payload(
    members: Any,
    version: str,
    tensors: Sequence[PublishedTensor],
    count: int | None,
    registry: Registry,
) -> RendezvousPayload:
    """The payload of a checked blob's top-level ``members``: what ``version`` declares, absent as None."""
    model = registry.wire_model("rendezvous", version)
    top, (table_level, _) = model.top, table_levels(model)
    declared = {m.name: members.get(m.name) for m in top.members if m.child != table_level}
    # the payload's own fields read the first version's required members; a member required
    # later (a new version may add one) is read by name, as an optional one is
    first = registry.released_versions()[0]
    later = {m.name for m in top.members if m.in_decoded_form and (not m.required or m.added_in != first)}
    return RendezvousPayload(
        agent_metadata=base64.b64decode(declared["agent_meta_b64"]),
        agent_name=declared["agent_name"],
        metadata_endpoint=declared.get("metadata_endpoint") or "",  # absent or null reads as ""
        tensors=tensors,
        publisher_step=declared.get("publisher_step"),
        tensor_count=count,
        optional_members={  # plain JSON values, lists and dicts, however the blob was read (typed: structs, tuples)
            name: msgspec.json.decode(msgspec.json.encode(value))
            for name, value in declared.items()
            if value is not None and name not in RendezvousPayload._fields and name in later
        },
        known_members=registry.newest_model().top,
    )


def decode_shard_table(
    blob: bytes, *, spec_version: str | None = None, registry: Registry | None = None
) -> list[PublishedTensor]:
    """Decode a standalone shard table (a rendezvous blob also decodes as one)."""
    spec_version, registry = resolved(spec_version, registry)
    with no_gc():
        return read(blob, "shard-table", spec_version, build=True, registry=registry).tensors


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
