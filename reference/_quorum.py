"""The count-only (quorum) read: a blob's envelope, checked, and its entry count, without the entries."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema_rs
import msgspec
import orjson
from refitwire._spec import blob_limit
from refitwire._validate import is_utf8, top_level_violations
from refitwire._wire import Registry, WireModel

__all__ = ["quorum_envelope"]


class _Envelope:
    """One version's envelope reader, compiled from its model: a Struct that keeps each top-level
    member's raw JSON and skips the table's entries, and a validator for the top level alone."""

    def __init__(self, model: WireModel) -> None:
        self.table = model.table_at()[-1]
        fields: list[Any] = []
        # Fields by position, each renamed to its member: a member's name need not be an identifier.
        self.fields = {m.name: f"m{i}" for i, m in enumerate(model.top.members)}
        for m in model.top.members:  # any other level at the top is a member like the rest, checked here
            kind = list[msgspec.Raw] if m.name == self.table else msgspec.Raw
            field = self.fields[m.name]
            fields.append((field, kind) if m.required else (field, kind, None))  # absent: None
        rename = {field: name for name, field in self.fields.items()}
        self.decoder = msgspec.json.Decoder(
            msgspec.defstruct("Envelope", fields, kw_only=True, rename=rename)
        )
        top = copy.deepcopy(dict(model.resolved))
        top["properties"][self.table] = {"type": "array"}  # the entries are checked when the table is read
        self.validator = jsonschema_rs.validator_for(top)
        self.names = [m.name for m in model.top.members if m.name != self.table]


@functools.cache
def _envelope(model: WireModel) -> _Envelope | None:
    try:
        return _Envelope(model)  # kept per model (models are immutable)
    except ValueError:  # msgspec renames to no name holding a backslash, a quote or a control character
        return None  # then this model has no fast path: every blob takes the full read


def quorum_envelope(blob: Any, version: str, registry: Registry) -> tuple[dict[str, Any], int] | None:
    """The envelope of a blob, checked, and its entry count, without reading the entries.

    Returns ``(members, count)``: the top-level members the version declares (the table
    left out), or ``None`` when this fast path cannot vouch for the blob: the caller then
    runs the full read, which accepts or names the broken rule exactly.

    What it checks: the size limit; no BOM; the bytes are UTF-8; the document is
    well-formed JSON whose top level is an object; every top-level member the version's
    schema declares, against that schema (the wire id, types, bounds, patterns, required
    members), and the top-level rules beyond it (canonical base64, integer literals); that
    the table is an array. What it leaves to the read of the table: every rule about the
    entries themselves, and the reader's limits on numbers in unknown members (SPEC.md
    section 5): it may accept a blob with ``1e400`` in an unknown member that the full
    read refuses.
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        return None
    if len(blob) > blob_limit(registry, version) or blob[:3] == b"\xef\xbb\xbf":
        return None
    data = bytes(blob)
    if not data.isascii() and not is_utf8(data):
        return None
    reader = _envelope(registry.wire_model("rendezvous", version))
    if reader is None:
        return None
    try:
        envelope = reader.decoder.decode(data)
        members = {
            name: orjson.loads(memoryview(raw))
            for name in reader.names
            if (raw := getattr(envelope, reader.fields[name])) is not None
        }
    except (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, RecursionError):
        return None  # the full read names the rule (or accepts what msgspec could not nest into)
    if not reader.validator.is_valid({**members, reader.table: []}):
        return None
    if next(top_level_violations(members, "rendezvous", version, registry), None) is not None:
        return None
    return members, len(getattr(envelope, reader.fields[reader.table]))
