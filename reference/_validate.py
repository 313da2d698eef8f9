"""The rule engine: one generator of violations per document kind, and the reads built on it.

:func:`iter_violations` yields every rule a parsed document breaks, each named by its rule
ID from SPEC.md: first what the JSON Schema says (through jsonschema-rs, compiled once),
then, once the structure is sound, the rules JSON Schema cannot say. Everything else is
built on that one generator, as jsonschema builds ``is_valid`` and ``best_match`` on
``iter_errors``:

- :func:`is_valid` and the reader's and writer's own check stop at its first violation;
- :func:`violations` lists them all in document order (:func:`in_document_order`);
- the reader's models are filled by the same pass (:func:`checked_table`), so there is
  one place where a table is walked, checked and turned into models.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gc
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import orjson
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._models import PublishedShard, PublishedTensor
from refitwire._registry import cached_schema, fast_validator
from refitwire._spec import DTYPE_SIZES, MAX_BLOB_BYTES, knows
from refitwire._typed import typed_read

__all__ = [
    "check",
    "checked_table",
    "fast_read",
    "in_document_order",
    "is_valid",
    "iter_violations",
    "parse",
    "read",
    "table_models",
    "violations",
    "writer_violations",
]

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
        rule = "JSON" if is_utf8(data) else "UTF8"
        raise InvalidBlob.single(rule, "", data[max(0, exc.pos - 10) : exc.pos + 10], exc.msg) from None
    if not isinstance(document, dict):
        raise InvalidBlob.single("OBJECT", "", type(document).__name__, "the top level must be a JSON object")
    return document


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- the engine ------------------------------------------------------------------------------


def iter_violations(document: Any, kind: str, version: str) -> Iterator[Violation]:
    """Every rule ``document`` breaks as a ``kind`` document of spec ``version``, lazily.

    The order is the order of evaluation (the schema's, then the table's); sort with
    :func:`in_document_order` for the order the spec reports them in.
    """
    return _violations(document, kind, version, None)


def is_valid(document: Any, kind: str, version: str) -> bool:
    """Whether ``document`` breaks no rule; stops at the first violation."""
    return next(iter_violations(document, kind, version), None) is None


def violations(document: Any, kind: str, version: str) -> list[Violation]:
    """Every rule ``document`` breaks, in document order (see :func:`in_document_order`)."""
    return in_document_order(document, iter_violations(document, kind, version))


def check(document: Any, kind: str, version: str) -> None:
    """Raise InvalidBlob, with every violation in document order, unless ``document`` is valid."""
    checked_table(document, kind, version, build=False)


def checked_table(document: Any, kind: str, version: str, *, build: bool = True) -> list[PublishedTensor]:
    """Check ``document`` like :func:`check`; with ``build``, also return its table as models.

    One pass: the generator that names violations fills the models as it goes, and the
    first violation ends the fast path; only then is the rest of the same generator
    drained, to report everything.
    """
    out: list[PublishedTensor] | None = [] if build else None
    found = _violations(document, kind, version, out)
    first = next(found, None)
    if first is not None:
        raise InvalidBlob(in_document_order(document, [first, *found]))
    return out or []


def table_models(entries: Sequence[Any], version: str, *, typed: bool) -> list[PublishedTensor]:
    """Models of already-checked table entries (as :class:`Read` gives them), filled by the checking pass."""
    out: list[PublishedTensor] = []
    for violation in _table(
        entries, knows(version, "digest"), out, typed
    ):  # pragma: no cover - checked before
        raise InvalidBlob([violation])
    return out


class Read(NamedTuple):
    """One checked blob: its top-level members, its table's entries, their models if built."""

    members: Mapping[str, Any]
    entries: Sequence[Any]
    tensors: list[PublishedTensor]
    typed: bool  # the entries are the fast path's Structs, not parsed dicts


def read(blob: Any, kind: str, version: str, *, build: bool) -> Read:
    """Parse and check one blob: through the compiled schema when it can vouch for the blob
    (:func:`fast_read`), else parsed as JSON and run through the engine, which names every rule.

    Either way the table's rules and the models come from the one pass, :func:`_table`.
    """
    fast = fast_read(blob, kind, version, build=build)
    if fast is not None:
        return fast
    document = parse(blob)
    tensors = checked_table(document, kind, version, build=build)
    return Read(document, document["tensors"], tensors, False)


