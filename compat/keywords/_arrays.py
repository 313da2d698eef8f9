"""The generators of the keywords about an array: its items (``items``, ``prefixItems``), their
count, their uniqueness, and the items it contains (``contains`` and its counts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from refitwire.compat.keywords._build import arrays, item_schema, item_values, values_of
from refitwire.compat.keywords._context import (
    LONGEST,
    Break,
    Context,
    Generators,
    Schema,
    seen,
    validator,
    without,
)

# -- valid values -------------------------------------------------------------------------------


def _v_items(schema: Schema, ctx: Context) -> Iterator[list[Any]]:
    """One array per value each place may take (every item value rides once)."""
    places = max(len(schema.get("prefixItems", [])), 1, schema.get("minItems", 0))
    places = min(places, schema.get("maxItems", places))
    for index in range(places):
        for n in range(len(item_values(ctx, schema, index))):
            yield from arrays(ctx, schema, places, index, n)


def _v_item_counts(schema: Schema, ctx: Context) -> Iterator[list[Any]]:
    """The shortest and the longest (full) array."""
    low = schema.get("minItems", 0)
    high = schema.get("maxItems", max(low, len(schema.get("prefixItems", [])), 2))
    for length in (low, min(high, LONGEST)):
        yield from arrays(ctx, schema, length)


def _v_contains(schema: Schema, ctx: Context) -> Iterator[list[Any]]:
    """Arrays holding as many items the ``contains`` schema matches as its counts allow; first,
    those and one item it does not match, which a value's own breaks can then change without
    changing the count (where the items allow one)."""
    low, contains = schema.get("minContains", 1), schema.get("contains", True)
    matched = values_of(ctx, contains)[:2]
    counts = validator(json.dumps(contains)).is_valid
    other = [v for v in values_of(ctx, schema.get("items", True)) if not counts(v)][:1]
    for item in matched[:1]:
        for extra in other:
            yield [item] * max(low, 1) + [extra]
    for count in dict.fromkeys((low, schema.get("maxContains", low), max(low, 1))):
        for item in matched:
            yield [item] * count


# -- breaks -------------------------------------------------------------------------------------


def _b_items(schema: Schema, ctx: Context) -> Iterator[Break]:
    """Each break of an item's schema, as the first item and (where two fit) as the last."""
    prefix = len(schema.get("prefixItems", []))
    counted = schema.get("minContains", 1) if "contains" in schema else 0  # left whole beside the broken one
    length = max(schema.get("minItems", 0), prefix + 1, counted + 1)
    length = min(length, schema.get("maxItems", length))
    if schema.get("items") is False:  # no item past prefixItems: one more is its break (maxItems allowing)
        if prefix < schema.get("maxItems", prefix + 1):
            for base in arrays(ctx, schema, prefix):
                yield Break(
                    "items", (prefix,), [*base, 0], f"{prefix + 1} items, past its {prefix} prefixItems"
                )
        return
    yield from _item_breaks(ctx, schema, prefix, length)
    if length < schema.get("maxItems", length + 1):
        yield from _item_breaks(ctx, schema, length, length + 1)


def _b_prefix_items(schema: Schema, ctx: Context) -> Iterator[Break]:
    length = max(schema.get("minItems", 0), len(schema["prefixItems"]))
    for index in range(len(schema["prefixItems"])):
        yield from _item_breaks(ctx, schema, index, length)


def _item_breaks(ctx: Context, schema: Schema, index: int, length: int) -> Iterator[Break]:
    sub = item_schema(schema, index)
    if not isinstance(sub, dict) or index >= length:
        return
    for base in arrays(ctx, schema, length):
        for inner in ctx.breaks(sub):
            value = [*base[:index], inner.value, *base[index + 1 :]]
            yield inner.inside(index, value, f"item {index}")


def _b_min_items(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["minItems"]
    if n > 0:
        for value in arrays(ctx, schema, n - 1):
            yield Break("minItems", (), value, f"{n - 1} items, fewer than its minItems {n}")


def _b_max_items(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["maxItems"]
    if n < LONGEST:
        for value in arrays(ctx, without(schema, "maxItems"), n + 1):
            yield Break("maxItems", (), value, f"{n + 1} items, more than its maxItems {n}")


def _b_unique(schema: Schema, ctx: Context) -> Iterator[Break]:
    if schema["uniqueItems"] is True:
        length = max(schema.get("minItems", 0), 2)
        for value in arrays(ctx, without(schema, "uniqueItems"), length):
            value[1] = value[0]
            yield Break("uniqueItems", (), value, "two equal items")


def _b_contains(schema: Schema, ctx: Context) -> Iterator[Break]:
    """One matching item short of ``minContains`` (of one, without it), padded or not with items
    it does not match; one past ``maxContains``. The validator names the count it misses."""
    low, high = schema.get("minContains", 1), schema.get("maxContains")
    matching = list(values_of(ctx, schema.get("contains", True))[:1])
    fillers = [v for v in values_of(ctx, item_schema(schema, 0)) if not seen(v, matching)]
    if low > 0:
        for value in ([*matching * (low - 1)], *([*matching * (low - 1), f] for f in fillers[:2])):
            for keyword in ("contains", "minContains"):
                yield Break(keyword, (), value, f"{len(value)} items, fewer than {low} of them it contains")
    if high is not None and matching:
        yield Break("maxContains", (), matching * (high + 1), f"more than {high} items it contains")


GENERATORS: dict[str, Generators] = {
    "items": Generators(_v_items, _b_items, nested=True),
    "prefixItems": Generators(_v_items, _b_prefix_items, nested=True),
    "minItems": Generators(_v_item_counts, _b_min_items),
    "maxItems": Generators(_v_item_counts, _b_max_items),
    "uniqueItems": Generators(_v_item_counts, _b_unique),
    "contains": Generators(_v_contains, _b_contains),
    "minContains": Generators(_v_contains, _b_contains),
    "maxContains": Generators(_v_contains, _b_contains),
}
