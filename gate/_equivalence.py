"""Rewrites that provably change nothing, so the walker never reports them as changes.

Two patterns are the same when their parse trees are equal once every character class is
reduced to its sorted, merged code-point ranges (``[0-9a-f]`` is ``[a-f0-9]`` is
``[0-9a-cd-f]``). For integers, ``maximum: 64`` is ``exclusiveMaximum: 65`` (and every
other bound is reduced to its inclusive integer form). Anything the parser cannot read is
left as text: a rewrite is only ignored when it is proven equivalent.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
import sys
from typing import Any

import jsonschema_rs

# The regular-expression parser of the standard library (``sre_parse`` before 3.11).
_sre: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")

_IN, _LITERAL, _RANGE, _NEGATE = (getattr(_sre, name) for name in ("IN", "LITERAL", "RANGE", "NEGATE"))


def _ranges(items: list[Any]) -> tuple[Any, ...] | None:
    """A character class as (negated, merged ranges, other items); None if it cannot be reduced."""
    spans, rest, negated = [], [], False
    for op, arg in items:
        if op is _NEGATE:
            negated = True
        elif op is _LITERAL:
            spans.append((arg, arg))
        elif op is _RANGE:
            spans.append(arg)
        else:  # a category such as \d: kept as it is, compared by identity
            rest.append(repr((op, arg)))
    merged: list[list[int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return (negated, tuple(map(tuple, merged)), tuple(sorted(rest)))


def _canon(node: Any) -> Any:
    if isinstance(node, (list, tuple)) or type(node).__name__ == "SubPattern":
        items = list(node)
        if len(items) == 2 and items[0] is _IN:
            return ("IN", _ranges(items[1]))
        if len(items) == 2 and items[0] is _LITERAL:  # a one-character literal is a one-element class
            return ("IN", ((False, ((items[1], items[1]),), ())))
        return tuple(_canon(item) for item in items)
    return repr(node) if not isinstance(node, (int, str, type(None))) else node


@functools.cache
def pattern_form(pattern: str) -> Any:
    """A canonical form of ``pattern``; the pattern itself when it cannot be parsed, or when the
    readers' regular-expression engine refuses it (Python reads ``a{,3}`` as ``a{0,3}``; it does not)."""
    try:
        jsonschema_rs.validator_for({"pattern": pattern})
        parsed = _sre.parse(pattern)
        # global inline flags ("(?i)", "(?x)", ...) live on the parse state, not in its items
        return (parsed.state.flags, _canon(parsed))
    except (re.error, RecursionError, TypeError, ValueError, OverflowError):
        return ("text", pattern)


def same_pattern(old: Any, new: Any) -> bool:
    if old == new:
        return True
    if not (isinstance(old, str) and isinstance(new, str)):
        return False
    return bool(pattern_form(old) == pattern_form(new))


def integer_only(schema: dict[str, Any]) -> bool:
    types = schema.get("type")
    return types == "integer" or (isinstance(types, list) and set(types) - {"null"} == {"integer"})


def integer_bound(bound: tuple[float, bool] | None, low: bool) -> tuple[float, bool] | None:
    """An integer bound as its inclusive form: ``< 65`` is ``<= 64``, ``>= 0.5`` is ``>= 1``."""
    if bound is None or not math.isfinite(bound[0]):
        return bound
    value, exclusive = bound
    if low:
        inclusive = math.floor(value) + 1 if exclusive else math.ceil(value)
    else:
        inclusive = math.ceil(value) - 1 if exclusive else math.floor(value)
    return (inclusive, False)
