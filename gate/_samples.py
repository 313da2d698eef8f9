"""Values worth trying at a changed location, and small instances of a schema, for the witness search."""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Iterator
from typing import Any

from refitwire.gate._document import Document


def interesting(writer: dict[str, Any], reader: dict[str, Any], document: Document) -> Iterator[Any]:
    """Values worth trying at the changed location, most telling first."""
    yield from _values_of(writer, document)
    yield from _values_of(reader, document)
    yield from (None, True, False, 0, 1, -1, 0.5, "", "a", [], {}, "A", "0", "_", " ", "a.b", "\u00e9")
    for schema in (writer, reader):
        yield from _pattern_examples(
            schema.get("pattern"), (reader if schema is writer else writer).get("pattern")
        )
    yield minimal_instance(writer, document)


def _values_of(schema: dict[str, Any], document: Document) -> Iterator[Any]:
    if "const" in schema:
        yield schema["const"]
    yield from schema.get("enum", [])
    for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = schema.get(keyword)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and math.isfinite(bound):
            integral = isinstance(bound, int) or bound == int(bound)
            for delta in (0, -1, 1):
                yield int(bound) + delta if integral else bound + delta
            yield bound - 0.5
            if integral and abs(bound) > 2:  # values a real writer meets: powers of two below the bound
                exponent = int(abs(bound)).bit_length()
                yield from (2**k for k in range(exponent, max(exponent - 24, 0), -1))
    if isinstance(schema.get("multipleOf"), (int, float)):
        step = schema["multipleOf"]
        yield from (step, step * 2, step * 3, step / 2)
    for low, high in (("minLength", "maxLength"), ("minItems", "maxItems")):
        for keyword in (low, high):
            n = schema.get(keyword)
            if isinstance(n, int) and n <= 4096:
                for size in (n - 1, n, n + 1):
                    if size >= 0:
                        yield ("a" * size) if low == "minLength" else [_item(schema, document)] * size
    if schema.get("uniqueItems"):
        yield [_item(schema, document)] * 2
    types = schema.get("type")
    for kind in [types] if isinstance(types, str) else types or []:
        yield {
            "null": None,
            "boolean": True,
            "object": {},
            "array": [],
            "number": 0.5,
            "integer": 7,
            "string": "s",
        }[kind]


def _item(schema: dict[str, Any], document: Document) -> Any:
    items = schema.get("items")
    return minimal_instance(items, document) if isinstance(items, dict) else 0


def _pattern_examples(pattern: Any, other: Any) -> list[str]:
    """A string matching ``pattern`` and (when possible) not ``other``."""
    if not isinstance(pattern, str):
        return []
    return list(_pattern_example(pattern, other if isinstance(other, str) else None))


@functools.cache
def _pattern_example(pattern: str, other: str | None) -> tuple[str, ...]:
    # imported here, outside the try: hypothesis is needed once a pattern has to be satisfied,
    # and a missing kit must reach the CLI instead of reading as "no example"
    import hypothesis
    import hypothesis.strategies as st
    from refitwire.compat import hypothesis_draws, hypothesis_settings

    try:
        compiled_other = re.compile(other) if other is not None else None
        with hypothesis_draws():
            found = hypothesis.find(
                st.from_regex(pattern, fullmatch=True),
                lambda s: compiled_other is None or not compiled_other.search(s),
                settings=hypothesis_settings(80, shrink=False),
            )
    except Exception:  # NoSuchExample, Unsatisfiable, a bad regex: no example
        return ()
    return (found,)


def minimal_instance(schema: Any, document: Document | None) -> Any:
    """A small instance of ``schema`` (best effort: callers verify)."""
    if document is not None:
        schema = document.deref(schema)
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if schema.get("enum"):
        return copy.deepcopy(schema["enum"][0])
    types = schema.get("type")
    kinds = [types] if isinstance(types, str) else list(types or [])
    kind = next((k for k in kinds if k != "null"), None)
    if kind is None:
        kind = "object" if "properties" in schema else ("null" if kinds else "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: minimal_instance(props.get(name, {}), document) for name in schema.get("required", [])}
    if kind == "array":
        count = schema.get("minItems", 0)
        return [minimal_instance(schema.get("items", {}), document) for _ in range(count)]
    if kind == "string":
        examples = _pattern_examples(schema.get("pattern"), None)
        text = examples[0] if examples else ""
        return text + "a" * max(0, schema.get("minLength", 0) - len(text))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = 0 if low is None else math.floor(low) + (1 if "exclusiveMinimum" in schema else 0)
        return value
    if kind == "boolean":
        return False
    return None
