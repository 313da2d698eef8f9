"""The generators of the keywords that apply subschemas (``anyOf``, ``oneOf``, ``allOf``, ``not``,
``patternProperties``, ``propertyNames``, ``dependentRequired``, ``contains`` and its counts,
``unevaluatedProperties``), valid values and breaks alike, registered into ``_values.VALID``
and ``_domain.BREAKS``; the conditional ones (``if``, ``dependentSchemas``) are ``_conditional``'s.

A valid generator proposes values broadly (each branch's own values, the values that break an
inner schema for ``not``); ``_values.domain`` keeps those the whole schema allows. A break
generator proposes values whose only error, as the validator reports it, is the keyword's
(``_domain._breaks`` keeps only those), so an unsatisfiable proposal costs nothing.

It imports the two modules it serves inside its functions: they register its generators as they
are imported, so this one is loaded by them, not the other way round.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from refitwire.compat._values import Schema

#: Keywords holding one subschema, a list of them, or a map of them (``check_keywords`` walks them).
ONE = ("not", "propertyNames", "contains", "unevaluatedProperties")
LIST = ("anyOf", "oneOf", "allOf")
MAP = ("patternProperties",)


def _values_of(sub: Any) -> tuple[Any, ...]:
    """The values a subschema (or ``true``/``false``) allows, none when it allows none."""
    from refitwire.compat import _values

    if sub is True:
        return (0, "a", None)
    if not isinstance(sub, Mapping):
        return ()
    try:
        return _values.domain(sub)
    except _values.UnhandledKeyword:
        raise
    except Exception:  # a branch no value satisfies alone
        return ()


def _breaks_of(sub: Any) -> tuple[Any, ...]:
    from refitwire.compat._domain import breaks  # (that module registers these generators)

    return breaks(sub) if isinstance(sub, Mapping) else ()


def _member_value(schema: Schema, name: str) -> Any:
    """The first value the member ``name`` of the object ``schema`` may have (0 if undescribed)."""
    return (_values_of(schema.get("properties", {}).get(name, True)) or (0,))[0]


def _name_for(pattern: str) -> str:
    """A member name ``pattern`` matches (the simplest, ``_regex``'s search)."""
    from refitwire.compat._regex import pattern_string, simplest_match

    return pattern_string(pattern, 1, None) or simplest_match(pattern)


# -- valid values -------------------------------------------------------------------------------


def _v_branches(keyword: str) -> Callable[[Schema], Iterator[Any]]:
    from refitwire.compat import _values

    def generate(schema: Schema) -> Iterator[Any]:
        """Each branch's values, and each with the rest of the schema's keywords; and the values
        that break a branch (for ``oneOf``, valid values are those of one branch alone)."""
        rest = _values._without(schema, keyword)
        for branch in schema[keyword]:
            yield from _values_of(branch)
            if isinstance(branch, Mapping) and len(rest) > 0:
                yield from _values_of({**rest, **branch})
        if keyword == "allOf":  # objects each branch allows, merged: what allOf of objects allows
            for values in itertools.product(*(_values_of(branch)[:2] for branch in schema[keyword])):
                if values and all(isinstance(v, dict) for v in values):
                    yield {name: v for value in values for name, v in value.items()}
        for branch in schema[keyword]:
            yield from (b.value for b in _breaks_of(branch))

    return generate


def _v_not(schema: Schema) -> Iterator[Any]:
    from refitwire.compat._values import SAMPLES

    yield from (b.value for b in _breaks_of(schema["not"]))
    yield from SAMPLES.values()


def _v_pattern_properties(schema: Schema) -> Iterator[dict[str, Any]]:
    from refitwire.compat import _values

    for pattern, sub in schema["patternProperties"].items():
        for value in _values_of(sub):
            yield {**_values._object(schema, optional=False), _name_for(pattern): value}


def _v_property_names(schema: Schema) -> Iterator[dict[str, Any]]:
    from refitwire.compat import _values

    base = _values._object(schema, optional=False)
    yield base
    for name in _values_of(schema["propertyNames"]):
        if isinstance(name, str):
            yield {**base, name: _values._extra_value(schema)}


def _v_dependent_required(schema: Schema) -> Iterator[dict[str, Any]]:
    from refitwire.compat import _values

    out = _values._object(schema, optional=True)
    for trigger, needed in schema["dependentRequired"].items():
        for name in (trigger, *needed):
            if name not in out:
                out[name] = _member_value(schema, name)
    yield out


def _v_contains(schema: Schema) -> Iterator[list[Any]]:
    """Arrays holding as many items the ``contains`` schema matches as its counts allow; first,
    those and one item it does not match, which a value's own breaks can then change without
    changing the count (where the items allow one)."""
    from refitwire.compat import _values

    low, contains = schema.get("minContains", 1), schema.get("contains", True)
    matched = _values_of(contains)[:2]
    counts = _values._validator(json.dumps(contains)).is_valid
    other = [v for v in _values_of(schema.get("items", True)) if not counts(v)][:1]
    for item in matched[:1]:
        for extra in other:
            yield [item] * max(low, 1) + [extra]
    for count in dict.fromkeys((low, schema.get("maxContains", low), max(low, 1))):
        for item in matched:
            yield [item] * count


def _v_unevaluated(schema: Schema) -> Iterator[dict[str, Any]]:
    """A member nothing else evaluates (no other keyword names it) at each value it may have."""
    from refitwire.compat import _values

    for value in _values_of(schema["unevaluatedProperties"]):
        yield {**_values._object(schema, optional=False), _values._unknown_name(schema): value}


VALID: dict[str, Callable[[Schema], Iterator[Any]]] = {
    "anyOf": _v_branches("anyOf"), "oneOf": _v_branches("oneOf"), "allOf": _v_branches("allOf"),
    "not": _v_not, "patternProperties": _v_pattern_properties, "propertyNames": _v_property_names,
    "dependentRequired": _v_dependent_required, "unevaluatedProperties": _v_unevaluated,
    "contains": _v_contains, "minContains": _v_contains, "maxContains": _v_contains,
}  # fmt: skip


# -- breaks -------------------------------------------------------------------------------------


def _candidates(schema: Schema) -> Iterator[Any]:
    """Values of every JSON type, near the schema's own and its branches' own, and their breaks."""
    from refitwire.compat._values import SAMPLES

    yield from SAMPLES.values()
    for keyword in LIST:
        for branch in schema.get(keyword, ()):
            for value in _values_of(branch):
                yield value
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield from (value + 1, value - 1, -value, value + 0.5)
            yield from (b.value for b in _breaks_of(branch))


def _b_branches(keyword: str) -> Callable[[Schema], Iterator[Any]]:
    def generate(schema: Schema) -> Iterator[Any]:
        from refitwire.compat._domain import Break
        from refitwire.wire import schema_types

        allowed = schema_types(schema)
        for value in _candidates(schema):
            if allowed and not _of_types(value, allowed):
                continue  # a JSON type no branch allows: TYPE's, not the branches'
            how = "none" if keyword == "anyOf" else "not exactly one"
            yield Break(keyword, (), value, f"{_short(value)}, matching {how} of its branches")

    return generate


def _b_all_of(schema: Schema) -> Iterator[Any]:
    for n, branch in enumerate(schema["allOf"]):
        for inner in _breaks_of(branch):
            yield type(inner)(inner.keyword, inner.at, inner.value, f"branch {n}: {inner.what}")


def _b_not(schema: Schema) -> Iterator[Any]:
    from refitwire.compat._domain import Break

    for value in _values_of(schema["not"]):
        yield Break("not", (), value, f"{_short(value)}, which its not allows")


def _b_pattern_properties(schema: Schema) -> Iterator[Any]:
    from refitwire.compat import _values

    for pattern, sub in schema["patternProperties"].items():
        name = _name_for(pattern)
        for inner in _breaks_of(sub):
            value = {**_values._object(schema, optional=False), name: inner.value}
            yield type(inner)(inner.keyword, (name, *inner.at), value, f"member {name}: {inner.what}")


def _b_property_names(schema: Schema) -> Iterator[Any]:
    from refitwire.compat import _values

    for inner in _breaks_of(schema["propertyNames"]):
        if isinstance(inner.value, str) and not inner.at:
            value = {**_values._object(schema, optional=False), inner.value: _values._extra_value(schema)}
            names = _values.unknown_names(schema)  # padded to minProperties with names it allows
            while len(value) < schema.get("minProperties", 0):
                value[next(names)] = _values._extra_value(schema)
            yield type(inner)(inner.keyword, (), value, f"a member named {_short(inner.value)}: {inner.what}")


def _b_dependent_required(schema: Schema) -> Iterator[Any]:
    from refitwire.compat._domain import Break

    for trigger, needed in schema["dependentRequired"].items():
        for missing in needed:
            value = next(_v_dependent_required(schema))
            value.pop(missing, None)
            yield Break("dependentRequired", (), value, f"{trigger} without {missing}")


def _b_contains(schema: Schema) -> Iterator[Any]:
    """One matching item short of ``minContains`` (of one, without it), padded or not with items
    it does not match; one past ``maxContains``. The validator names the count it misses."""
    from refitwire.compat import _values
    from refitwire.compat._domain import Break

    low, high = schema.get("minContains", 1), schema.get("maxContains")
    matching = list(_values_of(schema.get("contains", True))[:1])
    fillers = [v for v in _values_of(_values._item_schema(schema, 0)) if not _values._seen(v, matching)]
    if low > 0:
        for value in ([*matching * (low - 1)], *([*matching * (low - 1), f] for f in fillers[:2])):
            for keyword in ("contains", "minContains"):
                yield Break(keyword, (), value, f"{len(value)} items, fewer than {low} of them it contains")
    if high is not None and matching:
        yield Break("maxContains", (), matching * (high + 1), f"more than {high} items it contains")


def _b_unevaluated(schema: Schema) -> Iterator[Any]:
    """A member nothing else evaluates: any one (``false``), or one its schema refuses. The
    validator reports the keyword at the object, not inside the member."""
    from refitwire.compat import _values
    from refitwire.compat._domain import Break

    extra, name = schema["unevaluatedProperties"], _values._unknown_name(schema)
    if extra is False:
        value = {**_values._object(schema, optional=True), name: 0}
        yield Break("unevaluatedProperties", (), value, f"with a member {name} nothing else evaluates")
    for inner in _breaks_of(extra):
        value = {**_values._object(schema, optional=False), name: inner.value}
        yield Break("unevaluatedProperties", (), value, f"unevaluated member {name}: {inner.what}")


BREAKS: dict[str, Callable[[Schema], Iterator[Any]]] = {
    "anyOf": _b_branches("anyOf"), "oneOf": _b_branches("oneOf"), "allOf": _b_all_of, "not": _b_not,
    "patternProperties": _b_pattern_properties, "propertyNames": _b_property_names,
    "dependentRequired": _b_dependent_required, "unevaluatedProperties": _b_unevaluated,
    "contains": _b_contains, "minContains": _b_contains, "maxContains": _b_contains,
}  # fmt: skip


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _of_types(value: Any, types: tuple[str, ...]) -> bool:
    from refitwire.compat import _values

    return any(_values._validator(json.dumps({"type": t})).is_valid(value) for t in types)
