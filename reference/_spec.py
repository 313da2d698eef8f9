"""Constants of the spec that code needs: versions, the wire id, limits and element sizes.

What the schema files already say is read from them, not restated: the versions and the
wire id from ``schema/index.json``, which member each version added from the latest
schemas' ``x-added-in`` annotations.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any


def version_key(version: str) -> tuple[int, ...]:
    """``"1.10.0"`` -> ``(1, 10, 0)``: versions compare as tuples, never as strings."""
    try:
        return tuple(int(part) for part in version.split("."))
    except (AttributeError, ValueError):
        raise ValueError(f"not a spec version: {version!r}") from None


def _load(relative_path: str) -> Any:
    return json.loads(resources.files("refitwire.schema").joinpath(relative_path).read_bytes())


_INDEX = _load("index.json")

#: The on-wire schema id, unchanged across every 1.x version.
WIRE_SCHEMA_ID: str = _INDEX["wire_id"]

#: The documents the spec defines, by schema folder name.
DOCUMENTS: tuple[str, ...] = tuple(_INDEX["documents"])

#: Spec versions in release order; the last is what writers emit by default.
SPEC_VERSIONS: tuple[str, ...] = tuple(
    sorted(
        {entry["version"] for entries in _INDEX["documents"].values() for entry in entries}, key=version_key
    )
)
LATEST: str = SPEC_VERSIONS[-1]
if _INDEX["latest"] != LATEST:  # pragma: no cover - a broken index is a packaging error
    raise RuntimeError(f"schema/index.json names {_INDEX['latest']} latest, but lists {LATEST}")


def _members(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every member declared anywhere in a schema (top level, ``$defs``), with its subschema."""
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield name, sub
        for sub in node.values():
            yield from _members(sub)
    elif isinstance(node, list):
        for sub in node:
            yield from _members(sub)


def _added_in() -> dict[str, str]:
    added: dict[str, str] = {}
    for document, entries in _INDEX["documents"].items():
        newest = max(entries, key=lambda e: version_key(e["version"]))
        for name, member in _members(_load(newest["path"])):
            version = member.get("x-added-in", SPEC_VERSIONS[0])
            if version == SPEC_VERSIONS[0]:
                continue
            if added.setdefault(name, version) != version:  # pragma: no cover - schema authoring error
                raise RuntimeError(f"{document}: {name!r} is added in both {added[name]} and {version}")
    return dict(sorted(added.items(), key=lambda item: (version_key(item[1]), item[0])))


#: Which optional member each version added, from the schemas' ``x-added-in`` (SPEC.md, "Versions").
ADDED_IN: dict[str, str] = _added_in()

#: Reader limits (SPEC.md, "Limits"). Larger input is rejected, never partly read.
MAX_BLOB_BYTES = 64 * 1024 * 1024
MAX_NESTING_DEPTH = 1024  # the parser's own bound; legitimate blobs nest 6 deep

#: Element sizes of the dtype labels the spec knows. Other labels are accepted as-is
#: (``elsize`` is then authoritative), so a new dtype is an additive change.
DTYPE_SIZES = {
    "bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
    "int16": 2, "uint16": 2, "float16": 2, "half": 2, "bfloat16": 2,
    "int32": 4, "uint32": 4, "float32": 4, "float": 4, "complex32": 4,
    "int64": 8, "uint64": 8, "float64": 8, "double": 8, "long": 8, "complex64": 8,
    "complex128": 16,
}  # fmt: skip


def knows(version: str, member: str) -> bool:
    """Whether a reader or writer of ``version`` knows an optional ``member``."""
    return version_key(version) >= version_key(ADDED_IN[member])


def check_version(version: str) -> str:
    if version not in SPEC_VERSIONS:
        raise ValueError(f"unknown spec version {version!r} (known: {', '.join(SPEC_VERSIONS)})")
    return version
