"""The values several keywords' generators build alike: strings of a length, arrays of a length,
objects with their required (or every) member, names of members an object does not declare,
and a subschema's values or breaks where it may allow none. Each takes the :class:`Context`
that gives a subschema's values, never importing the functions behind it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from refitwire.compat.keywords._context import (
    LONGEST,
    Break,
    Context,
    Schema,
    UnhandledKeyword,
    key,
    seen,
    validator,
)
from refitwire.compat.keywords._regex import pattern_string, simplest_match, taking_every_part

#: What a padding name may end in.
_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def first(ctx: Context, schema: Schema) -> Any:
    return ctx.domain(schema)[0]


def strings(schema: Schema, length: int) -> Iterator[str]:
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


def item_schema(schema: Schema, index: int) -> Any:
    prefix = schema.get("prefixItems", [])
    return prefix[index] if index < len(prefix) else schema.get("items", True)


def item_values(ctx: Context, schema: Schema, index: int) -> tuple[Any, ...]:
    sub = item_schema(schema, index)
    if sub is True:
        return (0, "a", None)
    if sub is False:
        return ()
    values = ctx.domain(sub)
    if isinstance(schema.get("contains"), Mapping):
        # the first minContains places hold items it counts, the others items it does not where
        # there are such: an array built so holds as many as it needs and no more
        counted = validator(key(schema["contains"]))
        wanted = index < schema.get("minContains", 1)
        values = tuple(sorted(values, key=lambda v: counted.is_valid(v) != wanted))
    return values


def arrays(
    ctx: Context, schema: Schema, length: int, vary: int | None = None, value: int = 0
) -> Iterator[list[Any]]:
    """An array of ``length`` items, each the first value its place allows (distinct ones under
    ``uniqueItems``); item ``vary`` takes its ``value``-th value instead."""
    items: list[Any] = []
    for index in range(length):
        values = item_values(ctx, schema, index)
        if not values:
            return
        choice = value if index == vary else 0
        if schema.get("uniqueItems"):
            left = [v for v in values[choice:] + values[:choice] if not seen(v, items)]
            if not left:
                return
            items.append(left[0])
        else:
            items.append(values[choice % len(values)])
    yield items


def object_of(ctx: Context, schema: Schema, optional: bool, **chosen: Any) -> dict[str, Any]:
    """The required members (each at its first value), the optional ones too when ``optional``."""
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        if name in chosen:
            out[name] = chosen[name]
        elif (name in required or optional) and sub is not False:
            out[name] = 0 if sub is True else first(ctx, sub)
    for name in required - out.keys():
        out[name] = 0  # required but not described
    return out


def extra_value(ctx: Context, schema: Schema) -> Any:
    """A value an unknown member of ``schema`` may have."""
    extra = schema.get("additionalProperties", True)
    return first(ctx, extra) if isinstance(extra, Mapping) else 0


def unknown_name(ctx: Context, schema: Schema) -> str:
    """A member name the object does not declare (see :func:`unknown_names`)."""
    return next(unknown_names(ctx, schema), "x_unknown")


def unknown_names(ctx: Context, schema: Schema) -> Iterator[str]:
    """Member names the object does not declare, that match none of its ``patternProperties``
    (so ``additionalProperties`` is what applies to them) and that its ``propertyNames`` allows:
    the first names an unknown member, the rest pad an object to a count of members. Built from
    the allowed names ``propertyNames`` gives and plain ones, each also one character longer or
    with its last character changed, so a pattern on names still leaves enough of them."""
    declared = schema.get("properties", {})
    matched = [validator(json.dumps({"pattern": p})).is_valid for p in schema.get("patternProperties", {})]
    rule = schema.get("propertyNames")
    allowed = (
        validator(json.dumps(rule)).is_valid
        if isinstance(rule, Mapping)
        else (lambda _name: rule is not False)
    )
    bases = (
        [str(n) for n in reversed(ctx.domain({**rule, "type": "string"}))]
        if isinstance(rule, Mapping)
        else []
    )
    bases += ["x_unknown", "unknown"]
    taken: set[str] = set()
    for base in bases:
        for name in itertools.chain(
            [base],
            (base + c for c in _NAME_CHARACTERS),
            (base[:-1] + c for c in _NAME_CHARACTERS if base),
            (f"{base}{n}" for n in range(LONGEST)),
        ):
            if (
                name not in taken
                and name not in declared
                and not any(m(name) for m in matched)
                and allowed(name)
            ):
                taken.add(name)
                yield name


def values_of(ctx: Context, sub: Any) -> tuple[Any, ...]:
    """The values a subschema (or ``true``/``false``) allows, none when it allows none."""
    if sub is True:
        return (0, "a", None)
    if not isinstance(sub, Mapping):
        return ()
    try:
        return ctx.domain(sub)
    except UnhandledKeyword:
        raise
    except Exception:  # a branch no value satisfies alone
        return ()


def breaks_of(ctx: Context, sub: Any) -> tuple[Break, ...]:
    return ctx.breaks(sub) if isinstance(sub, Mapping) else ()


def domain_or_empty(ctx: Context, schema: Schema) -> tuple[Any, ...]:
    try:
        return ctx.domain(schema)
    except UnhandledKeyword:
        raise
    except Exception:  # an unsatisfiable variant (the keyword cannot be broken alone)
        return ()


def proposed(
    ctx: Context, generate: Callable[[Schema], tuple[Any, ...]], schema: Schema | None
) -> tuple[Any, ...]:
    """What ``generate`` (``ctx.domain`` or ``ctx.breaks``) gives for a merged proposal, none where
    its keywords together allow no value; a keyword no generator knows is still refused."""
    if schema is None:
        return ()
    ctx.check(schema)
    try:
        return generate(schema)
    except UnhandledKeyword:  # (after the check: no value satisfies it)
        return ()


def member_value(ctx: Context, schema: Schema, name: str) -> Any:
    """The first value the member ``name`` of the object ``schema`` may have (0 if undescribed)."""
    return (values_of(ctx, schema.get("properties", {}).get(name, True)) or (0,))[0]


def name_for(pattern: str) -> str:
    """A member name ``pattern`` matches (the simplest, ``_regex``'s search)."""
    return pattern_string(pattern, 1, None) or simplest_match(pattern)