def fast_read(blob: Any, kind: str, version: str, *, build: bool) -> Read | None:
    """The blob read through the compiled schema (``_typed``) and the table pass, or ``None``
    when that path cannot vouch for it (which says nothing about validity)."""
    typed = typed_read(blob, kind, version)
    if typed is None:
        return None
    out: list[PublishedTensor] | None = [] if build else None
    members = {name: getattr(typed, name) for name in typed.__struct_fields__}
    found = itertools.chain(
        _top_level(members, kind, version), _table(typed.tensors, knows(version, "digest"), out, True)
    )
    if next(found, None) is not None:
        return None
    return Read(members, typed.tensors, out or [], True)


def _violations(
    document: Any, kind: str, version: str, out: list[PublishedTensor] | None
) -> Iterator[Violation]:
    sound = True
    for violation in _schema_violations(document, kind, version):
        sound = False
        yield violation
    if sound:  # the rules below assume every member is there and has its JSON type
        yield from _top_level(document, kind, version)
        yield from _table(document["tensors"], knows(version, "digest"), out)


def _schema_violations(document: Any, kind: str, version: str) -> Iterator[Violation]:
    validator = fast_validator(kind, version)
    try:
        if validator.is_valid(document):
            return
        errors = list(validator.iter_errors(document))
    except ValueError as exc:  # jsonschema-rs bounds its own recursion, below the parser's depth limit
        yield Violation("JSON", "", None, f"nesting too deep to check: {exc}")
        return
    root = cached_schema(kind, version)
    for error in errors:
        keyword = str(error.schema_path[-1]) if error.schema_path else ""
        rule = _KEYWORD_RULES.get(keyword) or _rule_along(root, error.schema_path)
        yield Violation(rule, pointer(*error.instance_path), error.instance, error.message)


def _rule_along(root: dict[str, Any], schema_path: Any) -> str:
    """The deepest ``x-rule`` annotation on the way to the failing keyword."""
    rule, node = "SCHEMA", root
    for step in schema_path:
        node = node[step] if isinstance(node, dict) else node[int(step)]
        if isinstance(node, dict) and "x-rule" in node:
            rule = node["x-rule"]
    return rule


def _top_level(members: Mapping[str, Any], kind: str, version: str) -> Iterator[Violation]:
    known = cached_schema(kind, version)["properties"]  # unknown members are never checked
    encoded = members.get("agent_meta_b64")
    if "agent_meta_b64" in known and isinstance(encoded, str) and not canonical_base64(encoded):
        yield Violation("AGENT_META_BASE64", "/agent_meta_b64", encoded, "pad bits are not zero")
    if "publisher_step" in known and type(members.get("publisher_step")) is float:
        yield _not_integer_literal(members["publisher_step"], "publisher_step")


def canonical_base64(encoded: str) -> bool:
    try:
        return base64.b64encode(base64.b64decode(encoded, validate=True)).decode("ascii") == encoded
    except (binascii.Error, ValueError):
        return False


_SHARD_FIELDS = frozenset(PublishedShard.model_fields)
_TENSOR_FIELDS = frozenset(PublishedTensor.model_fields)


def _slot_setter(name: str) -> Any:
    """The setter of a pydantic model's own slot (``__dict__``, ``__pydantic_extra__``, ...).

    Calling it fills a model's slot exactly as ``model_construct`` does, at half the cost
    of ``object.__setattr__`` with the name (which is looked up again on every call).
    """
    owner = next(k for k in PublishedShard.__mro__ if name in vars(k))
    return vars(owner)[name].__set__


_SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE = map(
    _slot_setter, ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
)


