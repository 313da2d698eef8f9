"""Valid values of any member, by construction: one generator per JSON Schema keyword.

The valid half of ``_domain`` (which see): each keyword's generator proposes values for the
whole schema at that keyword's extremes, and :func:`domain` keeps those the whole schema
allows, in order, without repeats. A keyword no generator knows raises
:class:`UnhandledKeyword` naming it and where it is: a schema that uses a new keyword fails
the build, it is never skipped.
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema_rs
from refitwire.compat._regex import pattern_string, taking_every_part
from refitwire.wire import JSON_TYPES, schema_types

__all__ = ["VALID", "UnhandledKeyword", "check_keywords", "domain", "wrong_values"]

#: Keywords that never change which values validate (JSON Schema annotations), and ``$``-keys.
ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$anchor", "title", "description", "examples",
                         "default", "deprecated", "readOnly", "writeOnly",
                         # annotations in 2020-12 as the reference validates (jsonschema-rs asserts no format)
                         "format", "contentEncoding", "contentMediaType", "contentSchema"})  # fmt: skip
#: Arrays longer than this are not built whole (a ``maxItems`` of 2^31 is still broken at 2^31 + 1
#: only when it is at most this).
LONGEST = 4096
#: One value of each JSON type (SPEC 2.2, TYPE); an integer's wrong "number" is a fraction.
SAMPLES: dict[str, Any] = {"string": "7", "integer": 7, "number": 7.5, "boolean": True, "null": None,
                           "array": [], "object": {}}  # fmt: skip
#: And the falsy value of each type whose sample is not: a reader that checks a member only when
#: it is truthy (``if (step)``) takes ``false``, ``0`` or ``""`` for an absent one.
FALSY: dict[str, Any] = {"string": "", "integer": 0, "boolean": False}


def wrong_values(kind: str) -> tuple[Any, ...]:
    """The values of JSON type ``kind`` a member that must not have it is broken with."""
    return (SAMPLES[kind], FALSY[kind]) if kind in FALSY else (SAMPLES[kind],)


class UnhandledKeyword(ValueError):
    """A schema keyword the generators do not know: add its generator to this module."""

    def __init__(self, keyword: str, where: str, reason: str = "") -> None:
        reason = reason or ("no value generator handles it (refitwire.compat._values); "
                            "add one before the schema can use it")  # fmt: skip
        super().__init__(f"keyword {keyword!r} at {where or '(the member)'}: {reason}")
        self.keyword, self.where = keyword, where


Schema = Mapping[str, Any]


# -- the whole schema ---------------------------------------------------------------------------


def _key(schema: Schema) -> str:
    return json.dumps(schema, sort_keys=True)


def domain(schema: Schema) -> tuple[Any, ...]:
    """Valid values of ``schema`` spanning its domain (deterministic, in a stable order).

    Each call gets its own copies: the values are lists and dicts a caller may fill in (a blob
    built around one), and the cache's must stay as generated for the next caller."""
    return copy.deepcopy(_domain(_key(schema)))


@functools.cache
def _domain(schema_json: str) -> tuple[Any, ...]:
    schema = json.loads(schema_json)
    check_keywords(schema)
    valid = _validator(schema_json)
    found: list[Any] = []
    # a schema of annotations alone (what is left of an untyped enum without it) allows any value
    for keyword in _keywords(schema) or ["type"]:
        for value in VALID.get(keyword, _nothing)(schema):
            if valid.is_valid(value) and not _seen(value, found):
                found.append(value)
    if not found:
        raise UnhandledKeyword(
            ", ".join(_keywords(schema)),
            "",
            "no generated value satisfies the keywords together (the schema may allow none)",
        )
    return tuple(found)


def check_keywords(schema: Any, where: str = "") -> None:
    """Raise :class:`UnhandledKeyword` for the first keyword in ``schema`` (at any depth) no generator knows."""
    if not isinstance(schema, Mapping):
        if isinstance(schema, bool):
            return
        raise UnhandledKeyword(type(schema).__name__, where)
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS or keyword.startswith("x-"):
            continue
        if keyword not in VALID:
            raise UnhandledKeyword(keyword, where)
        if keyword == "properties":
            for name, sub in value.items():
                check_keywords(sub, f"{where}/properties/{name}")
        elif keyword in ("items", "additionalProperties"):
            check_keywords(value, f"{where}/{keyword}")
        elif keyword in ("prefixItems", *_composed.LIST, *_conditional.LIST):
            for n, sub in enumerate(value):
                check_keywords(sub, f"{where}/{keyword}/{n}")
        elif keyword in (*_composed.ONE, *_conditional.ONE):
            check_keywords(value, f"{where}/{keyword}")
        elif keyword in (*_composed.MAP, *_conditional.MAP):
            for name, sub in value.items():
                check_keywords(sub, f"{where}/{keyword}/{name}")


def _keywords(schema: Schema) -> list[str]:
    return [k for k in schema if k not in ANNOTATIONS and not k.startswith("x-")]


@functools.cache
def _validator(schema_json: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(schema_json))


