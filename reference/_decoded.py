"""The neutral decoded form shared by the golden vectors and the testee protocol.

``{"agent_name", "metadata_endpoint", "agent_meta_b64", "publisher_step", "tensors": [...]}``
with ``null`` for an absent optional member, and only the members the given spec
version knows (``digest`` from 1.1.0, ``publisher_step`` from 1.2.0).
"""

from __future__ import annotations

import base64
from typing import Any

from refitwire._errors import InvalidBlob
from refitwire._models import PublishedTensor, RendezvousPayload, as_model
from refitwire._spec import LATEST, knows
from refitwire._validate import canonical_base64


def to_decoded(payload: RendezvousPayload, spec_version: str = LATEST) -> dict[str, Any]:
    with_digest = knows(spec_version, "digest")
    decoded: dict[str, Any] = {
        "agent_name": payload.agent_name,
        "metadata_endpoint": payload.metadata_endpoint,
        "agent_meta_b64": base64.b64encode(payload.agent_metadata).decode("ascii"),
    }
    if knows(spec_version, "publisher_step"):
        decoded["publisher_step"] = payload.publisher_step
    decoded["tensors"] = [
        {
            "name": t.name,
            "dtype": t.dtype,
            "elsize": t.elsize,
            "full_shape": list(t.full_shape),
            "shards": [
                {
                    "agent_name": s.agent_name,
                    "device_id": s.device_id,
                    "addr": s.addr,
                    "shard_offset": list(s.shard_offset),
                    "shape": list(s.shape),
                    **({"digest": s.digest} if with_digest else {}),
                }
                for s in t.shards
            ],
        }
        for t in payload.tensors
    ]
    return decoded


def from_decoded(decoded: dict[str, Any]) -> RendezvousPayload:
    """The payload a writer is asked to write; ``null`` or a missing optional means absent.

    A tensor that is not one raises InvalidBlob naming the rule and its pointer
    (``/tensors/<i>/shards/<j>/addr``), and so does agent metadata that is not canonical
    padded base64 (AGENT_META_BASE64: another spelling would be re-encoded, and the blob would
    not carry the payload); a document that is not a decoded form at all is DECODED_FORM.
    """
    try:
        encoded, entries = decoded["agent_meta_b64"], list(decoded["tensors"])
    except (KeyError, TypeError) as exc:
        raise InvalidBlob.single("DECODED_FORM", "", decoded, f"not a decoded payload: {exc!r}") from None
    if not (isinstance(encoded, str) and canonical_base64(encoded)):
        raise InvalidBlob.single(
            "AGENT_META_BASE64", "/agent_meta_b64", encoded, "not canonical padded base64"
        )
    meta = base64.b64decode(encoded)
    return RendezvousPayload(
        agent_metadata=meta,
        agent_name=decoded.get("agent_name"),  # type: ignore[arg-type]  # checked when written
        metadata_endpoint=decoded.get("metadata_endpoint") or "",
        tensors=[as_model(PublishedTensor, t, ("tensors", i)) for i, t in enumerate(entries)],
        publisher_step=decoded.get("publisher_step"),
    )