def _table(
    entries: Sequence[Any], with_digest: bool, out: list[PublishedTensor] | None, typed: bool = False
) -> Iterator[Violation]:
    """The rules of section 2.3 and INTEGER_LITERAL over a schema-valid table, entry by entry.

    Every member is there with its JSON type (the schema has passed); JSON Schema counts
    4096.0 as an integer, so each entry's integers are summed as they are read: a float
    anywhere makes the sum a float, and only then is the entry searched for it. With
    ``out``, each entry's models are appended as it is checked, filled the way
    ``model_construct`` fills them (the caller drops them if anything is yielded).
    ``typed``: the entries are the fast path's Structs (``_typed``), read by attribute,
    not parsed dicts; the code is the same.
    """
    new, limit = object.__new__, _U64_LIMIT
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE
    le, add, prod = operator.le, operator.add, math.prod
    shard_set, tensor_set = _SHARD_FIELDS, _TENSOR_FIELDS
    literals = not typed  # the typed decode takes no 4096.0 for an integer: nothing to sum
    get = operator.attrgetter if typed else operator.itemgetter
    tensor_fields = get("full_shape", "elsize", "dtype", "shards", "name")
    shard_fields: Callable[[Any], tuple[Any, ...]] = _dict_shard_fields
    if typed:  # a Struct has the members its version knows; without digest, the sixth is unused
        shard_fields = get("shard_offset", "shape", "addr", "device_id", "agent_name",
                           "digest" if with_digest else "agent_name")  # fmt: skip
    sized: dict[tuple[str, int], int] = {}  # (dtype, elsize) -> the size it should be, 0 if right
    t = -1
    for entry in entries:
        t += 1
        full, elsize, dtype, entry_shards, name = tensor_fields(entry)
        wrong = sized.get((dtype, elsize), -1)
        if wrong < 0:
            known = DTYPE_SIZES.get(dtype.removeprefix("torch."))
            wrong = sized[(dtype, elsize)] = known if known is not None and known != elsize else 0
        if wrong:
            yield Violation(
                "ELSIZE_DTYPE", pointer("tensors", t, "elsize"), elsize, f"{dtype} elements are {wrong} bytes"
            )
        rank = len(full)
        total = elsize + sum(full) if literals else 0
        shards = []
        s = -1
        for shard in entry_shards:
            s += 1
            offset, shape, addr, device_id, agent_name, digest = shard_fields(shard)
            if literals:
                total += device_id + addr + sum(offset) + sum(shape)
            if len(offset) != rank or len(shape) != rank:
                yield Violation(
                    "RANK_AGREEMENT", pointer("tensors", t, "shards", s), [len(offset), len(shape), rank],
                    f"shard_offset has {len(offset)} dims, shape {len(shape)}, full_shape {rank}",
                )  # fmt: skip
                continue
            if rank == 2:  # most weights: the same tests, unrolled
                (o0, o1), (e0, e1) = offset, shape
                if o0 + e0 > full[0] or o1 + e1 > full[1]:
                    yield from _boxes_out_of_bounds(offset, shape, full, t, s)
                if addr + elsize * e0 * e1 > limit:
                    yield _addr_span(addr, elsize * e0 * e1, t, s)
            else:
                if not all(map(le, map(add, offset, shape), full)):
                    yield from _boxes_out_of_bounds(offset, shape, full, t, s)
                if addr + elsize * prod(shape) > limit:
                    yield _addr_span(addr, elsize * prod(shape), t, s)
            if out is not None:
                model = new(PublishedShard)
                set_dict(model, {
                    "agent_name": agent_name, "device_id": device_id, "addr": addr,
                    "shard_offset": offset if typed else tuple(offset), "shape": shape if typed else tuple(shape),
                    "digest": digest if with_digest else None,
                })  # fmt: skip
                set_fields_set(model, shard_set)
                set_extra(model, None)
                set_private(model, None)
                shards.append(model)
        if type(total) is float:
            yield from _integer_literals(entry, t)
        if out is not None:
            tensor = new(PublishedTensor)
            set_dict(tensor, {
                "name": name, "dtype": dtype, "elsize": elsize,
                "full_shape": full if typed else tuple(full), "shards": tuple(shards),
            })  # fmt: skip
            set_fields_set(tensor, tensor_set)
            set_extra(tensor, None)
            set_private(tensor, None)
            out.append(tensor)


