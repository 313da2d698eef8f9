"""The schema documents of a registry (the default one unless given), and validators built from them."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import jsonschema_rs
from refitwire import _wire
from refitwire._wire import Registry, WireModel


def schema(document: str, version: str, registry: Registry | None = None) -> dict[str, Any]:
    """The JSON Schema of ``document`` ("rendezvous" or "shard-table") at spec ``version``.

    A fresh copy each call: what a caller does to it never reaches the reader's rules.
    """
    return copy.deepcopy(cached_schema(document, version, _wire.registry_or_default(registry)))


def cached_schema(document: str, version: str, registry: Registry) -> dict[str, Any]:
    """The loaded schema the reader's own rules use. Never hand it out, never change it."""
    return registry.load_schema(document, version)


def schema_bytes(relative_path: str, registry: Registry) -> bytes:
    """The exact bytes of a file under schema/, e.g. ``rendezvous/1.2.0.json``."""
    return (registry.folder / relative_path).read_bytes()


def released(registry: Registry) -> dict[str, Any]:
    """schema/index.json: every released schema file with its sha256."""
    return registry.index


def fast_validator(document: str, version: str, registry: Registry) -> Any:
    """A compiled jsonschema-rs validator (the reader's hot path)."""
    return model_validator(registry.wire_model(document, version))


@functools.cache
def model_validator(model: WireModel) -> Any:
    """The compiled validator of one model's schema file, kept per model (models are immutable)."""
    return jsonschema_rs.validator_for(dict(model.schema))


PROTOCOL_MESSAGES = ("request", "response", "decoded", "envelope")


@functools.cache
def protocol_schema(message: str) -> dict[str, Any]:
    """The schema of a testee protocol message: "request", "response", "decoded" or "envelope"."""
    if message not in PROTOCOL_MESSAGES:
        raise ValueError(f"unknown protocol message {message!r}")
    loaded: dict[str, Any] = json.loads((_wire.package_root() / "protocol" / f"{message}.json").read_bytes())
    return loaded


@functools.cache
def protocol_validator(message: str) -> Any:
    """A jsonschema-rs validator for a protocol message, resolving its cross-file references."""
    known = jsonschema_rs.Registry(
        [(protocol_schema(m)["$id"], protocol_schema(m)) for m in PROTOCOL_MESSAGES]
    )
    return jsonschema_rs.validator_for(protocol_schema(message), registry=known)
