"""Reading a blob: bytes -> JSON object -> checked against the schema and the semantic rules.

Each check names its rule ID from SPEC.md. The schema does the structural work (through
jsonschema-rs, compiled once); this module adds what JSON Schema cannot say.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gc
import math
import operator
from collections.abc import Iterator
from typing import Any

import orjson
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._models import PublishedShard, PublishedTensor
from refitwire._registry import fast_validator, schema
from refitwire._spec import DTYPE_SIZES, MAX_BLOB_BYTES, WIRE_SCHEMA_ID, knows

try:  # optional: only the count-only (quorum) read uses it, and falls back without it
    import msgspec
except ImportError:  # pragma: no cover - exercised where msgspec is absent
    msgspec = None  # type: ignore[assignment]

_U64_LIMIT = 2**64

# Keywords whose failure is named by the keyword itself rather than by the member's rule.
_KEYWORD_RULES = {"required": "REQUIRED", "type": "TYPE"}


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a table's acyclic objects are made.

    Building ~10^5 dicts, lists and models otherwise triggers full collections that
    traverse everything built so far, which costs more than the building itself.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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


def check(document: Any, kind: str, version: str, *, table_clean: bool = False) -> None:
    """Raise InvalidBlob unless ``document`` is a valid ``kind`` document of ``version``.

    ``table_clean``: the caller has already run the table's semantic tests (exactly as
    :func:`table_rules_hold` does) and they held; the schema and top level are still checked.
    """
    checked_table(document, kind, version, build=False, table_clean=table_clean)


def checked_table(
    document: Any, kind: str, version: str, *, build: bool = True, table_clean: bool = False
) -> list[PublishedTensor]:
    """Check ``document`` like :func:`check`, then return its table as models (``[]`` unless ``build``).

    The hot path: one compiled-schema ``is_valid``, then a single pass over the table that
    tests every semantic rule and (when ``build``) fills the models without re-validating
    them. Any doubt in that pass defers to the exact rule-by-rule pass, which names every
    violation; so the errors, their order and their pointers are those of the slow path.
    """
    try:
        valid = fast_validator(kind, version).is_valid(document)
    except ValueError as exc:  # jsonschema-rs bounds its own recursion, below the parser's depth limit
        raise InvalidBlob.single("JSON", "", None, f"nesting too deep to check: {exc}") from None
    if not valid:
        raise InvalidBlob(list(_schema_violations(document, kind, version)))
    clean = _top_level_clean(document, version)
    if clean and table_clean and not build:
        return []
    table = _table_pass(document["tensors"], version, build) if clean else None
    if table is None:
        found = list(_semantic_violations(document, version))
        if found:
            raise InvalidBlob(found)
        table = _slow_build(document["tensors"], version) if build else []  # pragma: no cover
    return table


def _schema_violations(document: Any, kind: str, version: str) -> Iterator[Violation]:
    root = schema(kind, version)
    found = []
    try:
        errors = list(fast_validator(kind, version).iter_errors(document))
    except ValueError as exc:  # see checked_table: too deep for the validator
        errors = []
        found.append(Violation("JSON", "", None, f"nesting too deep to check: {exc}"))
    for error in errors:
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


def _top_level_clean(document: dict[str, Any], version: str) -> bool:
    encoded = document.get("agent_meta_b64")
    if isinstance(encoded, str) and not _canonical_base64(encoded):
        return False
    return not (knows(version, "publisher_step") and type(document.get("publisher_step")) is float)


_SHARD_FIELDS = ("agent_name", "device_id", "addr", "shard_offset", "shape", "digest")
_TENSOR_FIELDS = ("name", "dtype", "elsize", "full_shape", "shards")


def _table_pass(entries: list[Any], version: str, build: bool) -> list[PublishedTensor] | None:
    """Every semantic rule of the table at once; ``None`` as soon as one may be broken.

    Rules: INTEGER_LITERAL (a float anywhere turns the running integer sum into a float),
    ELSIZE_DTYPE, RANK_AGREEMENT, BOX_IN_BOUNDS and ADDR_SPAN, each tested exactly as in
    :func:`_tensor_violations`. The schema has already passed, so every member is there
    and has its JSON type. Models are filled the way ``model_construct`` fills them.
    """
    with_digest = knows(version, "digest")
    new, fill, limit = object.__new__, object.__setattr__, _U64_LIMIT
    le, add, prod = operator.le, operator.add, math.prod
    shard_set, tensor_set = set(_SHARD_FIELDS), set(_TENSOR_FIELDS)
    sized: dict[tuple[str, int], bool] = {}
    total: int | float = 0
    out: list[PublishedTensor] = []
    for entry in entries:
        full, elsize, dtype = entry["full_shape"], entry["elsize"], entry["dtype"]
        fits = sized.get((dtype, elsize))
        if fits is None:
            known = DTYPE_SIZES.get(dtype.removeprefix("torch."))
            fits = sized[(dtype, elsize)] = known is None or known == elsize
        if not fits:
            return None
        rank = len(full)
        total += elsize + sum(full)
        shards = []
        for shard in entry["shards"]:
            offset, shape, addr = shard["shard_offset"], shard["shape"], shard["addr"]
            if len(offset) != rank or len(shape) != rank:
                return None
            if rank == 2:  # most weights: the same tests, unrolled
                (o0, o1), (e0, e1) = offset, shape
                total += shard["device_id"] + addr + o0 + o1 + e0 + e1
                if o0 + e0 > full[0] or o1 + e1 > full[1] or addr + elsize * e0 * e1 > limit:
                    return None
            else:
                total += shard["device_id"] + addr + sum(offset) + sum(shape)
                if not all(map(le, map(add, offset, shape), full)) or addr + elsize * prod(shape) > limit:
                    return None
            if build:
                model = new(PublishedShard)
                fill(model, "__dict__", {
                    "agent_name": shard["agent_name"], "device_id": shard["device_id"], "addr": addr,
                    "shard_offset": tuple(offset), "shape": tuple(shape),
                    "digest": shard.get("digest") if with_digest else None,
                })  # fmt: skip
                fill(model, "__pydantic_fields_set__", shard_set)
                fill(model, "__pydantic_extra__", None)
                fill(model, "__pydantic_private__", None)
                shards.append(model)
        if build:
            tensor = new(PublishedTensor)
            fill(tensor, "__dict__", {
                "name": entry["name"], "dtype": dtype, "elsize": elsize,
                "full_shape": tuple(full), "shards": tuple(shards),
            })  # fmt: skip
            fill(tensor, "__pydantic_fields_set__", tensor_set)
            fill(tensor, "__pydantic_extra__", None)
            fill(tensor, "__pydantic_private__", None)
            out.append(tensor)
    return None if type(total) is float else out


def tensor_model(entry: dict[str, Any], with_digest: bool) -> PublishedTensor:
    """One already-checked entry as a model, filled the way ``_table_pass`` fills them."""
    new, fill = object.__new__, object.__setattr__
    shards = []
    for shard in entry["shards"]:
        model = new(PublishedShard)
        fill(model, "__dict__", {
            "agent_name": shard["agent_name"], "device_id": shard["device_id"], "addr": shard["addr"],
            "shard_offset": tuple(shard["shard_offset"]), "shape": tuple(shard["shape"]),
            "digest": shard.get("digest") if with_digest else None,
        })  # fmt: skip
        fill(model, "__pydantic_fields_set__", set(_SHARD_FIELDS))
        fill(model, "__pydantic_extra__", None)
        fill(model, "__pydantic_private__", None)
        shards.append(model)
    tensor = new(PublishedTensor)
    fill(tensor, "__dict__", {
        "name": entry["name"], "dtype": entry["dtype"], "elsize": entry["elsize"],
        "full_shape": tuple(entry["full_shape"]), "shards": tuple(shards),
    })  # fmt: skip
    fill(tensor, "__pydantic_fields_set__", set(_TENSOR_FIELDS))
    fill(tensor, "__pydantic_extra__", None)
    fill(tensor, "__pydantic_private__", None)
    return tensor


def _slow_build(entries: list[dict[str, Any]], version: str) -> list[PublishedTensor]:
    with_digest = knows(version, "digest")
    return [
        PublishedTensor.model_construct(
            name=e["name"], dtype=e["dtype"], elsize=e["elsize"], full_shape=tuple(e["full_shape"]),
            shards=tuple(
                PublishedShard.model_construct(
                    agent_name=s["agent_name"], device_id=s["device_id"], addr=s["addr"],
                    shard_offset=tuple(s["shard_offset"]), shape=tuple(s["shape"]),
                    digest=s.get("digest") if with_digest else None,
                )
                for s in e["shards"]
            ),
        )
        for e in entries
    ]  # fmt: skip


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
        elif type(value) is list or type(value) is tuple:  # a writer's own document may hold tuples
            for d, item in enumerate(value):
                if type(item) is float:
                    yield _not_integer_literal(item, *at, member, d)


def _not_integer_literal(value: float, *path: str | int) -> Violation:
    return Violation(
        "INTEGER_LITERAL", pointer(*path), value, "integers are written without a fraction or exponent"
    )


# -- the count-only (quorum) read ------------------------------------------------------------


if msgspec is not None:

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

_STEP_MAX = 2**63 - 1


def quorum_envelope(blob: Any, version: str) -> tuple[str, str, str | None, int | None, int] | None:
    """The envelope of a blob, checked, and its entry count, without reading the entries.

    Returns ``(agent_meta_b64, agent_name, metadata_endpoint, publisher_step, count)``, or
    ``None`` when this fast path cannot vouch for the blob (or msgspec is not installed):
    the caller then runs the full read, which accepts or names the broken rule exactly.

    What it checks: the size limit; no BOM; the bytes are UTF-8; the document is
    well-formed JSON whose top level is an object; ``schema`` is the wire id;
    ``agent_name`` is a string; ``metadata_endpoint`` is a string or null;
    ``agent_meta_b64`` is canonical padded base64; ``publisher_step`` (for a reader that
    knows it) is null or an integer literal in [0, 2^63-1]; ``tensors`` is an array.
    What it leaves to the read of the table: every rule about the entries themselves, and
    the reader's limits on numbers in unknown members (SPEC.md section 5): it may accept a
    blob with ``1e400`` in an unknown member that the full read refuses.
    """
    if msgspec is None or not isinstance(blob, (bytes, bytearray, memoryview)):
        return None
    if len(blob) > MAX_BLOB_BYTES or blob[:3] == b"\xef\xbb\xbf":
        return None
    data = bytes(blob)
    if not data.isascii() and not _is_utf8(data):
        return None
    stamped = knows(version, "publisher_step")
    try:
        envelope = _ENVELOPES[stamped].decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # the full read names the rule (or accepts what msgspec could not nest into)
    if envelope.schema != WIRE_SCHEMA_ID or not _canonical_base64(envelope.agent_meta_b64):
        return None
    step = envelope.publisher_step if stamped else None
    if step is not None and not 0 <= step <= _STEP_MAX:
        return None
    count = len(envelope.tensors)
    return envelope.agent_meta_b64, envelope.agent_name, envelope.metadata_endpoint, step, count


def writer_violations(
    document: dict[str, Any], version: str, root: dict[str, Any] | None = None
) -> list[Violation]:
    """What a conforming writer of ``version`` must not emit, beyond an invalid blob:
    ``null`` for an absent optional (WRITE_OMIT_ABSENT) and members it does not know
    (WRITE_KNOWN_MEMBERS). ``document`` must already be a valid blob; ``root`` is the
    version's schema (default: the released one)."""
    root = root or schema("rendezvous", version)
    known = {
        "": set(root["properties"]),
        "tensor": set(root["$defs"]["tensor"]["properties"]),
        "shard": set(root["$defs"]["shard"]["properties"]),
    }
    found = []

    def visit(obj: dict[str, Any], level: str, *at: str | int) -> None:
        for member, value in obj.items():
            if member not in known[level]:
                detail = f"a {version} writer does not know {member!r}"
                found.append(Violation("WRITE_KNOWN_MEMBERS", pointer(*at, member), value, detail))
            elif value is None:
                detail = "an absent optional member is omitted, not null"
                found.append(Violation("WRITE_OMIT_ABSENT", pointer(*at, member), None, detail))

    visit(document, "")
    for t, tensor in enumerate(document["tensors"]):
        visit(tensor, "tensor", "tensors", t)
        for s, shard in enumerate(tensor["shards"]):
            visit(shard, "shard", "tensors", t, "shards", s)
    return found
