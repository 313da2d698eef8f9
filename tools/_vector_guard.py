"""The generated vectors held to the JSON Schema by a second validator before they are written.

The generators build each vector around one intended violation (or none), from the member's
keywords; a keyword they did not plan around can add another (an item a ``contains`` counts,
replaced by one of the wrong type; a value past a bound that sits inside an ``anyOf`` branch).
Such a vector would commit a wrong expectation. python-jsonschema (not jsonschema-rs, which the
reference and the generators use), reading patterns as ECMA-262 does, checks each document at
each version: a valid vector has no schema error; an invalid one whose rule is of section 2.7's
step 3 (a schema rule) has its first schema error in document order at its pointer, naming its
rule; one of step 4 has none. A vector that fails is left out and counted, never corrected.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator
from typing import Any

import _clone
import jsonschema
import jsonschema.validators
from _vector_kit import at_one_value, ecma_search
from refitwire import wire
from refitwire.wire import spec_rules


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not ecma_search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_ECMA = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


@functools.cache
def _checker(document: str, version: str) -> tuple[Any, wire.WireModel]:
    model = _clone.registry().wire_model(document, version)
    return _ECMA(dict(model.resolved)), model


@functools.cache
def _before_structure() -> frozenset[str]:
    """Rules reported before the schema's (section 2.7 steps 1 and 2): encoding, the wire id."""
    encoding = {rule.id for rule in spec_rules(_clone.registry()).rules if rule.section.startswith("2.1 ")}
    wire_id = {
        m.rule
        for m in _clone.registry().newest_model().top.members
        if m.const is not wire.NO_CONST and m.rule
    }
    return frozenset(encoding | wire_id)


def _place(doc: Any, path: tuple[Any, ...]) -> tuple[int, ...]:
    """Where ``path`` is in the document's order: a value before the values inside it, array
    items by index, an object's members in the order written."""
    key: list[int] = []
    for step in path:
        key.append(step if isinstance(doc, list) else list(doc).index(step))
        doc = doc[step]
    return tuple(key)


def lacking(doc: Any, version: str, document: str) -> str | None:
    """The pointer of the first object (in document order) of ``doc`` that lacks a member
    ``version`` requires; None when there is none (or ``doc`` is not an object)."""
    model = _clone.registry().wire_model(document, version)

    def walk(obj: Any, level: tuple[str, ...], at: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        if not isinstance(obj, dict):
            return
        if set(model.levels[level].required) - set(obj):
            yield at
        for name in obj:  # in the order written
            member = next((m for m in model.levels[level].members if m.name == name), None)
            if member is not None and member.child is not None and isinstance(obj[name], list):
                for n, item in enumerate(obj[name]):
                    yield from walk(item, member.child, (*at, name, n))

    return next((wire.pointer(*at) for at in walk(doc, (), ())), None)


def first_schema_error(doc: Any, version: str, document: str) -> tuple[str, str]:
    """The (rule, pointer) section 2.7 reports first among the schema's errors (step 3), read by
    the second validator: the first place in document order, then ``REQUIRED``, ``TYPE``, the
    rest by rule ID. For a blob that lacks a member its version requires, which has one."""
    check, model = _checker(document, version)
    found = []
    for e in check.iter_errors(doc):
        rule = model.rule_at(str(e.validator), list(e.absolute_path), e.instance)
        found.append(
            (_place(doc, tuple(e.absolute_path)), at_one_value(rule), wire.pointer(*e.absolute_path))
        )
    _, (_, rule), at = min(found)
    return rule, at


def before_structure(rule: str) -> bool:
    """Whether ``rule`` is reported before the schema's (section 2.7 steps 1 and 2)."""
    return rule in _before_structure()


def agrees(vector: dict[str, Any]) -> bool:
    """Whether the schema, read by a second validator, says of each version what ``vector`` expects."""
    raw = vector["blob"].encode() if "blob" in vector else base64.b64decode(vector["blob_b64"])
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return True  # not JSON: an encoding vector, which the schema does not judge
    if not isinstance(doc, dict):
        return True
    for version, expect in vector["expect"].items():
        check, model = _checker(vector["document"], version)
        try:
            errors = list(check.iter_errors(doc))
        except RecursionError:
            return True
        if expect["valid"]:
            if errors:
                return False
            continue
        if expect["rule"] in _before_structure():
            continue  # judged before the schema
        if not errors:  # a rule of step 4 may follow a schema with nothing to say; a keyword's own may not
            if expect["rule"] in ("TYPE", "REQUIRED", "SCHEMA"):
                return False
            continue
        first = min(_place(doc, tuple(e.absolute_path)) for e in errors)
        at_first = [e for e in errors if _place(doc, tuple(e.absolute_path)) == first]
        if wire.pointer(*at_first[0].absolute_path) != expect["pointer"]:
            return False
        named = {model.rule_at(str(e.validator), list(e.absolute_path), e.instance) for e in at_first}
        if expect["rule"] not in named:
            return False
    return True


def consistent(vectors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``vectors`` without those the schema contradicts; says how many it left out, and the first."""
    kept = [v for v in vectors if agrees(v)]
    left = [v for v in vectors if v not in kept]
    if left:
        print(f"{len(left)} generated vectors left out: the schema, read by a second validator, says "
              f"otherwise (first: {left[0]['description']})")  # fmt: skip
    return kept
