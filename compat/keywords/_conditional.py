"""The generators of the keywords that apply a subschema only when a condition holds (``if`` with
``then`` and ``else``, ``dependentSchemas``), valid values and breaks, as ``_composed``'s
are (which see).

``then`` applies to a value its ``if`` allows, ``else`` to one it does not (without an ``if``
neither applies); a ``dependentSchemas`` entry applies to an object holding the entry's member.
A valid generator proposes values on both sides of the condition; a break generator proposes
values on the side where the subschema applies that break exactly one of its keywords, named
as the validator names it (the subschema's own keyword at its place, as for ``allOf``), so the
rule is the one ``WireModel.rule_at`` gives that keyword there. Proposals are built from the
schema's other keywords merged with the subschemas; the caller keeps only what the whole
schema confirms, so a merge that contradicts itself costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from refitwire.compat.keywords._build import member_value, object_of, proposed
from refitwire.compat.keywords._context import Break, Context, Generators, Schema, short, validator, without

#: The keywords holding the condition and its two sides.
_SIDES = ("if", "then", "else")


def _as_schema(sub: Any) -> Mapping[str, Any] | None:
    """A subschema as a mapping: ``true`` is ``{}``; None for ``false`` (it allows nothing)."""
    return {} if sub is True else sub if isinstance(sub, Mapping) else None


def _merged(rest: Schema, *subs: Any) -> dict[str, Any] | None:
    """``rest`` and ``subs`` as one schema, for proposals: member schemas merged member by member,
    required members joined, any other keyword the later one's; None where one is ``false``."""
    out = dict(rest)
    for sub in map(_as_schema, subs):
        if sub is None:
            return None
        for key, value in sub.items():
            if key == "properties" and isinstance(out.get(key), Mapping):
                members = dict(out[key])
                for name, member in value.items():
                    members[name] = _both(members[name], member) if name in members else member
                value = members
            elif key == "required" and isinstance(out.get(key), list):
                value = list(dict.fromkeys([*out[key], *value]))
            out[key] = value
    return out


def _both(a: Any, b: Any) -> Any:
    """Two member schemas as one (``false`` where either is)."""
    merged = _merged(a, b) if isinstance(a, Mapping) else None if a is False else _as_schema(b)
    return False if merged is None else merged


def _domain_of(ctx: Context, schema: Schema | None) -> tuple[Any, ...]:
    return proposed(ctx, ctx.domain, schema)


def _breaks_of(ctx: Context, schema: Schema | None) -> tuple[Break, ...]:
    return proposed(ctx, ctx.breaks, schema)


def _only_error(sub: Schema, value: Any) -> tuple[str, tuple[str | int, ...]] | None:
    """The keyword and place of the one error ``sub`` has for ``value``, as the validator reports
    it; None for no error, several, or a ``false`` subschema's (a refusal no keyword names)."""
    errors = list(validator(json.dumps(sub, sort_keys=True)).iter_errors(value))
    if len(errors) != 1:
        return None
    node: Any = sub
    for step in errors[0].schema_path:
        node = node[int(step)] if isinstance(node, list) else node[step]
    return None if node is False else (str(errors[0].schema_path[-1]), tuple(errors[0].instance_path))


def _breaking(sub: Schema, value: Any, inner: Break | None, context: str) -> Iterator[Break]:
    """``value`` as a break of the one keyword of ``sub`` it breaks, if it breaks one."""
    found = _only_error(sub, value)
    if found is not None:
        same = inner is not None and (inner.keyword, inner.at) == found
        what = inner.what if inner is not None and same else f"{short(value)}, breaking its {found[0]}"
        yield Break(found[0], found[1], value, f"{context}: {what}")


# -- if / then / else ---------------------------------------------------------------------------


def _rest(schema: Schema) -> dict[str, Any]:
    return without(schema, *_SIDES)


def _v_if(schema: Schema, ctx: Context) -> Iterator[Any]:
    """Values its ``if`` allows and values it does not (a side with no ``then``/``else`` is free);
    an object also with every optional member it lacks (a member only one side allows, say)."""
    holding = _merged(_rest(schema), schema["if"])
    for value in (
        *_domain_of(ctx, holding),
        *_domain_of(ctx, _rest(schema)),
        *(b.value for b in _breaks_of(ctx, holding)),
    ):
        yield value
        if isinstance(value, dict):
            yield {**object_of(ctx, schema, optional=True), **value}


def _v_then(schema: Schema, ctx: Context) -> Iterator[Any]:
    """The values ``then`` allows where ``if`` holds, and those it refuses where ``if`` does not."""
    if "if" not in schema:  # (then and else apply nowhere)
        yield from _domain_of(ctx, _rest(schema))
        return
    yield from _domain_of(ctx, _merged(_rest(schema), schema["if"], schema["then"]))
    yield from _domain_of(ctx, _merged(_rest(schema), schema["then"]))
    yield from (b.value for b in _breaks_of(ctx, _merged(_rest(schema), schema["then"])))


