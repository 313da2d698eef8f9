"""Protocol 1 between the runner and a testee: messages, and checking them against schema/protocol/."""

from __future__ import annotations

from typing import Any

from refitwire.engine import protocol_validator
from refitwire.wire import pointer

PROTOCOL = 1
ROOT = '""'  # how reports show the root pointer (RFC 6901: "/" is the member named "")


class ProtocolError(Exception):
    """A testee broke the protocol (bad JSON, wrong seq, a reply that fails its schema, silence)."""


def check_message(message: Any, kind: str) -> None:
    """Raise ProtocolError unless ``message`` is a valid ``kind`` ("request" or "response")."""
    validator = protocol_validator(kind)
    if not validator.is_valid(message):
        first = next(iter(validator.iter_errors(message)))
        where = pointer(*first.instance_path)
        raise ProtocolError(f"invalid {kind} at {where or ROOT}: {first.message}")


def start() -> dict[str, Any]:
    return {"cmd": "start", "protocol": PROTOCOL}


def write(seq: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"cmd": "write", "seq": seq, "payload": payload}


def read(seq: int, blob_b64: str) -> dict[str, Any]:
    return {"cmd": "read", "seq": seq, "blob_b64": blob_b64}


def count(seq: int, blob_b64: str) -> dict[str, Any]:
    return {"cmd": "count", "seq": seq, "blob_b64": blob_b64}


def stop() -> dict[str, Any]:
    return {"cmd": "stop"}