def _nothing(schema: Schema) -> Iterator[Any]:
    return iter(())


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _seen(value: Any, found: list[Any]) -> bool:
    return any(_same(value, other) for other in found)


def _types(schema: Schema) -> list[str]:
    return list(schema_types(schema) or JSON_TYPES)


def _without(schema: Schema, *keywords: str, **more: Any) -> dict[str, Any]:
    return {**{k: v for k, v in schema.items() if k not in keywords}, **more}


def _first(schema: Schema) -> Any:
    return domain(schema)[0]


# -- valid values, one generator per keyword ----------------------------------------------------


def _v_type(schema: Schema) -> Iterator[Any]:
    """The simplest value of each allowed type (null included for a nullable member)."""
    for kind in _types(schema):
        yield from _simplest(schema, kind)


def _simplest(schema: Schema, kind: str) -> Iterator[Any]:
    if kind == "null":
        yield None
    elif kind == "boolean":
        yield from (False, True)
    elif kind in ("integer", "number"):
        yield from _numbers(schema, kind == "integer")
    elif kind == "string":
        yield from _strings(schema, schema.get("minLength", 0))
    elif kind == "array":
        yield from _arrays(schema, schema.get("minItems", 0))
    elif kind == "object":
        yield _object(schema, optional=False)


def _low_high(schema: Schema, integer: bool) -> tuple[float | None, float | None]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if "exclusiveMinimum" in schema:
        x = schema["exclusiveMinimum"]
        x = x + 1 if integer else x + (abs(x) or 1) * 1e-9
        low = x if low is None else max(low, x)
    if "exclusiveMaximum" in schema:
        x = schema["exclusiveMaximum"]
        x = x - 1 if integer else x - (abs(x) or 1) * 1e-9
        high = x if high is None else min(high, x)
    return low, high


