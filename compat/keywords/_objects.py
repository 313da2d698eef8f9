"""The generators of the keywords about an object: its members (``properties``, ``required``,
``dependentRequired``), its unknown ones (``additionalProperties``, ``patternProperties``,
``unevaluatedProperties``), their names (``propertyNames``) and their count."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from refitwire.compat.keywords._build import (
    breaks_of,
    extra_value,
    member_value,
    name_for,
    object_of,
    unknown_name,
    unknown_names,
    values_of,
)
from refitwire.compat.keywords._context import Break, Context, Generators, Schema, short

# -- valid values -------------------------------------------------------------------------------


def _v_properties(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    """With every optional member, then each inner member at each of its values."""
    yield object_of(ctx, schema, optional=True)
    for name, sub in schema.get("properties", {}).items():
        if isinstance(sub, Mapping):
            for value in ctx.domain(sub):
                yield object_of(ctx, schema, optional=False, **{name: value})


def _v_required(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    """Only the required members (every optional one absent)."""
    yield object_of(ctx, schema, optional=False)


def _v_additional(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    """An unknown member at each value an open object allows for it."""
    extra = schema["additionalProperties"]
    if extra is False:
        return
    for value in (0, "a") if extra is True else ctx.domain(extra):
        yield {**object_of(ctx, schema, optional=False), unknown_name(ctx, schema): value}


def _v_property_counts(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    low = schema.get("minProperties", 0)
    out = object_of(ctx, schema, optional=False)
    names = unknown_names(ctx, schema)
    while len(out) < low:
        out[next(names)] = extra_value(ctx, schema)
    yield out


def _v_pattern_properties(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    for pattern, sub in schema["patternProperties"].items():
        for value in values_of(ctx, sub):
            yield {**object_of(ctx, schema, optional=False), name_for(pattern): value}


def _v_property_names(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    base = object_of(ctx, schema, optional=False)
    yield base
    for name in values_of(ctx, schema["propertyNames"]):
        if isinstance(name, str):
            yield {**base, name: extra_value(ctx, schema)}


def _v_dependent_required(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    out = object_of(ctx, schema, optional=True)
    for trigger, needed in schema["dependentRequired"].items():
        for name in (trigger, *needed):
            if name not in out:
                out[name] = member_value(ctx, schema, name)
    yield out


def _v_unevaluated(schema: Schema, ctx: Context) -> Iterator[dict[str, Any]]:
    """A member nothing else evaluates (no other keyword names it) at each value it may have."""
    for value in values_of(ctx, schema["unevaluatedProperties"]):
        yield {**object_of(ctx, schema, optional=False), unknown_name(ctx, schema): value}


# -- breaks -------------------------------------------------------------------------------------


def _b_properties(schema: Schema, ctx: Context) -> Iterator[Break]:
    for name, sub in schema["properties"].items():
        if isinstance(sub, dict):
            for inner in ctx.breaks(sub):
                yield inner.inside(name, object_of(ctx, schema, optional=True, **{name: inner.value}), name)


def _b_required(schema: Schema, ctx: Context) -> Iterator[Break]:
    for name in schema["required"]:
        value = object_of(ctx, schema, optional=True)
        value.pop(name, None)
        yield Break("required", (), value, f"without its required member {name}")


def _b_additional(schema: Schema, ctx: Context) -> Iterator[Break]:
    extra, name = schema["additionalProperties"], unknown_name(ctx, schema)
    if extra is False:  # beside every optional member, and beside the required ones alone (a count)
        for optional in (True, False):
            value = {**object_of(ctx, schema, optional=optional), name: 0}
            yield Break("additionalProperties", (), value, f"with an unknown member {name}")
    elif isinstance(extra, dict):
        for inner in ctx.breaks(extra):
            value = {**object_of(ctx, schema, optional=False), name: inner.value}
            yield Break(inner.keyword, (name, *inner.at), value, f"unknown member {name}: {inner.what}")


def _b_min_properties(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["minProperties"]
    if n > 0:
        value = object_of(ctx, schema, optional=False)
        if len(value) < n:
            yield Break("minProperties", (), value, f"fewer than {n} members")


def _b_max_properties(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["maxProperties"]
    value, names = object_of(ctx, schema, optional=True), unknown_names(ctx, schema)
    while len(value) <= n:
        value[next(names)] = extra_value(ctx, schema)
    yield Break("maxProperties", (), value, f"more than {n} members")


def _b_pattern_properties(schema: Schema, ctx: Context) -> Iterator[Break]:
    for pattern, sub in schema["patternProperties"].items():
        name = name_for(pattern)
        for inner in breaks_of(ctx, sub):
            value = {**object_of(ctx, schema, optional=False), name: inner.value}
            yield Break(inner.keyword, (name, *inner.at), value, f"member {name}: {inner.what}")


def _b_property_names(schema: Schema, ctx: Context) -> Iterator[Break]:
    for inner in breaks_of(ctx, schema["propertyNames"]):
        if isinstance(inner.value, str) and not inner.at:
            value = {**object_of(ctx, schema, optional=False), inner.value: extra_value(ctx, schema)}
            names = unknown_names(ctx, schema)  # padded to minProperties with names it allows
            while len(value) < schema.get("minProperties", 0):
                value[next(names)] = extra_value(ctx, schema)
            yield Break(inner.keyword, (), value, f"a member named {short(inner.value)}: {inner.what}")


def _b_dependent_required(schema: Schema, ctx: Context) -> Iterator[Break]:
    for trigger, needed in schema["dependentRequired"].items():
        for missing in needed:
            value = next(_v_dependent_required(schema, ctx))
            value.pop(missing, None)
            yield Break("dependentRequired", (), value, f"{trigger} without {missing}")


def _b_unevaluated(schema: Schema, ctx: Context) -> Iterator[Break]:
    """A member nothing else evaluates: any one (``false``), or one its schema refuses. The
    validator reports the keyword at the object, not inside the member."""
    extra, name = schema["unevaluatedProperties"], unknown_name(ctx, schema)
    if extra is False:
        value = {**object_of(ctx, schema, optional=True), name: 0}
        yield Break("unevaluatedProperties", (), value, f"with a member {name} nothing else evaluates")
    for inner in breaks_of(ctx, extra):
        value = {**object_of(ctx, schema, optional=False), name: inner.value}
        yield Break("unevaluatedProperties", (), value, f"unevaluated member {name}: {inner.what}")


GENERATORS: dict[str, Generators] = {
    "properties": Generators(_v_properties, _b_properties, nested=True),
    "required": Generators(_v_required, _b_required),
    "additionalProperties": Generators(_v_additional, _b_additional),
    "minProperties": Generators(_v_property_counts, _b_min_properties),
    "maxProperties": Generators(_v_property_counts, _b_max_properties),
    "patternProperties": Generators(_v_pattern_properties, _b_pattern_properties, nested=True),
    "propertyNames": Generators(_v_property_names, _b_property_names, nested=True),
    "dependentRequired": Generators(_v_dependent_required, _b_dependent_required),
    "unevaluatedProperties": Generators(_v_unevaluated, _b_unevaluated),
}