def _dict_shard_fields(shard: dict[str, Any]) -> tuple[Any, ...]:
    return (shard["shard_offset"], shard["shape"], shard["addr"], shard["device_id"], shard["agent_name"],
            shard.get("digest"))  # fmt: skip


def _boxes_out_of_bounds(
    offset: Sequence[int], shape: Sequence[int], full: Sequence[int], t: int, s: int
) -> Iterator[Violation]:
    for d, (start, extent, size) in enumerate(zip(offset, shape, full)):
        if start + extent > size:
            yield Violation(
                "BOX_IN_BOUNDS", pointer("tensors", t, "shards", s, "shape", d), extent,
                f"box [{start}, {start + extent}) exceeds full_shape[{d}] = {size}",
            )  # fmt: skip


def _addr_span(addr: int, nbytes: int, t: int, s: int) -> Violation:
    return Violation(
        "ADDR_SPAN", pointer("tensors", t, "shards", s, "addr"), addr,
        f"the shard's {nbytes} bytes run past the end of the 64-bit address space",
    )  # fmt: skip


def _integer_literals(entry: dict[str, Any], t: int) -> Iterator[Violation]:
    """Where an entry writes an integer with a fraction or exponent (rule INTEGER_LITERAL)."""
    for obj, at, members in [
        (entry, ("tensors", t), ("elsize", "full_shape")),
        *[
            (shard, ("tensors", t, "shards", s), ("device_id", "addr", "shard_offset", "shape"))
            for s, shard in enumerate(entry["shards"])
        ],
    ]:
        for member in members:
            value = obj[member]
            if type(value) is float:
                yield _not_integer_literal(value, *at, member)
            elif type(value) is list or type(value) is tuple:  # a writer's own document holds tuples
                for d, item in enumerate(value):
                    if type(item) is float:
                        yield _not_integer_literal(item, *at, member, d)


def _not_integer_literal(value: float, *path: str | int) -> Violation:
    return Violation(
        "INTEGER_LITERAL", pointer(*path), value, "integers are written without a fraction or exponent"
    )


# -- the order violations are reported in ----------------------------------------------------


def in_document_order(document: Any, found: Iterable[Violation]) -> list[Violation]:
    """Violations in the order the spec reports them (SPEC.md, section 2), the first being the headline.

    1. A ``SCHEMA_ID`` violation comes first: a foreign document is reported as such.
    2. Then by the place in the document of the value each violation's pointer names:
       a value comes before the values inside it; array items in index order (so
       ``/tensors/2`` before ``/tensors/10``); an object's members in the order the blob
       writes them (a repeated name counts where it is first written). A pointer to a
       member that is absent (a missing required member is reported at its object) sorts
       after every member present.
    3. Several violations at one value: by rule ID, in ASCII order; the same rule twice
       at one value (two missing members of one object) in the order the schema lists
       the members (its ``required`` array).
    """
    return sorted(found, key=lambda v: (v.rule != "SCHEMA_ID", _position(document, v.pointer), v.rule))


def _position(document: Any, at: str) -> tuple[int, ...]:
    node, place = document, []
    for token in at.split("/")[1:] if at else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            members = list(node)
            place.append(members.index(token) if token in node else len(members))
            node = node.get(token)
        elif isinstance(node, (list, tuple)):
            index = int(token) if token.isdigit() else len(node)
            place.append(index)
            node = node[index] if index < len(node) else None
        else:
            place.append(0)
            node = None
    return tuple(place)


# -- what a writer must not emit beyond an invalid blob ----------------------------------------


def writer_violations(
    document: dict[str, Any], version: str, root: dict[str, Any] | None = None
) -> list[Violation]:
    """What a conforming writer of ``version`` must not emit, beyond an invalid blob:
    ``null`` for an absent optional (WRITE_OMIT_ABSENT) and members it does not know
    (WRITE_KNOWN_MEMBERS). ``document`` must already be a valid blob; ``root`` is the
    version's schema (default: the released one). In document order."""
    root = root or cached_schema("rendezvous", version)
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
    return in_document_order(document, found)
