"""The generators of the keywords about one value: its type, its allowed values, a number's
bounds and step, a string's length and pattern. Each valid generator proposes values at the
keyword's extremes; each break generator values past them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from refitwire.compat.keywords._build import arrays, domain_or_empty, object_of, strings
from refitwire.compat.keywords._context import (
    SAMPLES,
    Break,
    Context,
    Generators,
    Schema,
    integer,
    low_high,
    same,
    types,
    validator,
    without,
    wrong_values,
)

# -- valid values -------------------------------------------------------------------------------


def _v_type(schema: Schema, ctx: Context) -> Iterator[Any]:
    """The simplest value of each allowed type (null included for a nullable member)."""
    for kind in types(schema):
        yield from _simplest(ctx, schema, kind)


def _simplest(ctx: Context, schema: Schema, kind: str) -> Iterator[Any]:
    if kind == "null":
        yield None
    elif kind == "boolean":
        yield from (False, True)
    elif kind in ("integer", "number"):
        yield from _numbers(schema, kind == "integer")
    elif kind == "string":
        yield from strings(schema, schema.get("minLength", 0))
    elif kind == "array":
        yield from arrays(ctx, schema, schema.get("minItems", 0))
    elif kind == "object":
        yield object_of(ctx, schema, optional=False)


def _numbers(schema: Schema, is_integer: bool) -> Iterator[Any]:
    """The lowest, the highest and a middle value (snapped to ``multipleOf``), or 0 and 1 unbounded."""
    low, high = low_high(schema, is_integer)
    step = schema.get("multipleOf")
    points = [p for p in (low, high) if p is not None]
    if low is not None and high is not None:
        points.insert(1, (low + high) // 2 if is_integer else (low + high) / 2)
    if not points or (low is None) != (high is None):
        base = points[0] if points else 0
        points += [base + 1, base + 7] if high is None else [base - 1, base - 7]
    for point in points:
        if step:
            point = (point // step + (1 if point % step else 0)) * step
        yield int(point) if is_integer else float(point) if not isinstance(point, int) else point
    if not is_integer and low is None and high is None:
        yield 0.5


def _v_lengths(schema: Schema, ctx: Context) -> Iterator[str]:
    """The shortest and the longest string, and one between."""
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    for length in (low, high, None if high is None else (low + high) // 2):
        if length is not None:
            yield from strings(schema, length)


def _v_enum(schema: Schema, ctx: Context) -> Iterator[Any]:
    yield from schema["enum"]


def _v_const(schema: Schema, ctx: Context) -> Iterator[Any]:
    yield schema["const"]


# -- breaks -------------------------------------------------------------------------------------


def _b_type(schema: Schema, ctx: Context) -> Iterator[Break]:
    allowed = set(types(schema))
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


def _b_enum(schema: Schema, ctx: Context) -> Iterator[Break]:
    rest = without(schema, "enum")
    for allowed in schema["enum"]:
        for value in _near(allowed):
            if not any(same(value, v) for v in schema["enum"]):
                yield Break("enum", (), value, f"{json.dumps(value)}, not one of its values")
    for value in domain_or_empty(ctx, rest):
        if not any(same(value, v) for v in schema["enum"]):
            yield Break("enum", (), value, f"{json.dumps(value)}, not one of its values")


def _b_const(schema: Schema, ctx: Context) -> Iterator[Break]:
    for value in _near(schema["const"]):
        yield Break("const", (), value, f"{json.dumps(value)}, not its constant")


def _b_bound(keyword: str, low: bool) -> Callable[[Schema, Context], Iterator[Break]]:
    def generate(schema: Schema, ctx: Context) -> Iterator[Break]:
        bound = schema[keyword]
        if integer(schema) and not float(bound).is_integer():  # 10.5: the integers it allows end at 10
            past = math.ceil(bound) - 1 if low else math.floor(bound) + 1
            yield Break(keyword, (), past, f"{past}, {'below' if low else 'above'} its {keyword} {bound}")
            return
        exclusive = keyword.startswith("exclusive")
        steps = [schema["multipleOf"]] if "multipleOf" in schema else []  # past the bound, still a multiple
        steps += [1] if integer(schema) else [0.5, 1]
        for step in [0] if exclusive and "multipleOf" not in schema else steps:
            past = bound - step if low else bound + step
            if isinstance(past, float) and past == bound and step:  # a bound past 2^53: the next double
                past = math.nextafter(bound, -math.inf if low else math.inf)
            if not exclusive or step == 0 or (past < bound if low else past > bound):
                yield Break(keyword, (), past, f"{past}, {'below' if low else 'above'} its {keyword} {bound}")
        if exclusive and "multipleOf" in schema:
            yield Break(keyword, (), bound, f"{bound}, at its {keyword}")

    return generate


def _b_multiple(schema: Schema, ctx: Context) -> Iterator[Break]:
    low, _ = low_high(schema, integer(schema))
    base = (low or 0) + schema["multipleOf"]
    for off in (1, schema["multipleOf"] / 2):
        value = base + off if not integer(schema) or float(off).is_integer() else base + 1
        yield Break(
            "multipleOf",
            (),
            int(value) if integer(schema) else value,
            f"not a multiple of {schema['multipleOf']}",
        )


def _b_min_length(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["minLength"]
    if n > 0:
        for value in strings(without(schema, "minLength"), n - 1):
            yield Break("minLength", (), value, f"{n - 1} characters, shorter than its minLength {n}")


def _b_max_length(schema: Schema, ctx: Context) -> Iterator[Break]:
    n = schema["maxLength"]
    for value in strings(without(schema, "maxLength"), n + 1):
        yield Break("maxLength", (), value, f"{n + 1} characters, longer than its maxLength {n}")


def _b_pattern(schema: Schema, ctx: Context) -> Iterator[Break]:
    rest = without(schema, "pattern")
    valid = [v for v in ctx.domain(schema) if isinstance(v, str)]
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
    matches = validator(json.dumps({"pattern": pattern})).is_valid
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


GENERATORS: dict[str, Generators] = {
    "type": Generators(_v_type, _b_type),
    "enum": Generators(_v_enum, _b_enum),
    "const": Generators(_v_const, _b_const),
    "minimum": Generators(_v_type, _b_bound("minimum", True)),
    "maximum": Generators(_v_type, _b_bound("maximum", False)),
    "exclusiveMinimum": Generators(_v_type, _b_bound("exclusiveMinimum", True)),
    "exclusiveMaximum": Generators(_v_type, _b_bound("exclusiveMaximum", False)),
    "multipleOf": Generators(_v_type, _b_multiple),
    "minLength": Generators(_v_lengths, _b_min_length),
    "maxLength": Generators(_v_lengths, _b_max_length),
    "pattern": Generators(_v_lengths, _b_pattern),
}
