"""The generators of the keywords that combine subschemas: ``anyOf``, ``oneOf``, ``allOf``, ``not``.

A valid generator proposes values broadly (each branch's own values, the values that break an
inner schema for ``not``); the caller keeps those the whole schema allows. A break generator
proposes values whose only error, as the validator reports it, is the keyword's (the caller
keeps only those), so an unsatisfiable proposal costs nothing.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from refitwire.compat.keywords._build import breaks_of, values_of
from refitwire.compat.keywords._context import (
    SAMPLES,
    Break,
    Context,
    Generators,
    Schema,
    short,
    validator,
    without,
)
from refitwire.wire import schema_types

#: The keywords whose value is a list of branches (each one's values are proposed for all three).
_BRANCHING = ("anyOf", "oneOf", "allOf")


def _v_branches(keyword: str) -> Callable[[Schema, Context], Iterator[Any]]:
    def generate(schema: Schema, ctx: Context) -> Iterator[Any]:
        """Each branch's values, and each with the rest of the schema's keywords; and the values
        that break a branch (for ``oneOf``, valid values are those of one branch alone)."""
        rest = without(schema, keyword)
        for branch in schema[keyword]:
            yield from values_of(ctx, branch)
            if isinstance(branch, Mapping) and len(rest) > 0:
                yield from values_of(ctx, {**rest, **branch})
        if keyword == "allOf":  # objects each branch allows, merged: what allOf of objects allows
            for values in itertools.product(*(values_of(ctx, branch)[:2] for branch in schema[keyword])):
                if values and all(isinstance(v, dict) for v in values):
                    yield {name: v for value in values for name, v in value.items()}
        for branch in schema[keyword]:
            yield from (b.value for b in breaks_of(ctx, branch))

    return generate


def _v_not(schema: Schema, ctx: Context) -> Iterator[Any]:
    yield from (b.value for b in breaks_of(ctx, schema["not"]))
    yield from SAMPLES.values()


def _candidates(schema: Schema, ctx: Context) -> Iterator[Any]:
    """Values of every JSON type, near the schema's own and its branches' own, and their breaks."""
    yield from SAMPLES.values()
    for keyword in _BRANCHING:
        for branch in schema.get(keyword, ()):
            for value in values_of(ctx, branch):
                yield value
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield from (value + 1, value - 1, -value, value + 0.5)
            yield from (b.value for b in breaks_of(ctx, branch))


def _b_branches(keyword: str) -> Callable[[Schema, Context], Iterator[Break]]:
    def generate(schema: Schema, ctx: Context) -> Iterator[Break]:
        allowed = schema_types(schema)
        for value in _candidates(schema, ctx):
            if allowed and not _of_types(value, allowed):
                continue  # a JSON type no branch allows: TYPE's, not the branches'
            how = "none" if keyword == "anyOf" else "not exactly one"
            yield Break(keyword, (), value, f"{short(value)}, matching {how} of its branches")

    return generate


def _b_all_of(schema: Schema, ctx: Context) -> Iterator[Break]:
    for n, branch in enumerate(schema["allOf"]):
        for inner in breaks_of(ctx, branch):
            yield Break(inner.keyword, inner.at, inner.value, f"branch {n}: {inner.what}")


def _b_not(schema: Schema, ctx: Context) -> Iterator[Break]:
    for value in values_of(ctx, schema["not"]):
        yield Break("not", (), value, f"{short(value)}, which its not allows")


def _of_types(value: Any, types: tuple[str, ...]) -> bool:
    return any(validator(json.dumps({"type": t})).is_valid(value) for t in types)


GENERATORS: dict[str, Generators] = {
    "anyOf": Generators(_v_branches("anyOf"), _b_branches("anyOf")),
    "oneOf": Generators(_v_branches("oneOf"), _b_branches("oneOf")),
    "allOf": Generators(_v_branches("allOf"), _b_all_of, nested=True),
    "not": Generators(_v_not, _b_not),
}
