"""Writer refusal cases generated from the wire model, for every member of the writer's version.

Each value that breaks one keyword of a member's schema (``keywords.breaks``: a bound, a
length, a pattern, an enum or a constant, an inner required or unknown member, one bad array
item, the JSON type) is put into an otherwise valid payload, and a writer must refuse it with
the rule the model names for that place (``WireModel.rule_at``). Released members and a
candidate's new ones alike, so a member keeps its refusals after ``refitwire schema release``.
Members that hold a level (arrays of objects) are broken through that level's members, and
in their own keywords and the level object's (``keywords.level_breaks``: the length, an inner
required or unknown member), the items pinned to the payload's own; constants are not in a
payload at all. A value of a JSON type the decoded form does not allow (a string ``addr``) is
carried too: a write request's payload is any object, and the writer refuses it naming TYPE
(SPEC.md WRITE_VALID); a break the request schema cannot carry is left to the read vectors."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any

from refitwire.compat._protocol import write
from refitwire.compat.cases import _forms
from refitwire.compat.keywords import Break, breaks, level_breaks
from refitwire.wire import Member, WireModel, pointer, protocol_validator

__all__ = ["mutations"]


def mutations(model: WireModel, base: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(rule, description, payload)`` for each break of each member of ``model``, each payload
    breaking one keyword of one member (in the first object of its level)."""
    carried = protocol_validator("request").is_valid
    for path, level in model.levels.items():
        for member in level.members:
            if not member.in_decoded_form:
                continue  # a required constant is written, never given
            for value, at, broken in _member_breaks(model, path, member, base):
                if value is None:
                    continue  # a payload's null is an absent member, not a value to refuse
                payload = copy.deepcopy(base)
                objects = _forms.objects_at(payload, model, path)
                if not objects:
                    continue
                objects[0][member.name] = value
                if not carried(write(0, payload)):
                    continue
                place = [*(step for name in path for step in (name, 0)), member.name, *at]
                instance = functools.reduce(
                    lambda inner, step: inner[step], at, value
                )  # (the value at the break)
                rule = model.rule_at(broken.keyword, place, instance)
                yield rule, f"{pointer(*place)}: {broken.what}", payload


def _member_breaks(
    model: WireModel, path: tuple[str, ...], member: Member, base: dict[str, Any]
) -> Iterator[tuple[Any, tuple[str | int, ...], Break]]:
    """``(the member's value, the place of the break in it, the break)`` for each break of
    ``member`` in the first object of its level in ``base``."""
    if member.child is None:
        for broken in breaks(member.schema):
            yield broken.value, broken.at, broken
        return
    objects = _forms.objects_at(base, model, path)
    items = objects[0].get(member.name) if objects else None
    if not items:
        return  # no item in the payload to pin the level's items to
    for index, broken in level_breaks(member.schema, items):
        if index is None:
            yield broken.value, (), broken
        else:
            yield [*items[:index], broken.value, *items[index + 1 :]], (index,), broken
