"""Vectors generated from the wire model: the dimensions that are mechanical.

Nothing here names a member, a bound or a type: every level, member, JSON type, bound,
pattern, constant and rule is read from ``refitwire.wire`` (the schemas), so a new member
gets its vectors with no edit. What SPEC.md alone says is applied as stated there: which
rule a wrong value breaks (section 2.2, ``x-rule``), the order of section 2.7 (an integer
written as a number with an integer value is ``INTEGER_LITERAL`` in range and the range rule
out of it; one that is not an integer is ``TYPE``; one that overflows a double is ``JSON``)
and the element sizes of section 4. Each vector is checked against the reference reader by
``tests/test_vectors.py`` like every other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import _clone
import jsonschema_rs
from _vector_kit import D1, VERSIONS, blob_doc, py_dumps, shard, tensor, vector
from refitwire import wire
from refitwire.compat.keywords import SAMPLES, domain, wrong_values
from refitwire.wire import NO_CONST, Member

DOCUMENT = "rendezvous"
#: Replaced by a literal written as is (a number in a form json.dumps never writes).
RAW = "\u0000raw\u0000"


def model() -> wire.WireModel:
    return _clone.registry().newest_model(DOCUMENT)


def base(version: str | None = None) -> dict[str, Any]:
    """A valid blob with every member of the newest version (or of ``version``) present (the one
    all dimensions vary)."""
    doc = blob_doc([tensor(shards=[shard(digest=D1)])], step=7, meta=b"\xfbmeta\x00\xff")
    shape = model() if version is None else _clone.registry().wire_model(DOCUMENT, version)
    for path, level in shape.levels.items():
        for obj in _objects(doc, path):
            for member in level.members:
                if member.name not in obj:  # a member the hand-made payload lacks (a constant: its value)
                    obj[member.name] = fullest(member) if member.const is NO_CONST else member.const
    return doc


def fullest(member: Member) -> Any:
    """A value of ``member`` with something in it (the first non-empty one of its domain), so each
    dimension has an item or inner member to vary; an integer where it may be one or something
    else (``anyOf`` an integer or a string), so its integer vectors have an integer to write."""
    values = [v for v in domain(member.schema) if v is not None]
    if () in member.integer_places:
        values = [v for v in values if _integer(v)] or values
    if not values:  # (a member that may only be null)
        return None
    return next((v for v in values if v not in ([], {}, "")), values[0])


def _objects(doc: dict[str, Any], path: tuple[str, ...]) -> list[dict[str, Any]]:
    found = [doc]
    for name in path:
        found = [item for obj in found for item in obj.get(name) or [] if isinstance(item, dict)]
    return found


def place(member: Member) -> tuple[str | int, ...]:
    """The path of ``member`` in the first object of its level (``("tensors", 0, "elsize")``)."""
    return (*(step for name in member.level for step in (name, 0)), member.name)


def knowing(member: Member) -> tuple[str, ...]:
    """The released versions whose schema declares ``member`` at its level."""
    return tuple(
        v for v in VERSIONS if _clone.registry().wire_model(DOCUMENT, v).knows(member.name, *member.level)
    )


def put(doc: Any, path: tuple[str | int, ...], value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


def get(doc: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def text(doc: dict[str, Any], raw: str | None = None) -> bytes:
    """The blob of ``doc``, with the value ``RAW`` written as ``raw``."""
    written = py_dumps(doc)
    return written if raw is None else written.replace(json.dumps(RAW).encode(), raw.encode(), 1)


def bad(description: str, blob: bytes, rule: str, at: str, versions: tuple[str, ...], tags: list[str],
        parsed: Any = None) -> dict[str, Any]:  # fmt: skip
    from _vector_upstream import upstream_verdict

    return vector(description, blob, invalid={v: (rule, at) for v in versions}, parsed=parsed,
                  upstream=upstream_verdict(DOCUMENT, blob), tags=tags)  # fmt: skip


def good(description: str, blob: bytes, tags: list[str], parsed: Any = None) -> dict[str, Any]:
    return vector(description, blob, parsed=parsed, tags=tags)


# -- integers written in other forms -----------------------------------------------------------


@dataclass(frozen=True)
class IntegerPlace:
    """What applies to one integer value: the bounds of its schema and the rule that names them."""

    bounds: tuple[int | None, int | None]
    rule: str


def integer_places() -> Iterator[tuple[Member, tuple[str | int, ...], IntegerPlace]]:
    """(member, path of one integer value in the base blob, its bounds and rule) per place where an
    integer sits, at any depth of any member (``Member.integer_places``: in an object, an array
    of arrays); the rule is the model's for that place (``WireModel.rule_at``)."""
    doc, newest = base(), model()
    for member in newest.members():
        for steps in member.integer_places:
            path, schema = _concrete(doc, place(member), steps, member.schema)
            if path is not None and _integer(get(doc, path)):  # (where a string may sit instead, say)
                yield member, path, IntegerPlace(wire.integer_bounds(schema), newest.rule_at("maximum", path))


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _concrete(
    doc: Any, path: tuple[str | int, ...], steps: tuple[str, ...], schema: Any
) -> tuple[tuple[str | int, ...] | None, Any]:
    """The path of the first value at ``steps`` below ``path`` in ``doc`` (None when the base
    blob has none there), and the schema that applies to it."""
    value = get(doc, path)
    for step in steps:
        if step == "*" or wire.is_index(step):
            if not isinstance(value, list):
                return None, schema
            index = _free_item(value, schema) if step == "*" else int(step)
            if index >= len(value):
                return None, schema
            schema = schema["items"] if step == "*" else schema["prefixItems"][index]
            value, path = value[index], (*path, index)
        else:
            if not isinstance(value, dict) or step not in value:
                return None, schema
            schema = schema["properties"][step]
            value, path = value[step], (*path, step)
    return path, schema


