"""The keyword-level comparisons of the walk: types, values, bounds, lengths, patterns, the rest.

Each function compares one keyword family of two subschemas at the same location and
yields a :class:`Change` per difference; provably equivalent rewrites are reported as
``EQUIVALENT_REWRITE`` (info), never as changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from refitwire.gate._change import _JSON_TYPES, _LENGTHS, _MODELLED, _VERSION_STAMPS, ANNOTATIONS, Change
from refitwire.gate._equivalence import integer_bound, integer_only, same_pattern
from refitwire.gate._rules import Rule
from refitwire.wire import join, unmodelled_reason


#: Keywords that never change which instances validate.
def types(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    old_types, new_types = _types(old.get("type")), _types(new.get("type"))
    if old_types == new_types:
        return
    where, here = join(at, "type"), path
    old_null = old_types is None or "null" in old_types
    new_null = new_types is None or "null" in new_types
    if old_types is not None and new_types is not None and old_null != new_null:
        rule_id = Rule.NULLABLE_ADDED if new_null else Rule.NULLABLE_REMOVED
        yield Change(
            rule_id,
            where,
            here,
            f"null {'now' if new_null else 'no longer'} allowed",
            old.get("type"),
            new.get("type"),
        )
    old_rest = None if old_types is None else old_types - {"null"}
    new_rest = None if new_types is None else new_types - {"null"}
    if old_rest == new_rest:
        return
    if _covers(new_rest, old_rest):
        rule_id = Rule.TYPE_WIDENED
    elif _covers(old_rest, new_rest):
        rule_id = Rule.TYPE_NARROWED
    else:
        rule_id = Rule.TYPE_CHANGED
    detail = f"type {show_value(old.get('type'))} -> {show_value(new.get('type'))}"
    yield Change(rule_id, where, here, detail, old.get("type"), new.get("type"))


# -- enum and const ----------------------------------------------------------------------


def values(
    old: dict[str, Any], new: dict[str, Any], at: str, path: str, wire_id: str | None
) -> Iterator[Change]:
    old_values, new_values = _values(old), _values(new)
    if old_values == new_values:
        return
    here = path
    keyword = "const" if "const" in new or ("const" in old and "enum" not in new) else "enum"
    where = join(at, keyword)
    if old_values is None:
        yield Change(
            Rule.ENUM_INTRODUCED,
            where,
            here,
            f"restricted to {_show_values(new_values)}",
            None,
            _plain(new_values),
        )
        return
    if new_values is None:
        yield Change(
            Rule.ENUM_DROPPED,
            where,
            here,
            f"no longer restricted to {_show_values(old_values)}",
            _plain(old_values),
            None,
        )
        return
    if "const" in old and "const" in new:
        wire = old.get("x-rule") == "SCHEMA_ID" or old["const"] == wire_id
        rule_id = Rule.WIRE_ID_CHANGED if wire else Rule.CONST_CHANGED
        yield Change(
            rule_id,
            where,
            here,
            f"const {show_value(old['const'])} -> {show_value(new['const'])}",
            old["const"],
            new["const"],
        )
        return
    added, removed = new_values - old_values, old_values - new_values
    if added:
        yield Change(
            Rule.ENUM_VALUE_ADDED,
            where,
            here,
            f"now allows {_show_values(added)}",
            None,
            _plain(added),
        )
    if removed:
        yield Change(
            Rule.ENUM_VALUE_REMOVED,
            where,
            here,
            f"no longer allows {_show_values(removed)}",
            _plain(removed),
            None,
        )


# -- numeric bounds ------------------------------------------------------------------------


def numeric(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    here = path
    integers = integer_only(old) and integer_only(new)
    for low in (True, False):
        old_raw, new_raw = _bound(old, low), _bound(new, low)
        old_bound, new_bound = old_raw, new_raw
        if integers:  # maximum 64 and exclusiveMaximum 65 say the same of integers
            old_bound, new_bound = integer_bound(old_raw, low), integer_bound(new_raw, low)
        if old_bound == new_bound:
            if old_raw != new_raw:
                side = "lower" if low else "upper"
                yield Change(
                    Rule.EQUIVALENT_REWRITE,
                    join(at, _bound_keyword(new, low)),
                    here,
                    f"{side} bound rewritten; for integers it is still {_show_bound(new_bound)}",
                    old_raw,
                    new_raw,
                )
            continue
        keyword = _bound_keyword(new if new_bound is not None else old, low)
        tighter = _tighter(new_bound, old_bound, low)
        rule_id = Rule.NUMERIC_BOUND_TIGHTENED if tighter else Rule.NUMERIC_BOUND_LOOSENED
        yield Change(
            rule_id,
            join(at, keyword),
            here,
            f"{'lower' if low else 'upper'} bound {_show_bound(old_bound)} -> {_show_bound(new_bound)}",
            old.get(keyword),
            new.get(keyword),
        )
    old_step, new_step = old.get("multipleOf"), new.get("multipleOf")
    if old_step != new_step:
        # stricter: every multiple of the new step is one of the old; looser: the reverse
        stricter = old_step is None or (new_step is not None and _divides(old_step, new_step))
        looser = new_step is None or (old_step is not None and _divides(new_step, old_step))
        rule_id = Rule.MULTIPLE_OF_CHANGED
        if stricter and not looser:
            rule_id = Rule.NUMERIC_BOUND_TIGHTENED
        elif looser and not stricter:
            rule_id = Rule.NUMERIC_BOUND_LOOSENED
        yield Change(
            rule_id, join(at, "multipleOf"), here, f"multipleOf {old_step} -> {new_step}", old_step, new_step
        )


# -- lengths -------------------------------------------------------------------------------


def lengths(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    here = path
    for low_kw, high_kw in _LENGTHS:
        old_low, new_low = old.get(low_kw, 0), new.get(low_kw, 0)
        if old_low != new_low:
            rule_id = Rule.LENGTH_BOUND_TIGHTENED if new_low > old_low else Rule.LENGTH_BOUND_LOOSENED
            yield Change(
                rule_id,
                join(at, low_kw),
                here,
                f"{low_kw} {old_low} -> {new_low}",
                old.get(low_kw),
                new.get(low_kw),
            )
        old_high, new_high = old.get(high_kw, math.inf), new.get(high_kw, math.inf)
        if old_high != new_high:
            rule_id = Rule.LENGTH_BOUND_TIGHTENED if new_high < old_high else Rule.LENGTH_BOUND_LOOSENED
            yield Change(
                rule_id,
                join(at, high_kw),
                here,
                f"{high_kw} {_show_bound((old_high, False))} -> {_show_bound((new_high, False))}",
                old.get(high_kw),
                new.get(high_kw),
            )


def strings_arrays(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    here = path
    old_pattern, new_pattern = old.get("pattern"), new.get("pattern")
    if old_pattern != new_pattern and same_pattern(old_pattern, new_pattern):
        yield Change(
            Rule.EQUIVALENT_REWRITE,
            join(at, "pattern"),
            here,
            f"pattern {show_value(old_pattern)} -> {show_value(new_pattern)} matches the same strings",
            old_pattern,
            new_pattern,
        )
    elif old_pattern != new_pattern:
        if old_pattern is None:
            rule_id = Rule.PATTERN_ADDED
        elif new_pattern is None:
            rule_id = Rule.PATTERN_REMOVED
        else:
            rule_id = Rule.PATTERN_CHANGED
        yield Change(
            rule_id,
            join(at, "pattern"),
            here,
            f"pattern {show_value(old_pattern)} -> {show_value(new_pattern)}",
            old_pattern,
            new_pattern,
        )
    old_unique, new_unique = bool(old.get("uniqueItems")), bool(new.get("uniqueItems"))
    if old_unique != new_unique:
        rule_id = Rule.UNIQUE_ITEMS_ADDED if new_unique else Rule.UNIQUE_ITEMS_REMOVED
        yield Change(
            rule_id,
            join(at, "uniqueItems"),
            here,
            f"uniqueItems {old_unique} -> {new_unique}",
            old.get("uniqueItems"),
            new.get("uniqueItems"),
        )


# -- annotations and everything else ---------------------------------------------------------


def annotation_changes(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    keys = (
        (old.keys() | new.keys()) - _VERSION_STAMPS - {"x-added-in"}
        if at == ""
        else ((old.keys() | new.keys()) - {"x-added-in"})
    )
    for key in sorted(keys):
        if (key in ANNOTATIONS or key.startswith("x-")) and old.get(key) != new.get(key):
            yield Change(
                Rule.ANNOTATION_CHANGED,
                join(at, key),
                path,
                f"{key} changed",
                old.get(key),
                new.get(key),
            )


def unmodelled(old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
    for key in sorted(old.keys() | new.keys()):
        if key in _MODELLED or key in ANNOTATIONS or key in _VERSION_STAMPS or key.startswith("x-"):
            continue
        if old.get(key) != new.get(key):
            # one the kit does not model at all: the reason the generators give for refusing it
            reason = unmodelled_reason(key) or "the gate does not model it"
            yield Change(
                Rule.UNCLASSIFIED_CHANGE,
                join(at, key),
                path,
                f"{key} changed; {reason}",
                old.get(key),
                new.get(key),
            )


def _types(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    types = frozenset([value] if isinstance(value, str) else value)
    if not types <= _JSON_TYPES:
        raise ValueError(f"unknown type {sorted(types - _JSON_TYPES)}")
    return types


def _covers(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    """Whether every value of type set ``narrow`` is of type set ``wide``."""
    if wide is None:
        return True
    if narrow is None:
        return False
    expanded = set(wide) | ({"integer"} if "number" in wide else set())
    return narrow <= expanded


def _values(schema: dict[str, Any]) -> frozenset[str] | None:
    if "const" in schema:
        return frozenset([_canon(schema["const"])])
    if "enum" in schema:
        return frozenset(_canon(v) for v in schema["enum"])
    return None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _plain(values: frozenset[str] | None) -> list[Any] | None:
    return None if values is None else [json.loads(v) for v in sorted(values)]


def _show_values(values: frozenset[str] | None) -> str:
    return "nothing" if values is None else ", ".join(sorted(values))


def show_value(value: Any) -> str:
    """A schema value as the findings print it: JSON."""
    return json.dumps(value)


def _bound(schema: dict[str, Any], low: bool) -> tuple[float, bool] | None:
    """The effective (value, exclusive) lower or upper bound; None when unbounded."""
    inclusive = schema.get("minimum" if low else "maximum")
    exclusive = schema.get("exclusiveMinimum" if low else "exclusiveMaximum")
    candidates = []
    if isinstance(inclusive, (int, float)) and not isinstance(inclusive, bool):
        candidates.append((inclusive, False))
    if isinstance(exclusive, (int, float)) and not isinstance(exclusive, bool):
        candidates.append((exclusive, True))
    if not candidates:
        return None
    # the tighter of the two: for a lower bound the larger value (exclusive wins a tie)
    return (
        max(candidates, key=lambda b: (b[0], b[1]))
        if low
        else min(candidates, key=lambda b: (b[0], not b[1]))
    )


def _bound_keyword(schema: dict[str, Any], low: bool) -> str:
    exclusive = "exclusiveMinimum" if low else "exclusiveMaximum"
    return exclusive if exclusive in schema else ("minimum" if low else "maximum")


def _tighter(new: tuple[float, bool] | None, old: tuple[float, bool] | None, low: bool) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    if new[0] != old[0]:
        return new[0] > old[0] if low else new[0] < old[0]
    return new[1] and not old[1]


def _show_bound(bound: tuple[float, bool] | None) -> str:
    if bound is None or bound[0] == math.inf:
        return "none"
    return f"{bound[0]}{' (exclusive)' if bound[1] else ''}"


def _divides(step: float, value: float) -> bool:
    quotient = value / step
    return quotient == int(quotient)


def closed(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties") is False or schema.get("unevaluatedProperties") is False


def open_schema(schema: Any) -> Any:
    return True if schema == {} else schema
