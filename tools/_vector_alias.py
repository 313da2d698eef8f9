"""Integer values that alias into range when kept in a narrow type, for every integer member and
array item of the wire model.

A reader that stores an integer in 8, 16, 32 or 64 bits (or in a double) reads ``v + 2^k`` as
``v`` (and ``v - 2^k`` as ``v`` in unsigned arithmetic); one that rounds to a double reads
``v + 2^53 + 1`` as its neighbour. Each of these values, for every integer place: when the
member's bounds (the schema's) allow it, a valid blob whose decoded form must hold the value
exactly (``READ_EXACT_INTEGERS``); otherwise the member's range rule at its pointer (SPEC 2.2,
2.7 step 3). The base value itself is in range, so a wrapped reading is always wrong and a
wrap to a rejected value (2^32 as 0 for ``elsize``) is never the only test of a place.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from _vector_model import RAW, bad, base, get, good, integer_places, knowing, put, text
from refitwire import wire

#: The widths a reader may keep an integer in, and the first integer a double cannot hold.
WIDTHS = (8, 16, 32, 64)
DOUBLE_EXACT = 2**53


def aliases(value: int) -> Iterator[tuple[str, int]]:
    """(how it aliases, the aliasing value) for ``value``."""
    for bits in WIDTHS:
        yield f"{value} + 2^{bits} (reads as {value} in {bits} bits)", value + 2**bits
        yield f"{value} - 2^{bits} (reads as {value} in unsigned {bits} bits)", value - 2**bits
    yield f"{value} + 2^53 + 1 (rounds as a double)", value + DOUBLE_EXACT + 1
    yield f"2^53 + {value} + 2^32 (past 2^53 and wrapping in 32 bits)", value + DOUBLE_EXACT + 2**32


def _fit_boxes(doc: dict[str, Any]) -> None:
    """Grow each tensor's ``full_shape`` to hold its shards' boxes (SPEC 2.3 BOX_IN_BOUNDS), so an
    aliasing offset or extent breaks no geometry rule; sizes that are not integers are left alone."""
    for t in doc["tensors"]:
        for s in t["shards"]:
            for d, (offset, extent) in enumerate(zip(s["shard_offset"], s["shape"])):
                if all(isinstance(x, int) and x >= 0 for x in (offset, extent, t["full_shape"][d])):
                    t["full_shape"][d] = max(t["full_shape"][d], offset + extent)


def alias_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    valid, invalid = [], []
    doc = base()
    for member, path, bounds_of in integer_places():
        low, high = bounds_of.bounds
        at = wire.pointer(*path)
        rule = bounds_of.rule
        tags = ["integer-alias", f"member:{wire.pointer(*member.level, member.name)}"]
        value = get(doc, path)
        for what, alias in aliases(value):
            copy = json.loads(json.dumps(doc))
            put(copy, path, alias)
            inside = (low is None or alias >= low) and (high is None or alias <= high)
            if inside:
                _fit_boxes(copy)
                valid.append(good(f"{at} is {alias}: {what}", text(copy), [*tags, "large-integers"]))
            else:
                invalid.append(bad(f"{at} is {alias}: {what}, out of range", text(copy), rule, at,
                                   knowing(member), tags))  # fmt: skip
    return valid, invalid


def double_judged_vectors() -> list[dict[str, Any]]:
    """A number written with a fraction or exponent is judged as the double nearest to it (SPEC
    2.7, "Numbers"): ``v.00000000000000001`` is the double ``v`` (an integer in range, so
    ``INTEGER_LITERAL``), and a bound of 2^53 or more written as ``bound.0`` is the double past it
    (2^63 - 1 rounds to 2^63, 2^64 - 1 to 2^64: the range rule), never the exact decimal."""
    found = []
    doc = base()
    for member, path, bounds_of in integer_places():
        at = wire.pointer(*path)
        tags = ["integer-literal", "double-judged", f"member:{wire.pointer(*member.level, member.name)}"]
        rule = bounds_of.rule
        value = get(doc, path)

        def blob(raw: str, path: tuple[str | int, ...] = path) -> bytes:
            copy = json.loads(json.dumps(doc))
            put(copy, path, RAW)
            return text(copy, raw)

        tiny = f"{value}.00000000000000001"
        if float(tiny) == value:  # the double cannot hold the fraction (0 can: 1e-17 is a double)
            found.append(bad(f"{at} written as {tiny} (as a double, the integer {value}: INTEGER_LITERAL)",
                             blob(tiny), "INTEGER_LITERAL", at, knowing(member), tags))  # fmt: skip
        high = bounds_of.bounds[1]
        if (
            high is not None and high >= DOUBLE_EXACT and float(high) > high
        ):  # the double rounds past the bound
            found.append(bad(f"{at} written as {high}.0 (as a double, {int(float(high))}: past the maximum)",
                             blob(f"{high}.0"), rule, at, knowing(member), tags))  # fmt: skip
    return found