def _free_item(items: list[Any], schema: Any) -> int:
    """The first item a value of any kind may stand in for: one ``contains`` does not count (a
    change to a counted one would break ``contains`` too); ``len(items)`` when there is none."""
    contains = schema.get("contains")
    if contains is None:
        return 0
    counts = jsonschema_rs.validator_for(contains).is_valid
    return next((i for i, item in enumerate(items) if not counts(item)), len(items))


def literal_forms(value: int) -> list[tuple[str, int | float]]:
    """Ways to write ``value`` that are numbers but not integer literals (SPEC 2.2, INTEGER_LITERAL)."""
    digits = str(value)
    sign, magnitude = ("-", digits[1:]) if value < 0 else ("", digits)
    forms = [f"{digits}.0", f"{digits}.000", f"{digits}e0", f"{digits}E0", f"{digits}E+0"]
    if value != 0:
        forms.append(f"{digits}0e-1")
        for e in "eE":  # one digit before the point: -1.00e2 for -100
            forms.append(f"{sign}{magnitude[0]}.{magnitude[1:] or '0'}{e}{len(magnitude) - 1}")
    else:
        forms += ["-0.0", "-0e0", "0E-5"]
    return [(form, value) for form in forms]


def literal_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per integer member (and array-of-integer items): every non-literal form of an in-range
    value (INTEGER_LITERAL), a fraction (TYPE), integer values past each bound written as numbers
    (the range rule), ``-0`` (a legal integer literal), and a number that overflows a double (JSON)."""
    valid, invalid = [], []
    doc = base()
    for member, path, bounds_of in integer_places():
        low, high = bounds_of.bounds
        value = get(doc, path)
        at = wire.pointer(*path)
        versions = knowing(member)
        rule = bounds_of.rule
        tags = ["integer-literal", f"member:{wire.pointer(*member.level, member.name)}"]

        def blob(raw: str, path: tuple[str | int, ...] = path) -> bytes:
            copy = json.loads(json.dumps(doc))
            put(copy, path, RAW)
            return text(copy, raw)

        for form, _ in literal_forms(value):
            invalid.append(bad(f"{at} written as {form} (an integer in range, not written as one)", blob(form),
                               "INTEGER_LITERAL", at, versions, tags))  # fmt: skip
        for fraction in (f"{value}.5", f"{value * 10 + 5}e-1", f"{value}.0000001"):
            invalid.append(bad(f"{at} written as {fraction} (not an integer)", blob(fraction), "TYPE", at,
                               versions, tags))  # fmt: skip
        if low is not None:
            for form in (f"{low - 1}.0", f"{low - 1}e0"):
                invalid.append(bad(f"{at} written as {form} (an integer below the minimum, as a number)",
                                   blob(form), rule, at, versions, tags))  # fmt: skip
        if high is not None:
            power = len(str(high))  # 10**power is the first power of ten past the bound
            for form in (f"1e{power}", f"1E+{power}", f"{high + 1}.0"):
                invalid.append(bad(f"{at} written as {form} (an integer above the maximum, as a number)",
                                   blob(form), rule, at, versions, tags))  # fmt: skip
        underflow = "1e-400"  # its nearest double is 0 (SPEC 2.7: a number is judged by it)
        if value == 0:
            valid.append(good(f"{at} written as -0 (an integer literal: reads as 0)", blob("-0"), tags,
                              parsed=doc))  # fmt: skip
            invalid.append(bad(f"{at} written as {underflow} (0, in range, not written as an integer)",
                               blob(underflow), "INTEGER_LITERAL", at, versions, tags))  # fmt: skip
        elif low is not None and low > 0:
            for zero in ("-0", underflow):
                invalid.append(bad(f"{at} written as {zero} (zero is below the minimum)", blob(zero), rule, at,
                                   versions, tags))  # fmt: skip
        for huge in ("1e400", "-1e400"):
            invalid.append(bad(f"{at} written as {huge} (overflows a double)", blob(huge), "JSON", "",
                               VERSIONS, [*tags, "overflow"]))  # fmt: skip
    return valid, invalid


# -- values of the wrong JSON type -------------------------------------------------------------


def wrong_types(member: Member) -> list[str]:
    """The JSON types a value of ``member`` must not have (none when its schema allows any)."""
    if not member.types:
        return []
    allowed = set(member.types) | ({"null"} if member.nullable else set())
    if "integer" in allowed:
        allowed.discard("number")  # 7.5 is no integer; an integral number is INTEGER_LITERAL's
    if "number" in allowed:
        allowed.add("integer")
    return [t for t in SAMPLES if t not in allowed]


def type_places() -> Iterator[tuple[Member, tuple[str | int, ...], Member]]:
    """(member, path, the member or items whose type applies) for every member and every item kind."""
    doc = base()
    for member in model().members():
        yield member, place(member), member
        items = get(doc, place(member))
        free = _free_item(items, member.schema) if isinstance(items, list) else 0
        if member.items is not None and free < len(items):  # (an array that may hold no item has none)
            yield member, (*place(member), free), member.items


def type_vectors() -> list[dict[str, Any]]:
    """Every member, and the items of every array member, at every level, given each JSON type
    it must not have: ``TYPE`` at its pointer, or the member's own rule for a constant (any other
    value of ``schema`` is ``SCHEMA_ID``, section 2.7 step 2)."""
    found = []
    doc = base()
    for member, path, typed in type_places():
        at = wire.pointer(*path)
        tags = ["type", f"member:{wire.pointer(*member.level, member.name)}"]
        if typed.const is not NO_CONST and "type" not in typed.schema:  # any other value: its rule
            kinds = [t for t in SAMPLES if t != "string" or not isinstance(typed.const, str)]
            rule = typed.rule or "SCHEMA"
        else:
            kinds, rule = wrong_types(typed), "TYPE"
        for kind in kinds:
            for value in wrong_values(kind):  # a truthy and a falsy one (``false``, ``0``, ``""``)
                copy = json.loads(json.dumps(doc))
                put(copy, path, value)
                shown = json.dumps(value)
                found.append(
                    bad(f"{at} is {shown} (a JSON {kind})", text(copy), rule, at, knowing(member), tags)
                )
    return found
