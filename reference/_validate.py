"""Reading a blob: bytes -> JSON object -> checked against the schema and the semantic rules.

Each check names its rule ID from SPEC.md. The schema does the structural work (through
jsonschema-rs, compiled once); this module adds what JSON Schema cannot say.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import orjson
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._registry import fast_validator, schema
from refitwire._spec import DTYPE_SIZES, MAX_BLOB_BYTES, knows

_U64_LIMIT = 2**64

# Keywords whose failure is named by the keyword itself rather than by the member's rule.
_KEYWORD_RULES = {"required": "REQUIRED", "type": "TYPE"}


def parse(blob: bytes | bytearray | memoryview) -> dict[str, Any]:
    """Decode the bytes of one blob into its top-level object (rules BLOB_SIZE, UTF8, JSON, OBJECT)."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise InvalidBlob.single("TYPE", "", type(blob).__name__, "a blob is bytes")
    if len(blob) > MAX_BLOB_BYTES:
        raise InvalidBlob.single(
            "BLOB_SIZE", "", len(blob), f"blob is larger than the {MAX_BLOB_BYTES}-byte limit"
        )
    data = bytes(blob)
    if data.startswith(b"\xef\xbb\xbf"):
        raise InvalidBlob.single("UTF8", "", data[:3], "a blob must not start with a BOM")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        rule = "JSON" if _is_utf8(data) else "UTF8"
        raise InvalidBlob.single(rule, "", data[max(0, exc.pos - 10) : exc.pos + 10], exc.msg) from None
    if not isinstance(document, dict):
        raise InvalidBlob.single("OBJECT", "", type(document).__name__, "the top level must be a JSON object")
    return document


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def violations(document: Any, kind: str, version: str) -> list[Violation]:
    """Every rule ``document`` breaks as a ``kind`` document of spec ``version``."""
    found = list(_schema_violations(document, kind, version))
    if not found:  # semantic rules assume the structure is sound
        found.extend(_semantic_violations(document, version))
    return found


def check(document: Any, kind: str, version: str) -> None:
    """Raise InvalidBlob unless ``document`` is a valid ``kind`` document of ``version``."""
    if fast_validator(kind, version).is_valid(document):
        found = list(_semantic_violations(document, version))
    else:
        found = list(_schema_violations(document, kind, version))
    if found:
        raise InvalidBlob(found)


def _schema_violations(document: Any, kind: str, version: str) -> Iterator[Violation]:
    root = schema(kind, version)
    found = []
    for error in fast_validator(kind, version).iter_errors(document):
        keyword = str(error.schema_path[-1]) if error.schema_path else ""
        rule = _KEYWORD_RULES.get(keyword) or _rule_along(root, error.schema_path)
        found.append(Violation(rule, pointer(*error.instance_path), error.instance, error.message))
    # A foreign document is reported as such first; the rest in document order.
    yield from sorted(found, key=lambda v: (v.rule != "SCHEMA_ID", v.pointer))


def _rule_along(root: dict[str, Any], schema_path: Any) -> str:
    """The deepest ``x-rule`` annotation on the way to the failing keyword."""
    rule, node = "SCHEMA", root
    for step in schema_path:
        node = node[step] if isinstance(node, dict) else node[int(step)]
        if isinstance(node, dict) and "x-rule" in node:
            rule = node["x-rule"]
    return rule


def _semantic_violations(document: dict[str, Any], version: str) -> Iterator[Violation]:
    encoded = document.get("agent_meta_b64")
    if isinstance(encoded, str) and not _canonical_base64(encoded):
        yield Violation("AGENT_META_BASE64", "/agent_meta_b64", encoded, "pad bits are not zero")
    if knows(version, "publisher_step") and type(document.get("publisher_step")) is float:
        yield _not_integer_literal(document["publisher_step"], "publisher_step")
    for t, tensor in enumerate(document["tensors"]):
        yield from _tensor_violations(tensor, t)


def _canonical_base64(encoded: str) -> bool:
    try:
        return base64.b64encode(base64.b64decode(encoded, validate=True)).decode("ascii") == encoded
    except (binascii.Error, ValueError):
        return False


def _tensor_violations(tensor: dict[str, Any], t: int) -> Iterator[Violation]:
    full_shape, elsize = tensor["full_shape"], tensor["elsize"]
    yield from _integer_literals(tensor, ("elsize",), "tensors", t)
    yield from _integer_literals(tensor, ("full_shape",), "tensors", t)
    label = tensor["dtype"].removeprefix("torch.")
    known = DTYPE_SIZES.get(label)
    if known is not None and known != elsize:
        yield Violation(
            "ELSIZE_DTYPE", pointer("tensors", t, "elsize"), elsize,
            f"{tensor['dtype']} elements are {known} bytes",
        )  # fmt: skip
    for s, shard in enumerate(tensor["shards"]):
        at = ("tensors", t, "shards", s)
        offset, shape = shard["shard_offset"], shard["shape"]
        yield from _integer_literals(shard, ("device_id", "addr", "shard_offset", "shape"), *at)
        if not len(offset) == len(shape) == len(full_shape):
            yield Violation(
                "RANK_AGREEMENT", pointer(*at), [len(offset), len(shape), len(full_shape)],
                f"shard_offset has {len(offset)} dims, shape {len(shape)}, full_shape {len(full_shape)}",
            )  # fmt: skip
            continue
        for d, (start, extent, size) in enumerate(zip(offset, shape, full_shape)):
            if start + extent > size:
                yield Violation(
                    "BOX_IN_BOUNDS", pointer(*at, "shape", d), extent,
                    f"box [{start}, {start + extent}) exceeds full_shape[{d}] = {size}",
                )  # fmt: skip
        nbytes = elsize
        for extent in shape:
            nbytes *= extent
        if shard["addr"] + nbytes > _U64_LIMIT:
            yield Violation(
                "ADDR_SPAN", pointer(*at, "addr"), shard["addr"],
                f"the shard's {nbytes} bytes run past the end of the 64-bit address space",
            )  # fmt: skip


def _integer_literals(obj: dict[str, Any], members: tuple[str, ...], *at: str | int) -> Iterator[Violation]:
    """JSON Schema counts 4096.0 as an integer; the spec does not (rule INTEGER_LITERAL)."""
    for member in members:
        value = obj[member]
        if type(value) is float:
            yield _not_integer_literal(value, *at, member)
        elif type(value) is list:
            for d, item in enumerate(value):
                if type(item) is float:
                    yield _not_integer_literal(item, *at, member, d)


def _not_integer_literal(value: float, *path: str | int) -> Violation:
    return Violation(
        "INTEGER_LITERAL", pointer(*path), value, "integers are written without a fraction or exponent"
    )