def _numbers(schema: Schema, integer: bool) -> Iterator[Any]:
    """The lowest, the highest and a middle value (snapped to ``multipleOf``), or 0 and 1 unbounded."""
    low, high = _low_high(schema, integer)
    step = schema.get("multipleOf")
    points = [p for p in (low, high) if p is not None]
    if low is not None and high is not None:
        points.insert(1, (low + high) // 2 if integer else (low + high) / 2)
    if not points or (low is None) != (high is None):
        base = points[0] if points else 0
        points += [base + 1, base + 7] if high is None else [base - 1, base - 7]
    for point in points:
        if step:
            point = (point // step + (1 if point % step else 0)) * step
        yield int(point) if integer else float(point) if not isinstance(point, int) else point
    if not integer and low is None and high is None:
        yield 0.5


def _strings(schema: Schema, length: int) -> Iterator[str]:
    """A string of ``length`` characters (or the nearest longer one) allowed by ``pattern``, and
    one taking every optional part of the pattern (``_regex``) where that is another."""
    pattern, longest = schema.get("pattern"), schema.get("maxLength")
    found = pattern_string(pattern, length, longest)
    if found is not None:
        yield found
    every = taking_every_part(pattern) if isinstance(pattern, str) else None
    if (
        every is not None
        and every != found
        and length <= len(every)
        and (longest is None or len(every) <= longest)
    ):
        yield every


def _v_lengths(schema: Schema) -> Iterator[str]:
    """The shortest and the longest string, and one between."""
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    for length in (low, high, None if high is None else (low + high) // 2):
        if length is not None:
            yield from _strings(schema, length)


def _v_enum(schema: Schema) -> Iterator[Any]:
    yield from schema["enum"]


def _v_const(schema: Schema) -> Iterator[Any]:
    yield schema["const"]


def _item_schema(schema: Schema, index: int) -> Any:
    prefix = schema.get("prefixItems", [])
    return prefix[index] if index < len(prefix) else schema.get("items", True)


def _item_values(schema: Schema, index: int) -> tuple[Any, ...]:
    sub = _item_schema(schema, index)
    if sub is True:
        return (0, "a", None)
    if sub is False:
        return ()
    values = domain(sub)
    if isinstance(schema.get("contains"), Mapping):
        # the first minContains places hold items it counts, the others items it does not where
        # there are such: an array built so holds as many as it needs and no more
        counted = _validator(_key(schema["contains"]))
        wanted = index < schema.get("minContains", 1)
        values = tuple(sorted(values, key=lambda v: counted.is_valid(v) != wanted))
    return values


def _arrays(schema: Schema, length: int, vary: int | None = None, value: int = 0) -> Iterator[list[Any]]:
    """An array of ``length`` items, each the first value its place allows (distinct ones under
    ``uniqueItems``); item ``vary`` takes its ``value``-th value instead."""
    items: list[Any] = []
    for index in range(length):
        values = _item_values(schema, index)
        if not values:
            return
        choice = value if index == vary else 0
        if schema.get("uniqueItems"):
            left = [v for v in values[choice:] + values[:choice] if not _seen(v, items)]
            if not left:
                return
            items.append(left[0])
        else:
            items.append(values[choice % len(values)])
    yield items


def _v_items(schema: Schema) -> Iterator[list[Any]]:
    """One array per value each place may take (every item value rides once)."""
    places = max(len(schema.get("prefixItems", [])), 1, schema.get("minItems", 0))
    places = min(places, schema.get("maxItems", places))
    for index in range(places):
        for n in range(len(_item_values(schema, index))):
            yield from _arrays(schema, places, index, n)


def _v_item_counts(schema: Schema) -> Iterator[list[Any]]:
    """The shortest and the longest (full) array."""
    low = schema.get("minItems", 0)
    high = schema.get("maxItems", max(low, len(schema.get("prefixItems", [])), 2))
    for length in (low, min(high, LONGEST)):
        yield from _arrays(schema, length)


def _object(schema: Schema, optional: bool, **chosen: Any) -> dict[str, Any]:
    """The required members (each at its first value), the optional ones too when ``optional``."""
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        if name in chosen:
            out[name] = chosen[name]
        elif (name in required or optional) and sub is not False:
            out[name] = 0 if sub is True else _first(sub)
    for name in required - out.keys():
        out[name] = 0  # required but not described
    return out


def _v_properties(schema: Schema) -> Iterator[dict[str, Any]]:
    """With every optional member, then each inner member at each of its values."""
    yield _object(schema, optional=True)
    for name, sub in schema.get("properties", {}).items():
        if isinstance(sub, Mapping):
            for value in domain(sub):
                yield _object(schema, optional=False, **{name: value})


def _v_required(schema: Schema) -> Iterator[dict[str, Any]]:
    """Only the required members (every optional one absent)."""
    yield _object(schema, optional=False)


def _v_additional(schema: Schema) -> Iterator[dict[str, Any]]:
    """An unknown member at each value an open object allows for it."""
    extra = schema["additionalProperties"]
    if extra is False:
        return
    for value in (0, "a") if extra is True else domain(extra):
        yield {**_object(schema, optional=False), _unknown_name(schema): value}


def _v_property_counts(schema: Schema) -> Iterator[dict[str, Any]]:
    low = schema.get("minProperties", 0)
    out = _object(schema, optional=False)
    names = unknown_names(schema)
    while len(out) < low:
        out[next(names)] = _extra_value(schema)
    yield out


def _extra_value(schema: Schema) -> Any:
    """A value an unknown member of ``schema`` may have."""
    extra = schema.get("additionalProperties", True)
    return _first(extra) if isinstance(extra, Mapping) else 0


def _unknown_name(schema: Schema) -> str:
    """A member name the object does not declare (see :func:`unknown_names`)."""
    return next(unknown_names(schema), "x_unknown")


def unknown_names(schema: Schema) -> Iterator[str]:
    """Member names the object does not declare, that match none of its ``patternProperties``
    (so ``additionalProperties`` is what applies to them) and that its ``propertyNames`` allows:
    the first names an unknown member, the rest pad an object to a count of members. Built from
    the allowed names ``propertyNames`` gives and plain ones, each also one character longer or
    with its last character changed, so a pattern on names still leaves enough of them."""
    declared = schema.get("properties", {})
    matched = [_validator(json.dumps({"pattern": p})).is_valid for p in schema.get("patternProperties", {})]
    rule = schema.get("propertyNames")
    allowed = (
        _validator(json.dumps(rule)).is_valid
        if isinstance(rule, Mapping)
        else (lambda _name: rule is not False)
    )
    bases = (
        [str(n) for n in reversed(domain({**rule, "type": "string"}))] if isinstance(rule, Mapping) else []
    )
    bases += ["x_unknown", "unknown"]
    seen: set[str] = set()
    for base in bases:
        for name in itertools.chain(
            [base],
            (base + c for c in _NAME_CHARACTERS),
            (base[:-1] + c for c in _NAME_CHARACTERS if base),
            (f"{base}{n}" for n in range(LONGEST)),
        ):
            if (
                name not in seen
                and name not in declared
                and not any(m(name) for m in matched)
                and allowed(name)
            ):
                seen.add(name)
                yield name


#: What a padding name may end in.
_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"


VALID: dict[str, Callable[[Schema], Iterator[Any]]] = {
    "type": _v_type, "enum": _v_enum, "const": _v_const,
    "minimum": _v_type, "maximum": _v_type, "exclusiveMinimum": _v_type, "exclusiveMaximum": _v_type,
    "multipleOf": _v_type, "minLength": _v_lengths, "maxLength": _v_lengths, "pattern": _v_lengths,
    "items": _v_items, "prefixItems": _v_items, "minItems": _v_item_counts, "maxItems": _v_item_counts,
    "uniqueItems": _v_item_counts, "properties": _v_properties, "required": _v_required,
    "additionalProperties": _v_additional, "minProperties": _v_property_counts,
    "maxProperties": _v_property_counts,
}  # fmt: skip

# The keywords that apply subschemas have their generators in their own modules (which use this one's).
from refitwire.compat import _composed, _conditional  # noqa: E402

VALID.update(_composed.VALID)
VALID.update(_conditional.VALID)
