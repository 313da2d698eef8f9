"""What every keyword's generators are handed and share: the :class:`Context` through which they
ask for a subschema's values and breaks, the :class:`Break` they yield, the error of a keyword
no generator knows, and the small facts about JSON values they build from.

The context is an argument, not an import: a keyword's generators never import the functions
that call them (``_generate``), so the keyword modules form no cycle.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema_rs
from refitwire.wire import JSON_TYPES, schema_types

Schema = Mapping[str, Any]

#: Arrays longer than this are not built whole (a ``maxItems`` of 2^31 is still broken at 2^31 + 1
#: only when it is at most this).
LONGEST = 4096
#: One value of each JSON type (SPEC 2.2, TYPE); an integer's wrong "number" is a fraction.
SAMPLES: dict[str, Any] = {"string": "7", "integer": 7, "number": 7.5, "boolean": True, "null": None,
                           "array": [], "object": {}}  # fmt: skip
#: And the falsy value of each type whose sample is not: a reader that checks a member only when
#: it is truthy (``if (step)``) takes ``false``, ``0`` or ``""`` for an absent one.
FALSY: dict[str, Any] = {"string": "", "integer": 0, "boolean": False}


def wrong_values(kind: str) -> tuple[Any, ...]:
    """The values of JSON type ``kind`` a member that must not have it is broken with."""
    return (SAMPLES[kind], FALSY[kind]) if kind in FALSY else (SAMPLES[kind],)


class UnhandledKeyword(ValueError):
    """A schema keyword the generators do not know (or a schema no generated value satisfies)."""

    def __init__(self, keyword: str, where: str, reason: str = "") -> None:
        reason = reason or ("no value generator handles it (refitwire.compat.keywords); "
                            "add one before the schema can use it")  # fmt: skip
        super().__init__(f"keyword {keyword!r} at {where or '(the member)'}: {reason}")
        self.keyword, self.where, self.reason = keyword, where, reason


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


class Context(Protocol):
    """What a keyword's generators ask of the whole: a subschema's values and breaks."""

    def domain(self, schema: Schema) -> tuple[Any, ...]:
        """Valid values of ``schema`` spanning its domain (copies the caller may fill in)."""

    def breaks(self, schema: Schema) -> tuple[Break, ...]:
        """Values breaking one keyword of ``schema`` each (copies)."""

    def check(self, schema: Any) -> None:
        """Raise :class:`UnhandledKeyword` for the first keyword of ``schema`` no generator knows."""


@dataclass(frozen=True)
class Generators:
    """One keyword's record: its valid values and its breaks, each proposed for the whole schema
    (the caller keeps the values the whole schema allows, and the breaks whose only error is
    the keyword's)."""

    valid: Callable[[Schema, Context], Iterator[Any]]
    breaks: Callable[[Schema, Context], Iterator[Break]]
    #: its breaks are its parts' (reported at an item, an inner member or an inner keyword), so
    #: having none of its own is no gap (``if`` only selects which of ``then`` and ``else`` applies)
    nested: bool = False


def key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


@functools.cache
def validator(schema_json: str) -> Any:
    """The reference's validator (jsonschema-rs) of a schema given as JSON text."""
    return jsonschema_rs.validator_for(json.loads(schema_json))


def same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def seen(value: Any, found: list[Any]) -> bool:
    return any(same(value, other) for other in found)


def types(schema: Schema) -> list[str]:
    return list(schema_types(schema) or JSON_TYPES)


def integer(schema: Schema) -> bool:
    return "integer" in types(schema) and "number" not in types(schema)


def without(schema: Schema, *keywords: str, **more: Any) -> dict[str, Any]:
    return {**{k: v for k, v in schema.items() if k not in keywords}, **more}


def low_high(schema: Schema, integer: bool) -> tuple[float | None, float | None]:
    """The lowest and highest number ``schema`` allows (an exclusive bound stepped inside)."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if "exclusiveMinimum" in schema:
        x = schema["exclusiveMinimum"]
        x = x + 1 if integer else x + (abs(x) or 1) * 1e-9
        low = x if low is None else max(low, x)
    if "exclusiveMaximum" in schema:
        x = schema["exclusiveMaximum"]
        x = x - 1 if integer else x - (abs(x) or 1) * 1e-9
        high = x if high is None else min(high, x)
    return low, high


def short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
