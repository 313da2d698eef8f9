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
import functools
import gc
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import orjson
from refitwire import _wire
from refitwire._errors import InvalidBlob, Violation
from refitwire._models import as_model, table_levels
from refitwire._nested import member_literals
from refitwire._registry import model_validator
from refitwire._spec import EMPTY_WHEN_ABSENT, blob_limit, latest
from refitwire._table import TableShape, table_rules, table_shape

if TYPE_CHECKING:
    from refitwire._models import PublishedTensor
from refitwire._typed import typed_read
from refitwire._wire import Registry, WireModel, pointer

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
    "top_level_violations",
    "violations",
    "writer_violations",
]


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


def parse(
    blob: bytes | bytearray | memoryview, version: str | None = None, *, registry: Registry
) -> dict[str, Any]:
    """Decode the bytes of one blob into its top-level object (rules BLOB_SIZE, UTF8, JSON, OBJECT),
    within the size limit of ``version`` (default: the newest released) in ``registry``."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise InvalidBlob.single("TYPE", "", type(blob).__name__, "a blob is bytes")
    limit = blob_limit(registry, version)
    if len(blob) > limit:
        raise InvalidBlob.single("BLOB_SIZE", "", len(blob), f"blob is larger than the {limit}-byte limit")
    data = bytes(blob)
    if data.startswith(b"\xef\xbb\xbf"):
        raise InvalidBlob.single("UTF8", "", data[:3], f"a blob must not start with a BOM, {_where(data, 0)}")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as bad:  # orjson says where no more than "not valid UTF-8"
            at = bad.start
            detail = f"not valid UTF-8 ({bad.reason}), {_where(data, at)}"
            raise InvalidBlob.single("UTF8", "", data[at : at + 8], detail) from None
        at = len(text[: exc.pos].encode("utf-8"))  # orjson counts characters
        raise InvalidBlob.single(
            "JSON", "", data[max(0, at - 10) : at + 10], f"{exc.msg}, {_where(data, at)}"
        ) from None
    if not isinstance(document, dict):
        raise InvalidBlob.single("OBJECT", "", type(document).__name__, "the top level must be a JSON object")
    if _rounding_matters_in(registry, version) and _LONG_INTEGER.search(data):
        # orjson reads an integer past [-2^63, 2^64) as a double, msgspec exactly (READ_EXACT_INTEGERS);
        # the same text, so the same document otherwise. Only asked where the schema has an integer
        # a rounded value would not break (released ones bound every integer inside the range).
        with contextlib.suppress(msgspec.DecodeError):
            document = msgspec.json.decode(data, type=dict)
    return document


#: A number of 19 digits or more: every integer past [-2^63, 2^64) (2^63 has 19).
_LONG_INTEGER = re.compile(rb"[:\[,]\s*-?[0-9]{19}")


@functools.lru_cache(maxsize=64)
def _rounding_matters_in(registry: Registry, version: str | None) -> bool:
    # asked on every parse: kept per registry (immutable) and version, as the blob limit is
    version = version or latest(registry)
    known = [d for d in registry.documents if version in registry.known_versions(d)]
    return any(registry.wire_model(d, version).rounds_integers for d in known)


def _where(data: bytes, at: int) -> str:
    """Byte offset ``at`` of ``data`` as a syntax error names it: the offset (from 0), and the line
    and the column (from 1; a column counts characters, as an editor does) it falls on."""
    start = data.rfind(b"\n", 0, at) + 1
    line, column = data.count(b"\n", 0, at) + 1, len(data[start:at].decode("utf-8", "replace")) + 1
    return f"at byte {at} (line {line}, column {column})"


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- the engine ------------------------------------------------------------------------------


def iter_violations(document: Any, kind: str, version: str, registry: Registry) -> Iterator[Violation]:
    """Every rule ``document`` breaks as a ``kind`` document of spec ``version``, lazily.

    The order is the order of evaluation (the schema's, then the table's); sort with
    :func:`in_document_order` for the order the spec reports them in. ``registry``: where
    ``version`` is read (default: the default registry; a candidate's is its own).
    """
    return _violations(document, kind, version, None, registry)


def is_valid(document: Any, kind: str, version: str, registry: Registry) -> bool:
    """Whether ``document`` breaks no rule; stops at the first violation."""
    return next(iter_violations(document, kind, version, registry), None) is None


def violations(document: Any, kind: str, version: str, registry: Registry | None = None) -> list[Violation]:
    """Every rule ``document`` breaks, in document order (see :func:`in_document_order`)."""
    return in_document_order(
        document, iter_violations(document, kind, version, _wire.registry_or_default(registry))
    )


def check(document: Any, kind: str, version: str, registry: Registry) -> None:
    """Raise InvalidBlob, with every violation in document order, unless ``document`` is valid."""
    checked_table(document, kind, version, build=False, registry=registry)


def checked_table(
    document: Any, kind: str, version: str, *, build: bool = True, registry: Registry
) -> list[PublishedTensor]:
    """Check ``document`` like :func:`check`; with ``build``, also return its table as models.

    One pass: the generator that names violations fills the models as it goes, and the
    first violation ends the fast path; only then is the rest of the same generator
    drained, to report everything.
    """
    out: list[PublishedTensor] | None = [] if build else None
    found = _violations(document, kind, version, out, registry)
    first = next(found, None)
    if first is not None:
        raise InvalidBlob(in_document_order(document, [first, *found]))
    return out or []


def table_models(
    entries: Sequence[Any], version: str, *, typed: bool, registry: Registry
) -> list[PublishedTensor]:
    """Models of already-checked table entries (as :class:`Read` gives them), filled by the checking pass."""
    out: list[PublishedTensor] = []
    for violation in _table_rules(
        entries, table_shape("rendezvous", version, registry), out, typed
    ):  # pragma: no cover - checked before
        raise InvalidBlob([violation])
    return out


def _table_rules(
    entries: Sequence[Any], shape: TableShape, out: list[PublishedTensor] | None, typed: bool = False
) -> Iterator[Violation]:
    """:func:`table_rules`, for a version whose members have the shape those rules read; for one
    that does not (a candidate that retypes a member they read), no rule, and the models filled
    from the members as they are (the schema has checked them)."""
    if shape.ruled:
        yield from table_rules(entries, shape, out, typed)
    elif out is not None:
        classes = shape.classes
        out += [as_model(classes.tensor, entry, ("tensors", t)) for t, entry in enumerate(entries)]


class Read(NamedTuple):
    """One checked blob: its top-level members, its table's entries, their models if built."""

    members: Mapping[str, Any]
    entries: Sequence[Any]
    tensors: list[PublishedTensor]
    typed: bool  # the entries are the fast path's Structs, not parsed dicts


def read(blob: Any, kind: str, version: str, *, build: bool, registry: Registry) -> Read:
    """Parse and check one blob: through the compiled schema when it can vouch for the blob
    (:func:`fast_read`), else parsed as JSON and run through the engine, which names every rule.

    Either way the table's rules and the models come from the one pass, :func:`refitwire._table.table_rules`.
    """
    fast = fast_read(blob, kind, version, build=build, registry=registry)
    if fast is not None:
        return fast
    document = parse(blob, version, registry=registry)
    tensors = checked_table(document, kind, version, build=build, registry=registry)
    return Read(document, document["tensors"], tensors, False)


def fast_read(blob: Any, kind: str, version: str, *, build: bool, registry: Registry) -> Read | None:
    """The blob read through the compiled schema (``_typed``) and the table pass, or ``None``
    when that path cannot vouch for it (which says nothing about validity)."""
    typed = typed_read(blob, kind, version, registry)
    if typed is None:
        return None
    out: list[PublishedTensor] | None = [] if build else None
    members = {name: getattr(typed, name) for name in typed.__struct_fields__}
    found = itertools.chain(
        top_level_violations(members, kind, version, registry),
        _table_rules(typed.tensors, table_shape(kind, version, registry), out, True),
    )
    if next(found, None) is not None:
        return None
    return Read(members, typed.tensors, out or [], True)


def _violations(
    document: Any, kind: str, version: str, out: list[PublishedTensor] | None, registry: Registry
) -> Iterator[Violation]:
    sound = True
    for violation in _schema_violations(document, kind, version, registry):
        sound = False
        yield violation
    if sound:  # the rules below assume every member is there and has its JSON type
        yield from _semantic_violations(document, kind, version, out, registry)


def semantic_violations(
    document: Any, version: str, kind: str = "rendezvous", *, registry: Registry
) -> list[Violation]:
    """The rules beyond the schema (INTEGER_LITERAL, base64 pad bits, section 2.3), in document
    order, for a document the schema of ``version`` already accepts."""
    return in_document_order(document, _semantic_violations(document, kind, version, None, registry))


def _semantic_violations(
    document: Any, kind: str, version: str, out: list[PublishedTensor] | None, registry: Registry
) -> Iterator[Violation]:
    yield from top_level_violations(document, kind, version, registry)
    shape = table_shape(kind, version, registry)
    table = table_levels(registry.wire_model(kind, version))[0][0]
    yield from _table_rules(document[table] if shape.ruled else document.get(table) or [], shape, out)


def _schema_violations(document: Any, kind: str, version: str, registry: Registry) -> Iterator[Violation]:
    model = registry.wire_model(kind, version)
    validator = model_validator(model)
    try:
        if validator.is_valid(document):
            return
        errors = list(validator.iter_errors(document))
    except ValueError as exc:  # jsonschema-rs bounds its own recursion, below the parser's depth limit
        yield Violation("JSON", "", None, f"nesting too deep to check: {exc}")
        return
    yield from schema_errors(errors, model)


def schema_errors(errors: Iterable[Any], model: WireModel) -> Iterator[Violation]:
    """jsonschema-rs errors as violations, each named by the rule the model gives its place."""
    for error in errors:
        keyword = str(error.schema_path[-1]) if error.schema_path else ""
        path = list(error.instance_path)
        yield Violation(
            model.rule_at(keyword, path, error.instance), pointer(*path), error.instance, error.message
        )


def top_level_violations(
    members: Mapping[str, Any], kind: str, version: str, registry: Registry
) -> Iterator[Violation]:
    top = registry.wire_model(kind, version).top  # unknown members are never checked
    encoded = members.get("agent_meta_b64")
    if "agent_meta_b64" in top and isinstance(encoded, str) and not canonical_base64(encoded):
        yield Violation("AGENT_META_BASE64", "/agent_meta_b64", encoded, "pad bits are not zero")
    model = registry.wire_model(kind, version)
    table = table_levels(model)[0]
    yield from member_literals(members, [m for m in top.members if m.child != table], model, ())


def canonical_base64(encoded: str) -> bool:
    try:
        return base64.b64encode(base64.b64decode(encoded, validate=True)).decode("ascii") == encoded
    except (binascii.Error, ValueError):
        return False


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
    3. Several violations at one value: ``REQUIRED``, then ``TYPE``, then the others by
       rule ID in ASCII order (so ``-1.5`` as ``addr`` is ``TYPE``, not ``ADDR_RANGE``); the
       same rule twice at one value (two missing members of one object) in the order the
       schema lists the members (its ``required`` array).
    """
    return sorted(
        found,
        key=lambda v: (
            v.rule != "SCHEMA_ID",
            _position(document, v.pointer),
            _AT_ONE_VALUE.get(v.rule, 2),
            v.rule,
        ),
    )


#: Which rule is reported first among several at one value (SPEC.md 2.7): the shape, then the value.
_AT_ONE_VALUE = {"REQUIRED": 0, "TYPE": 1}


def _position(document: Any, at: str) -> tuple[int, ...]:
    node, place = document, []
    for token in _wire.tokens(at):
        if isinstance(node, dict):
            members = list(node)
            place.append(members.index(token) if token in node else len(members))
            node = node.get(token)
        elif isinstance(node, (list, tuple)):
            index = int(token) if _wire.is_index(token) else len(node)
            place.append(index)
            node = node[index] if index < len(node) else None
        else:
            place.append(0)
            node = None
    return tuple(place)


# -- what a writer must not emit beyond an invalid blob ----------------------------------------


def writer_violations(
    document: dict[str, Any], version: str, model: WireModel | None = None, *, registry: Registry
) -> list[Violation]:
    """What a conforming writer of ``version`` must not emit, beyond an invalid blob:
    ``null`` for an absent optional (WRITE_OMIT_ABSENT), members it does not know
    (WRITE_KNOWN_MEMBERS), at every level of the wire, and a missing or ``null`` endpoint
    (WRITE_ENDPOINT: always written, ``""`` when there is none). ``document`` must already be a
    valid blob; ``model`` is the version's (default: the one ``registry`` holds). In document order."""
    model = model or registry.wire_model("rendezvous", version)
    found: list[Violation] = []
    if EMPTY_WHEN_ABSENT in model.top and document.get(EMPTY_WHEN_ABSENT) is None:
        # Not WRITE_OMIT_ABSENT: this optional is never omitted, "" stands for none. Left out, it
        # is named as REQUIRED names a missing member: at the object, whose value is shown.
        always = 'always written; "" when there is none'
        if EMPTY_WHEN_ABSENT in document:
            found.append(Violation("WRITE_ENDPOINT", pointer(EMPTY_WHEN_ABSENT), None, always))
        else:
            found.append(
                Violation("WRITE_ENDPOINT", pointer(), document, f"{EMPTY_WHEN_ABSENT!r} left out: {always}")
            )

    def visit(obj: Any, level: tuple[str, ...], at: tuple[str | int, ...]) -> None:
        declared = model.levels[level]
        for name, value in obj.items():
            if name not in declared:
                detail = f"a {version} writer does not know {name!r}"
                found.append(Violation("WRITE_KNOWN_MEMBERS", pointer(*at, name), value, detail))
            elif value is None and not declared[name].required and (level, name) != ((), EMPTY_WHEN_ABSENT):
                detail = "an absent optional member is omitted, not null"
                found.append(Violation("WRITE_OMIT_ABSENT", pointer(*at, name), None, detail))
            elif (child := declared[name].child) is not None and isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, dict):
                        visit(item, child, (*at, name, i))

    visit(document, (), ())
    return in_document_order(document, found)
