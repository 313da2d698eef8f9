"""A whole schema's values and breaks, from its keywords' records (``_table``).

:func:`domain` keeps the values each keyword proposes that the whole schema allows, in order,
without repeats; :func:`breaks` keeps the proposed breaks whose only error, as jsonschema-rs
(the validator the reference uses) reports it, is that keyword at the place the
:class:`Break` names. The keywords' generators reach back here for a subschema's values only
through the :class:`Context` they are handed.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from refitwire.compat.keywords._context import Break, Context, Schema, UnhandledKeyword, key, same, validator
from refitwire.compat.keywords._table import TABLE
from refitwire.wire import KEYWORDS, asserting, asserts_nothing, unmodelled_reason


class _Whole:
    """The context the generators are handed: this module's functions, for a subschema."""

    def domain(self, schema: Schema) -> tuple[Any, ...]:
        return domain(schema)

    def breaks(self, schema: Schema) -> tuple[Break, ...]:
        return breaks(schema)

    def check(self, schema: Any) -> None:
        check_keywords(schema)


_CONTEXT: Context = _Whole()


def domain(schema: Schema) -> tuple[Any, ...]:
    """Valid values of ``schema`` spanning its domain (deterministic, in a stable order).

    Each call gets its own copies: the values are lists and dicts a caller may fill in (a blob
    built around one), and the cache's must stay as generated for the next caller."""
    return copy.deepcopy(_domain(key(schema)))


@functools.cache
def _domain(schema_json: str) -> tuple[Any, ...]:
    schema = json.loads(schema_json)
    check_keywords(schema)
    valid = validator(schema_json)
    found: list[Any] = []
    # a schema of annotations alone (what is left of an untyped enum without it) allows any value
    for keyword in asserting(schema) or ["type"]:
        for value in TABLE[keyword].valid(schema, _CONTEXT):
            if valid.is_valid(value) and not any(same(value, other) for other in found):
                found.append(value)
    if not found:
        raise UnhandledKeyword(
            ", ".join(asserting(schema)),
            "",
            "no generated value satisfies the keywords together (the schema may allow none)",
        )
    return tuple(found)


def breaks(schema: Schema) -> tuple[Break, ...]:
    """Values breaking one keyword of ``schema`` each, nested keywords included (deterministic);
    copies, as :func:`domain` gives, so a caller that fills one in leaves the cache as it was."""
    return copy.deepcopy(_breaks(json.dumps(schema, sort_keys=True)))


@functools.cache
def _breaks(schema_json: str) -> tuple[Break, ...]:
    schema = json.loads(schema_json)
    check_keywords(schema)
    checker = validator(schema_json)
    found: list[Break] = []
    for keyword in asserting(schema):
        for candidate in TABLE[keyword].breaks(schema, _CONTEXT):
            errors = {
                (str(e.schema_path[-1]), tuple(e.instance_path)) for e in checker.iter_errors(candidate.value)
            }
            wanted = (candidate.keyword, candidate.at)
            if candidate.keyword == "type":  # a wrong type also misses an enum or a pattern; TYPE is reported
                errors = {wanted} if wanted in errors and {e[1] for e in errors} == {candidate.at} else errors
            if errors != {wanted}:
                continue  # it breaks something else too (or nothing): not a break of this keyword
            if not any(b.keyword == candidate.keyword and b.at == candidate.at and same(b.value, candidate.value)
                       for b in found):  # fmt: skip
                found.append(candidate)
    return tuple(found)


def check_keywords(schema: Any, where: str = "") -> None:
    """Raise :class:`UnhandledKeyword` for the first keyword in ``schema`` (at any depth) no
    generator knows: one the kit does not model with the vocabulary's reason (the one the gate
    gives for its change), one the kit models elsewhere (``$ref``: resolved before) as lacking
    a generator. Subschemas are found where the vocabulary says each keyword holds them."""
    if not isinstance(schema, Mapping):
        if isinstance(schema, bool):
            return
        raise UnhandledKeyword(type(schema).__name__, where)
    for keyword, value in schema.items():
        if asserts_nothing(keyword):
            continue
        reason = unmodelled_reason(keyword)
        if reason is not None:
            raise UnhandledKeyword(keyword, where, reason)
        if keyword not in TABLE:
            raise UnhandledKeyword(keyword, where)
        descent = KEYWORDS[keyword].descent
        if descent == "schema":
            check_keywords(value, f"{where}/{keyword}")
        elif descent == "list":
            for n, sub in enumerate(value):
                check_keywords(sub, f"{where}/{keyword}/{n}")
        elif descent == "map":
            for name, sub in value.items():
                check_keywords(sub, f"{where}/{keyword}/{name}")


def unbreakable(schema: Schema) -> tuple[str, ...]:
    """The keywords of ``schema`` (its top) that no value breaks alone."""
    broken = {b.keyword for b in breaks(schema) if not b.at}
    if broken & {"minContains", "maxContains"}:
        broken.add("contains")  # (its counts are its own: a break of one is a break of what it counts)
    nested = {name for name, record in TABLE.items() if record.nested}
    if isinstance(schema.get("additionalProperties"), dict):
        nested.add("additionalProperties")  # (its breaks are its schema's, at the unknown member)
    return tuple(k for k in asserting(schema) if k not in nested and k not in broken)


def level_domain(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Any]]:
    """Valid values of an array-of-objects ``schema`` (a member holding a level) and of its
    level's object, its items pinned to ``items`` (valid ones, at least one; see
    :func:`level_breaks`): ``(None, array)`` or ``(0, the first item)``."""
    for index, pinned in _pinned(schema, items):
        for value in domain(pinned):
            yield index, value


def level_breaks(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Break]]:
    """The breaks of the keywords of an array-of-objects ``schema`` (its length, uniqueness, type)
    and of its level's object (its required, unknown and counted members), with the items pinned
    to ``items``: valid items of that place, whose own members are broken as members of their
    level, and which keep what JSON Schema cannot say (a shard's box inside its tensor, say).
    ``(None, break of the array)`` or ``(0, break of the first item)``."""
    for index, pinned in _pinned(schema, items):
        for broken in breaks(pinned):
            if not broken.at and broken.keyword not in ("const", "enum"):  # not off the pinned items
                yield index, broken


def _pinned(schema: Schema, items: list[Any]) -> Iterator[tuple[int | None, Schema]]:
    level_object = {**schema["items"], "properties": {name: {"const": v} for name, v in items[0].items()}}
    yield None, {**schema, "items": {"type": "object", "enum": items}}
    yield 0, level_object
