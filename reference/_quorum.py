"""The count-only (quorum) read: a blob's envelope, checked, and its entry count, without the entries."""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from refitwire._registry import cached_schema
from refitwire._spec import MAX_BLOB_BYTES, WIRE_SCHEMA_ID, knows
from refitwire._validate import canonical_base64, is_utf8


class _Envelope(msgspec.Struct):
    schema: str
    agent_name: str
    agent_meta_b64: str
    tensors: list[msgspec.Raw]  # each entry is skipped (its JSON syntax checked), never built
    metadata_endpoint: str | None = ""


class _StampedEnvelope(_Envelope):
    publisher_step: int | None = None


_ENVELOPES: dict[bool, Any] = {
    False: msgspec.json.Decoder(_Envelope),
    True: msgspec.json.Decoder(_StampedEnvelope),
}


@functools.cache
def _step_bounds(version: str) -> tuple[int, int]:
    """``publisher_step``'s bounds, as the schema of ``version`` gives them (rule STEP_RANGE)."""
    step = cached_schema("rendezvous", version)["properties"]["publisher_step"]
    return step["minimum"], step["maximum"]


def quorum_envelope(blob: Any, version: str) -> tuple[str, str, str | None, int | None, int] | None:
    """The envelope of a blob, checked, and its entry count, without reading the entries.

    Returns ``(agent_meta_b64, agent_name, metadata_endpoint, publisher_step, count)``, or
    ``None`` when this fast path cannot vouch for the blob: the caller then runs the full
    read, which accepts or names the broken rule exactly.

    What it checks: the size limit; no BOM; the bytes are UTF-8; the document is
    well-formed JSON whose top level is an object; ``schema`` is the wire id;
    ``agent_name`` is a string; ``metadata_endpoint`` is a string or null;
    ``agent_meta_b64`` is canonical padded base64; ``publisher_step`` (for a reader that
    knows it) is null or an integer literal within the schema's bounds; ``tensors`` is an array.
    What it leaves to the read of the table: every rule about the entries themselves, and
    the reader's limits on numbers in unknown members (SPEC.md section 5): it may accept a
    blob with ``1e400`` in an unknown member that the full read refuses.
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        return None
    if len(blob) > MAX_BLOB_BYTES or blob[:3] == b"\xef\xbb\xbf":
        return None
    data = bytes(blob)
    if not data.isascii() and not is_utf8(data):
        return None
    stamped = knows(version, "publisher_step")
    try:
        envelope = _ENVELOPES[stamped].decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # the full read names the rule (or accepts what msgspec could not nest into)
    if envelope.schema != WIRE_SCHEMA_ID or not canonical_base64(envelope.agent_meta_b64):
        return None
    step = envelope.publisher_step if stamped else None
    if step is not None:
        low, high = _step_bounds(version)
        if not low <= step <= high:
            return None
    count = len(envelope.tensors)
    return envelope.agent_meta_b64, envelope.agent_name, envelope.metadata_endpoint, step, count
