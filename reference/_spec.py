"""Constants of the spec that code needs: versions, the wire id, limits and element sizes."""

from __future__ import annotations

WIRE_SCHEMA_ID = "mx.reshard.shard_table.v1"

#: Spec versions in release order; the last is what writers emit by default.
SPEC_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")
LATEST = SPEC_VERSIONS[-1]

#: The documents the spec defines, by schema folder name.
DOCUMENTS = ("rendezvous", "shard-table")

#: Which optional member each version added (SPEC.md, "Versions").
ADDED_IN = {"digest": "1.1.0", "publisher_step": "1.2.0"}

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


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def knows(version: str, member: str) -> bool:
    """Whether a reader or writer of ``version`` knows an optional ``member``."""
    return version_key(version) >= version_key(ADDED_IN[member])


def check_version(version: str) -> str:
    if version not in SPEC_VERSIONS:
        raise ValueError(f"unknown spec version {version!r} (known: {', '.join(SPEC_VERSIONS)})")
    return version
