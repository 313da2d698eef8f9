"""The schema compiled into msgspec types: parsing and the structure check in one typed decode.

The reader's fast path. Each version's JSON Schema is translated, keyword by keyword,
into msgspec Structs (required and optional members, JSON types, ``const``, integer
bounds, arrays as tuples, unknown members refused); what msgspec cannot say itself
(a bound past 64 bits, a ``pattern``) becomes a residual check run over the decoded
values in bulk. Nothing here names a rule: whenever the typed decode fails, a residual
check fails, or the document holds anything the types do not know (unknown members,
non-ASCII bytes), :func:`typed_read` returns ``None`` and the caller runs the exact
path, which accepts or names every violation. A property test (tests/test_validate.py)
holds the two paths to each other on every vector and on thousands of mutated blobs.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from typing import Annotated, Any, Literal, Optional

import msgspec
from refitwire._spec import blob_limit
from refitwire._wire import Registry, WireModel
from refitwire._wire._vocabulary import KEYWORDS

__all__ = ["typed_read"]

_INT64 = (-(2**63), 2**63 - 1)
# The keywords the compiler translates or passes over; any other disables the fast path.
_TRANSLATED = frozenset(name for name, keyword in KEYWORDS.items() if keyword.fast_path)
# ``^[class]{n}$``: checked as a length (by msgspec) and a character set (in bulk).
_FIXED_CLASS = re.compile(r"\^\[((?:[^\]\\]|\\.)+)\]\{(\d+)\}\$")


class _Unsupported(Exception):
    """The schema uses a keyword this compiler does not translate: no fast path for it."""


class _Compiled:
    """One document kind at one version: its msgspec decoder and its residual checks."""

    def __init__(self, root: Any, newest: Any) -> None:
        self.root = root
        self.newest = newest  # the newest version's schema, whose members the library's models hold
        self.structs: dict[str, Any] = {}
        self.residuals: list[tuple[tuple[str, ...], Any]] = []  # (path, check over the values there)
        self.decoder = msgspec.json.Decoder(self._type(root, (), "Document"))

    def _type(self, node: dict[str, Any], path: tuple[str, ...], name: str) -> Any:
        unknown = set(node) - _TRANSLATED
        if unknown:
            raise _Unsupported(sorted(unknown))
        if "const" in node:
            if not isinstance(node["const"], str) or node.get("type", "string") != "string":
                raise _Unsupported("const")
            return Literal[node["const"]]
        types = [node["type"]] if isinstance(node.get("type"), str) else list(node.get("type", []))
        nullable = "null" in types
        types = [t for t in types if t != "null"]
        if len(types) != 1:
            raise _Unsupported(types)
        translate = getattr(self, f"_{types[0]}", None)
        if translate is None:  # a JSON type this compiler does not translate (a candidate's "number")
            raise _Unsupported(types)
        base = translate(node, path, name)
        return Optional[base] if nullable else base  # noqa: UP045 - a runtime type, for msgspec

    def _string(self, node: dict[str, Any], path: tuple[str, ...], _name: str) -> Any:
        if "pattern" not in node:
            return str
        fixed = _FIXED_CLASS.fullmatch(node["pattern"])
        if fixed and fixed.group(1).isascii():
            allowed = _charset(fixed.group(1))
            n = int(fixed.group(2))
            self.residuals.append((path, functools.partial(_only_chars, allowed.encode("ascii"))))
            return Annotated[str, msgspec.Meta(min_length=n, max_length=n)]
        # Anything else is matched by jsonschema-rs (ECMA-262 semantics), once per distinct value.
        import jsonschema_rs

        matcher = jsonschema_rs.validator_for({"type": "string", "pattern": node["pattern"]})
        self.residuals.append((path, functools.partial(_all_distinct, matcher.is_valid)))
        return str

    def _integer(self, node: dict[str, Any], path: tuple[str, ...], _name: str) -> Any:
        low, high = node.get("minimum"), node.get("maximum")
        bounds: dict[str, int] = {}
        for key, value, inside in (("ge", low, low is not None and low >= _INT64[0]),
                                   ("le", high, high is not None and high <= _INT64[1])):  # fmt: skip
            if value is None:
                continue
            if not isinstance(value, int):
                raise _Unsupported("a non-integer bound")
            if inside:
                bounds[key] = value
            else:  # past what msgspec bounds: checked over the decoded values
                check = functools.partial(_at_least if key == "ge" else _at_most, value)
                self.residuals.append((path, check))
        return Annotated[int, msgspec.Meta(ge=bounds.get("ge"), le=bounds.get("le"))] if bounds else int

    def _array(self, node: dict[str, Any], path: tuple[str, ...], name: str) -> Any:
        item = self._type(node.get("items", {}), (*path, "*"), name)
        return tuple[item, ...]  # type: ignore[valid-type]

    def _object(self, node: dict[str, Any], path: tuple[str, ...], name: str) -> Any:
        name = "_".join(("Document", *path)).replace(
            "*", "item"
        )  # one Struct per place (references are inlined)
        required = set(node.get("required", ()))
        fields: list[Any] = []
        for member, sub in node.get("properties", {}).items():
            kind = self._type(sub, (*path, member), member.title())
            fields.append((member, kind) if member in required else (member, kind, None))
        if required - set(node.get("properties", {})):
            raise _Unsupported("a required member without a schema")
        # frozen: a lazy table hands these out (``entries_as_read``) and builds its models from them;
        # omit_defaults: as plain values (``msgspec.to_builtins``) an absent member stays absent.
        # A member only a later version declares is a class attribute ``None``, not a field (this
        # version's blob must not hold it): read by attribute, as on the model, it is absent
        later = _members_at(self.newest, path) - set(node.get("properties", {}))
        struct = msgspec.defstruct(
            name, fields, kw_only=True, forbid_unknown_fields=True, gc=False, frozen=True, omit_defaults=True,
            namespace=dict.fromkeys(sorted(later)),
        )  # fmt: skip
        self.structs[name] = struct
        return struct

    def read(self, data: bytes) -> Any:
        try:
            document = self.decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        values: dict[tuple[str, ...], list[Any]] = {(): [document]}
        for path, check in self.residuals:
            if not check([v for v in _values(values, path) if v is not None]):
                return None
        return document


def _members_at(schema: Any, path: tuple[str, ...]) -> set[str]:
    """The members of the object at ``path`` (``*`` for an array's items) of a resolved schema."""
    node = schema
    for step in path:
        node = node.get("items", {}) if step == "*" else node.get("properties", {}).get(step, {})
    return set(node.get("properties", {}))


def _values(memo: dict[tuple[str, ...], list[Any]], path: tuple[str, ...]) -> list[Any]:
    """The values at ``path`` (``*`` for every item of an array), sharing work between paths."""
    if path not in memo:
        parent = _values(memo, path[:-1])
        step = path[-1]
        memo[path] = list(
            itertools.chain.from_iterable(parent) if step == "*" else map(operator.attrgetter(step), parent)
        )
    return memo[path]


def _charset(pattern_class: str) -> str:
    chars, i = [], 0
    while i < len(pattern_class):
        if i + 2 < len(pattern_class) and pattern_class[i + 1] == "-":
            chars += [chr(c) for c in range(ord(pattern_class[i]), ord(pattern_class[i + 2]) + 1)]
            i += 3
        else:
            if pattern_class[i] == "\\" or pattern_class[i] == "^":
                raise _Unsupported("an escaped or negated class")
            chars.append(pattern_class[i])
            i += 1
    return "".join(chars)


def _only_chars(allowed: bytes, values: list[str]) -> bool:
    joined = "".join(values)
    return joined.isascii() and not joined.encode("ascii").translate(None, allowed)


def _all_distinct(is_valid: Any, values: list[str]) -> bool:
    return all(map(is_valid, set(values)))


def _at_least(bound: int, values: list[int]) -> bool:
    return not values or min(values) >= bound


def _at_most(bound: int, values: list[int]) -> bool:
    return not values or max(values) <= bound


@functools.cache
def _compiled(model: WireModel, newest: WireModel) -> _Compiled | None:
    """One model's decoder, kept per model and the newest of its registry (models are immutable)."""
    try:
        return _Compiled(model.resolved, newest.resolved)
    except (_Unsupported, TypeError, ValueError):  # pragma: no cover - the released schemas all compile
        return None  # msgspec refused a type built from it: the exact path reads everything


def typed_read(blob: Any, kind: str, version: str, registry: Registry) -> Any:
    """The blob as compiled-schema Structs when the fast path can vouch for it, else ``None``.

    ``None`` says nothing about validity: the exact path decides. The fast path only takes
    ASCII blobs within the size limit (what the reference writer emits), so every
    encoding rule holds when it answers.
    """
    compiled = _compiled(registry.wire_model(kind, version), registry.newest_model(kind))
    if (
        type(blob) is not bytes
        or len(blob) > blob_limit(registry, version)
        or compiled is None
        or not blob.isascii()
    ):
        return None
    return compiled.read(blob)
