"""Values of any member, by construction: one generator per JSON Schema keyword.

Laid out like ``jsonschema._keywords`` (one function per keyword), but generating instead of
validating. For a member's (resolved) subschema:

* :func:`domain` gives valid values that span it (``_values``): every ``enum`` value, the
  ``const``, both bounds of a number and one between, the shortest and the longest string, the
  empty and the full array and one array per value its items may take, an object with only
  its required members, with every optional one, and with each inner member at each value;
* :func:`breaks` gives, per keyword, values that break exactly that keyword: each is checked
  with jsonschema-rs (the validator the reference uses), whose only error for it must be that
  keyword at the place the :class:`Break` names (relative to the value; the rule and the JSON
  pointer are the wire model's for that place: ``WireModel.rule_at``, ``wire.pointer``).

A keyword no generator knows raises :class:`UnhandledKeyword`, naming it: a schema that uses a
new keyword fails the build, it is never skipped. A keyword no value can break alone
(``minLength: 0``, a ``maxLength`` its pattern already implies) has no break; :func:`unbreakable`
names those, so a report can say so.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from refitwire.compat._values import (
    LONGEST,
    SAMPLES,
    VALID,
    Schema,
    UnhandledKeyword,
    _arrays,
    _extra_value,
    _item_schema,
    _keywords,
    _low_high,
    _object,
    _same,
    _strings,
    _types,
    _unknown_name,
    _validator,
    _without,
    check_keywords,
    domain,
    unknown_names,
    wrong_values,
)

__all__ = ["Break", "UnhandledKeyword", "breaks", "domain", "level_breaks", "level_domain", "unbreakable"]


@dataclass(frozen=True)
class Break:
    """A value that breaks one keyword of a schema: its error is ``keyword`` at ``at`` inside ``value``."""

    keyword: str
    at: tuple[str | int, ...]
    value: Any
    what: str

    def inside(self, step: str | int, value: Any, what: str) -> Break:
        """This break placed at ``step`` of an enclosing ``value``."""
        return Break(self.keyword, (step, *self.at), value, f"{what}: {self.what}")


def breaks(schema: Schema) -> tuple[Break, ...]:
    """Values breaking one keyword of ``schema`` each, nested keywords included (deterministic);
    copies, as :func:`domain` gives, so a caller that fills one in leaves the cache as it was."""
    return copy.deepcopy(_breaks(json.dumps(schema, sort_keys=True)))


def unbreakable(schema: Schema) -> tuple[str, ...]:
    """The keywords of ``schema`` (its top) that no value breaks alone."""
    broken = {b.keyword for b in breaks(schema) if not b.at}
    if broken & {"minContains", "maxContains"}:
        broken.add("contains")  # (its counts are its own: a break of one is a break of what it counts)
    nested = _NESTED | (
        {"additionalProperties"} if isinstance(schema.get("additionalProperties"), dict) else set()
    )
    return tuple(k for k in _keywords(schema) if k not in nested and k not in broken)


@functools.cache
def _breaks(schema_json: str) -> tuple[Break, ...]:
    schema = json.loads(schema_json)
    check_keywords(schema)
    validator = _validator(schema_json)
    found: list[Break] = []
    for keyword in _keywords(schema):
        for candidate in BREAKS[keyword](schema):
            errors = {
                (str(e.schema_path[-1]), tuple(e.instance_path))
                for e in validator.iter_errors(candidate.value)
            }
            wanted = (candidate.keyword, candidate.at)
            if candidate.keyword == "type":  # a wrong type also misses an enum or a pattern; TYPE is reported
                errors = {wanted} if wanted in errors and {e[1] for e in errors} == {candidate.at} else errors
            if errors != {wanted}:
                continue  # it breaks something else too (or nothing): not a break of this keyword
            if not any(b.keyword == candidate.keyword and b.at == candidate.at and _same(b.value, candidate.value)
                       for b in found):  # fmt: skip
                found.append(candidate)
    return tuple(found)


def level_domain(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Any]]:
    """Valid values of an array-of-objects ``schema`` (a member holding a level) and of its
    level's object, its items pinned to ``items`` (valid ones, at least one; see
    :func:`level_breaks`): ``(None, array)`` or ``(0, the first item)``."""
    for index, pinned in _pinned(schema, items):
        for value in domain(pinned):
            yield index, value


def level_breaks(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Break]]:
    """The breaks of the keywords of an array-of-objects ``schema`` (its length, uniqueness, type)
    and of its level's object (its required, unknown and counted members), with the items pinned
    to ``items``: valid items of that place, whose own members are broken as members of their
    level, and which keep what JSON Schema cannot say (a shard's box inside its tensor, say).
    ``(None, break of the array)`` or ``(0, break of the first item)``."""
    for index, pinned in _pinned(schema, items):
        for broken in breaks(pinned):
            if not broken.at and broken.keyword not in ("const", "enum"):  # not off the pinned items
                yield index, broken


def _pinned(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Schema]]:
    level_object = {**schema["items"], "properties": {name: {"const": v} for name, v in items[0].items()}}
    yield None, {**schema, "items": {"type": "object", "enum": items}}
    yield 0, level_object


def _valid_of(schema: Schema) -> Any:
    """The first valid value of ``schema`` without the keywords a break replaces."""
    values = domain(schema)
    return values[0]


def _domain_or_empty(schema: Schema) -> tuple[Any, ...]:
    try:
        return domain(schema)
    except UnhandledKeyword:
        raise
    except Exception:  # an unsatisfiable variant (the keyword cannot be broken alone)
        return ()


# -- breaks, one generator per keyword ----------------------------------------------------------


def _b_type(schema: Schema) -> Iterator[Break]:
    allowed = set(_types(schema))
    if "integer" in allowed:
        allowed.discard("number")  # 7.5 is no integer; an integral number is an integer
    if "number" in allowed:
        allowed.add("integer")
    for kind in SAMPLES:
        if kind not in allowed:
            for value in wrong_values(kind):
                yield Break("type", (), value, f"a JSON {kind} ({json.dumps(value)})")


def _near(value: Any) -> Iterator[Any]:
    """Values of ``value``'s type that differ from it a little."""
    if isinstance(value, str):
        yield from (value.upper(), value + "x", value[:-1], "")
    elif isinstance(value, bool):
        yield not value
    elif isinstance(value, (int, float)):
        yield from (value + 1, value - 1)
    elif isinstance(value, list):
        yield from ([*value, value[-1] if value else 0], value[:-1])
    elif isinstance(value, dict):
        yield {**value, "x": 0}
    yield from (v for v in SAMPLES.values() if type(v) is type(value))


def _b_enum(schema: Schema) -> Iterator[Break]:
    rest = _without(schema, "enum")
    for allowed in schema["enum"]:
        for value in _near(allowed):
            if not any(_same(value, v) for v in schema["enum"]):
                yield Break("enum", (), value, f"{json.dumps(value)}, not one of its values")
    for value in _domain_or_empty(rest):
        if not any(_same(value, v) for v in schema["enum"]):
            yield Break("enum", (), value, f"{json.dumps(value)}, not one of its values")


def _b_const(schema: Schema) -> Iterator[Break]:
    for value in _near(schema["const"]):
        yield Break("const", (), value, f"{json.dumps(value)}, not its constant")


def _integer(schema: Schema) -> bool:
    return "integer" in _types(schema) and "number" not in _types(schema)


def _b_bound(keyword: str, low: bool) -> Callable[[Schema], Iterator[Break]]:
    def generate(schema: Schema) -> Iterator[Break]:
        bound = schema[keyword]
        if _integer(schema) and not float(bound).is_integer():  # 10.5: the integers it allows end at 10
            past = math.ceil(bound) - 1 if low else math.floor(bound) + 1
            yield Break(keyword, (), past, f"{past}, {'below' if low else 'above'} its {keyword} {bound}")
            return
        exclusive = keyword.startswith("exclusive")
        steps = [schema["multipleOf"]] if "multipleOf" in schema else []  # past the bound, still a multiple
        steps += [1] if _integer(schema) else [0.5, 1]
        for step in [0] if exclusive and "multipleOf" not in schema else steps:
            past = bound - step if low else bound + step
            if isinstance(past, float) and past == bound and step:  # a bound past 2^53: the next double
                past = math.nextafter(bound, -math.inf if low else math.inf)
            if not exclusive or step == 0 or (past < bound if low else past > bound):
                yield Break(keyword, (), past, f"{past}, {'below' if low else 'above'} its {keyword} {bound}")
        if exclusive and "multipleOf" in schema:
            yield Break(keyword, (), bound, f"{bound}, at its {keyword}")

    return generate


def _b_multiple(schema: Schema) -> Iterator[Break]:
    low, _ = _low_high(schema, _integer(schema))
    base = (low or 0) + schema["multipleOf"]
    for off in (1, schema["multipleOf"] / 2):
        value = base + off if not _integer(schema) or float(off).is_integer() else base + 1
        yield Break(
            "multipleOf",
            (),
            int(value) if _integer(schema) else value,
            f"not a multiple of {schema['multipleOf']}",
        )


def _b_min_length(schema: Schema) -> Iterator[Break]:
    n = schema["minLength"]
    if n > 0:
        for value in _strings(_without(schema, "minLength"), n - 1):
            yield Break("minLength", (), value, f"{n - 1} characters, shorter than its minLength {n}")


def _b_max_length(schema: Schema) -> Iterator[Break]:
    n = schema["maxLength"]
    for value in _strings(_without(schema, "maxLength"), n + 1):
        yield Break("maxLength", (), value, f"{n + 1} characters, longer than its maxLength {n}")


def _b_pattern(schema: Schema) -> Iterator[Break]:
    rest = _without(schema, "pattern")
    valid = [v for v in domain(schema) if isinstance(v, str)]
    valid = valid[:1] + valid[-1:] if len(valid) > 1 else valid  # the shortest and the longest
    lengths = {len(v) for v in valid} | {rest.get("minLength", 0)}
    candidates = [m for v in valid for m in (v.upper(), "!" + v[1:], v[:-1] + "!", v + "\n", " " + v[1:])]
    candidates += ["!" * n for n in sorted(lengths)] + ["é" * n for n in sorted(lengths)]
    candidates += [m for v in valid for m in _one_character_off(v, schema["pattern"])]
    for value in dict.fromkeys(candidates):
        yield Break("pattern", (), value, f"{json.dumps(value)}, not matching its pattern")


#: What may stand for a character: what an unescaped ``.`` matches, another case, a digit, a
#: word character, a space, beyond ASCII, the dot a class might leave out, and another letter
#: (last: it tells a literal's place from a class's, ``t`` of ``torch\.`` from ``[a-z]``).
_STAND_INS = "-A0_ é.q"


def _one_character_off(value: str, pattern: str) -> Iterator[str]:
    """``value`` with one character replaced so that ``pattern`` no longer matches, once per kind
    of place: a place is told by its character (a letter, a digit, or itself) and by the stand-ins
    the pattern takes there, so a literal (``torch\\.``: ``torch-``) and each class of the pattern
    are each tried once, not every character of a 32-digit hash. Beside the first stand-in a
    place refuses, each one it refuses that another place takes: a class widened to its
    neighbour's (``[a-z]`` read as ``[a-z0-9_]`` in ``^[a-z][a-z0-9_]*$``) takes that one."""
    matches = _validator(json.dumps({"pattern": pattern})).is_valid
    places = []
    for i, char in enumerate(value):
        kind = "letter" if char.isalpha() else "digit" if char.isdigit() else char
        swapped = {c: value[:i] + c + value[i + 1 :] for c in _STAND_INS if c != char}
        places.append((kind, {c: matches(s) for c, s in swapped.items()}, swapped))
    taken_somewhere = {c for _, taken, _ in places for c, ok in taken.items() if ok}
    tried = set()
    for kind, taken, swapped in places:
        key = (kind, tuple(sorted(taken.items())))
        if key in tried:
            continue
        tried.add(key)
        refused = [c for c in swapped if not taken[c]]
        yield from dict.fromkeys(
            swapped[c] for c in refused[:1] + [c for c in refused if c in taken_somewhere]
        )


def _b_items(schema: Schema) -> Iterator[Break]:
    """Each break of an item's schema, as the first item and (where two fit) as the last."""
    prefix = len(schema.get("prefixItems", []))
    counted = schema.get("minContains", 1) if "contains" in schema else 0  # left whole beside the broken one
    length = max(schema.get("minItems", 0), prefix + 1, counted + 1)
    length = min(length, schema.get("maxItems", length))
    if schema.get("items") is False:  # no item past prefixItems: one more is its break (maxItems allowing)
        if prefix < schema.get("maxItems", prefix + 1):
            for base in _arrays(schema, prefix):
                yield Break(
                    "items", (prefix,), [*base, 0], f"{prefix + 1} items, past its {prefix} prefixItems"
                )
        return
    yield from _item_breaks(schema, prefix, length, "items")
    if length < schema.get("maxItems", length + 1):
        yield from _item_breaks(schema, length, length + 1, "items")


def _b_prefix_items(schema: Schema) -> Iterator[Break]:
    length = max(schema.get("minItems", 0), len(schema["prefixItems"]))
    for index in range(len(schema["prefixItems"])):
        yield from _item_breaks(schema, index, length, "prefixItems")


def _item_breaks(schema: Schema, index: int, length: int, keyword: str) -> Iterator[Break]:
    sub = _item_schema(schema, index)
    if not isinstance(sub, dict) or index >= length:
        return
    for base in _arrays(schema, length):
        for inner in breaks(sub):
            value = [*base[:index], inner.value, *base[index + 1 :]]
            yield inner.inside(index, value, f"item {index}")


def _b_min_items(schema: Schema) -> Iterator[Break]:
    n = schema["minItems"]
    if n > 0:
        for value in _arrays(schema, n - 1):
            yield Break("minItems", (), value, f"{n - 1} items, fewer than its minItems {n}")


def _b_max_items(schema: Schema) -> Iterator[Break]:
    n = schema["maxItems"]
    if n < LONGEST:
        for value in _arrays(_without(schema, "maxItems"), n + 1):
            yield Break("maxItems", (), value, f"{n + 1} items, more than its maxItems {n}")


def _b_unique(schema: Schema) -> Iterator[Break]:
    if schema["uniqueItems"] is True:
        length = max(schema.get("minItems", 0), 2)
        for value in _arrays(_without(schema, "uniqueItems"), length):
            value[1] = value[0]
            yield Break("uniqueItems", (), value, "two equal items")


def _b_properties(schema: Schema) -> Iterator[Break]:
    for name, sub in schema["properties"].items():
        if isinstance(sub, dict):
            for inner in breaks(sub):
                yield inner.inside(name, _object(schema, optional=True, **{name: inner.value}), name)


def _b_required(schema: Schema) -> Iterator[Break]:
    for name in schema["required"]:
        value = _object(schema, optional=True)
        value.pop(name, None)
        yield Break("required", (), value, f"without its required member {name}")


def _b_additional(schema: Schema) -> Iterator[Break]:
    extra, name = schema["additionalProperties"], _unknown_name(schema)
    if extra is False:  # beside every optional member, and beside the required ones alone (a count)
        for optional in (True, False):
            value = {**_object(schema, optional=optional), name: 0}
            yield Break("additionalProperties", (), value, f"with an unknown member {name}")
    elif isinstance(extra, dict):
        for inner in breaks(extra):
            value = {**_object(schema, optional=False), name: inner.value}
            yield Break(inner.keyword, (name, *inner.at), value, f"unknown member {name}: {inner.what}")


def _b_min_properties(schema: Schema) -> Iterator[Break]:
    n = schema["minProperties"]
    if n > 0:
        value = _object(schema, optional=False)
        if len(value) < n:
            yield Break("minProperties", (), value, f"fewer than {n} members")


def _b_max_properties(schema: Schema) -> Iterator[Break]:
    n = schema["maxProperties"]
    value, names = _object(schema, optional=True), unknown_names(schema)
    while len(value) <= n:
        value[next(names)] = _extra_value(schema)
    yield Break("maxProperties", (), value, f"more than {n} members")


BREAKS: dict[str, Callable[[Schema], Iterator[Break]]] = {
    "type": _b_type, "enum": _b_enum, "const": _b_const,
    "minimum": _b_bound("minimum", True), "maximum": _b_bound("maximum", False),
    "exclusiveMinimum": _b_bound("exclusiveMinimum", True), "exclusiveMaximum": _b_bound("exclusiveMaximum", False),
    "multipleOf": _b_multiple, "minLength": _b_min_length, "maxLength": _b_max_length, "pattern": _b_pattern,
    "items": _b_items, "prefixItems": _b_prefix_items, "minItems": _b_min_items, "maxItems": _b_max_items,
    "uniqueItems": _b_unique, "properties": _b_properties, "required": _b_required,
    "additionalProperties": _b_additional, "minProperties": _b_min_properties, "maxProperties": _b_max_properties,
}  # fmt: skip
# The keywords that apply subschemas: their modules were loaded by ``_values``, complete by now.
from refitwire.compat import _composed, _conditional  # noqa: E402

BREAKS.update(_composed.BREAKS)
BREAKS.update(_conditional.BREAKS)
#: Keywords whose breaks are their parts' (reported at an item, an inner member or an inner keyword;
#: ``if`` only selects which of ``then`` and ``else`` applies).
_NESTED = frozenset({"items", "prefixItems", "properties", "allOf", "patternProperties", "propertyNames",
                     "if", "then", "else", "dependentSchemas"})  # fmt: skip
# One generator of each kind per keyword: a keyword with only one of them would be half covered.
assert BREAKS.keys() == VALID.keys(), sorted(BREAKS.keys() ^ VALID.keys())