def _v_else(schema: Schema, ctx: Context) -> Iterator[Any]:
    """The values ``else`` allows where ``if`` does not hold (those breaking one keyword of ``if``
    among them), and those it refuses where ``if`` holds."""
    if "if" not in schema:
        yield from _domain_of(ctx, _rest(schema))
        return
    yield from _domain_of(ctx, _merged(_rest(schema), schema["else"]))
    yield from (b.value for b in _breaks_of(ctx, _merged(_rest(schema), schema["else"], schema["if"])))
    yield from (b.value for b in _breaks_of(ctx, _merged(_rest(schema), schema["else"])))


def _b_side(side: str) -> Callable[[Schema, Context], Iterator[Break]]:
    holds = side == "then"

    def generate(schema: Schema, ctx: Context) -> Iterator[Break]:
        """Values on the side of ``if`` where ``side`` applies, each breaking one of its keywords:
        its breaks, and values of that side the other keywords allow that it refuses (where
        ``if`` and ``side`` constrain the same thing, or ``if`` picks a member's value)."""
        sub, rest = _as_schema(schema[side]), _rest(schema)
        if "if" not in schema or sub is None:
            return  # no if: it applies nowhere; false: it refuses its side, no keyword of it
        condition = validator(json.dumps(schema["if"], sort_keys=True))
        broken = list(_breaks_of(ctx, _merged(rest, sub)))
        others = list(_domain_of(ctx, rest))
        if holds:
            broken += _breaks_of(ctx, _merged(rest, schema["if"], sub))
            others += _domain_of(ctx, _merged(rest, schema["if"]))
        else:
            others += (b.value for b in _breaks_of(ctx, _merged(rest, schema["if"])))
        context = f"its if {'holds' if holds else 'fails'}, its {side}"
        for inner, value in [*((b, b.value) for b in broken), *((None, v) for v in others)]:
            if condition.is_valid(value) == holds:
                yield from _breaking(sub, value, inner, context)

    return generate


# -- dependentSchemas ---------------------------------------------------------------------------


def _with(ctx: Context, schema: Schema, value: Any, trigger: str) -> Any:
    """``value`` holding the member ``trigger`` (at its first value), where it is an object."""
    if not isinstance(value, dict) or trigger in value:
        return value
    return {**value, trigger: member_value(ctx, schema, trigger)}


def _v_dependent_schemas(schema: Schema, ctx: Context) -> Iterator[Any]:
    """Objects without each trigger member and with it, its dependent schema held."""
    rest = without(schema, "dependentSchemas")
    bases = _domain_of(ctx, rest)
    yield from bases
    for trigger, sub in schema["dependentSchemas"].items():
        for value in _domain_of(ctx, _merged(rest, sub)):
            yield _with(ctx, schema, value, trigger)
        for extra in _domain_of(ctx, _as_schema(sub)):
            for base in bases[:2]:
                if isinstance(base, dict) and isinstance(extra, dict):
                    yield _with(ctx, schema, {**base, **extra}, trigger)


def _b_dependent_schemas(schema: Schema, ctx: Context) -> Iterator[Break]:
    """Objects holding a trigger member whose dependent schema is broken in one keyword: its
    breaks, and objects the other keywords allow that it refuses (a member it narrows)."""
    rest, base = without(schema, "dependentSchemas"), object_of(ctx, schema, optional=False)
    for trigger, sub in schema["dependentSchemas"].items():
        dependent = _as_schema(sub)
        if dependent is None:
            continue  # false: it refuses the trigger member, no keyword of it
        broken = (*_breaks_of(ctx, _merged(rest, dependent)), *_breaks_of(ctx, dependent))
        for inner, value in [*((b, {**base, **b.value}) for b in broken if isinstance(b.value, dict)),
                             *((None, v) for v in _domain_of(ctx, rest) if isinstance(v, dict))]:  # fmt: skip
            yield from _breaking(dependent, _with(ctx, schema, value, trigger), inner, f"with {trigger}")


def _b_if(schema: Schema, ctx: Context) -> Iterator[Break]:
    return iter(())  # it selects a side; only then and else are broken


GENERATORS: dict[str, Generators] = {
    "if": Generators(_v_if, _b_if, nested=True),
    "then": Generators(_v_then, _b_side("then"), nested=True),
    "else": Generators(_v_else, _b_side("else"), nested=True),
    "dependentSchemas": Generators(_v_dependent_schemas, _b_dependent_schemas, nested=True),
}
