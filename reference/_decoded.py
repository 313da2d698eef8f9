"""The neutral decoded form shared by the golden vectors and the testee protocol.

``{"agent_name", "metadata_endpoint", "agent_meta_b64", "publisher_step", "tensors": [...]}``
with ``null`` for an absent optional member, and only the members the given spec
version knows (``digest`` from 1.1.0, ``publisher_step`` from 1.2.0).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import ValidationError
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._models import PublishedTensor, RendezvousPayload
from refitwire._spec import LATEST, knows


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
    """The payload a writer is asked to write; ``null`` or a missing optional means absent."""
    try:
        meta = base64.b64decode(decoded["agent_meta_b64"], validate=True)
        tensors = [PublishedTensor.model_validate(t) for t in decoded["tensors"]]
    except (KeyError, TypeError, binascii.Error) as exc:
        raise InvalidBlob.single("DECODED_FORM", "", decoded, f"not a decoded payload: {exc!r}") from None
    except ValidationError as exc:
        raise InvalidBlob(
            [
                Violation("DECODED_FORM", pointer("tensors", *e["loc"]), e.get("input"), e["msg"])
                for e in exc.errors()
            ]
        ) from None
    return RendezvousPayload(
        agent_metadata=meta,
        agent_name=decoded.get("agent_name"),  # type: ignore[arg-type]  # checked when written
        metadata_endpoint=decoded.get("metadata_endpoint") or "",
        tensors=tensors,
        publisher_step=decoded.get("publisher_step"),
    )
