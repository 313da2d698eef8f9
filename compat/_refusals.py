"""Writer refusal cases generated from the wire model, for members the released versions lack.

The hand-written refusals in ``_built_cases`` break each rule of the released members once,
with payloads chosen to break nothing else (and their case IDs are what the expected-failure
lists name). A member a later schema adds gets its refusals here, with no edit: one past
each bound it has (the first item, for an array of integers), one that misses its pattern,
one of the wrong JSON type. The rule each must be refused with is the one the model names
for that place (``WireModel.rule_at``)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
from refitwire.compat import _forms
from refitwire.wire import Member, WireModel

__all__ = ["mutations"]

#: Strings tried, in order, as a value that misses a member's pattern.
_MISSES = ("!", " ", "-", "\u00e9", "")
_WRONG_TYPE = {"integer": "1", "number": "1", "string": 1, "boolean": 1, "array": {}, "object": []}


def mutations(
    model: WireModel, base: dict[str, Any], released: WireModel
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(rule, description, payload)`` for each member of ``model`` that ``released`` (the newest
    release) does not declare at that level, each payload breaking one thing."""
    for path, level in model.levels.items():
        for member in level.members:
            if member.const is not _forms.NO_CONST or member.child is not None:
                continue
            if released.knows(member.name, *path):
                continue
            for keyword, value, what in _breaks(member):
                payload = copy.deepcopy(base)
                objects = _forms.objects_at(payload, model, path)
                if not objects:
                    continue
                current = objects[0].get(member.name)
                if member.items is not None and isinstance(current, list) and keyword != "type":
                    value = [value, *current[1:]] if current else [value]
                objects[0][member.name] = value
                at: list[str | int] = [step for name in path for step in (name, 0)]
                place = [*at, member.name, *([0] if member.items is not None and keyword != "type" else [])]
                rule = model.rule_at(keyword, place)
                yield rule, f"{'/'.join(path + (member.name,))} {what}", payload


def _breaks(member: Member) -> Iterator[tuple[str, Any, str]]:
    """``(keyword, value, what)``: the values that break ``member``'s schema, one keyword each."""
    target = member.items if member.items is not None else member
    low, high = target.bounds
    if isinstance(low, int):
        yield "minimum", low - 1, f"below its minimum {low}"
    if isinstance(high, int):
        yield "maximum", high + 1, f"above its maximum {high}"
    if target.pattern is not None:
        miss = _miss(target.pattern)
        if miss is not None:
            yield "pattern", miss, "missing its pattern"
    if member.types and member.types[0] in _WRONG_TYPE:
        yield "type", _WRONG_TYPE[member.types[0]], "of the wrong JSON type"


@functools.cache
def _miss(pattern: str) -> str | None:
    check = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    return next((text for text in _MISSES if not check.is_valid(text)), None)
