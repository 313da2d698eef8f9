"""Writer refusal cases generated from the wire model, for every member of the writer's version.

Each value that breaks one keyword of a member's schema (``_domain.breaks``: a bound, a
length, a pattern, an enum or a constant, an inner required or unknown member, one bad array
item, the JSON type) is put into an otherwise valid payload, and a writer must refuse it with
the rule the model names for that place (``WireModel.rule_at``). Released members and a
candidate's new ones alike, so a member keeps its refusals after ``refitwire schema release``.
Members that hold a level (the table's arrays of objects) are broken through that level's
members; constants are not in a payload at all; a break the testee protocol cannot carry (a
value of a type the decoded form does not allow) is left to the read vectors."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from refitwire.compat import _forms
from refitwire.compat._domain import breaks
from refitwire.compat._protocol import write
from refitwire.engine import protocol_validator
from refitwire.wire import WireModel, pointer

__all__ = ["mutations"]


def mutations(model: WireModel, base: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(rule, description, payload)`` for each break of each member of ``model``, each payload
    breaking one keyword of one member (in the first object of its level)."""
    carried = protocol_validator("request").is_valid
    for path, level in model.levels.items():
        for member in level.members:
            if member.const is not _forms.NO_CONST or member.child is not None:
                continue
            for broken in breaks(member.schema):
                if broken.value is None and not broken.at:
                    continue  # a payload's null is an absent member, not a value to refuse
                payload = copy.deepcopy(base)
                objects = _forms.objects_at(payload, model, path)
                if not objects:
                    continue
                objects[0][member.name] = broken.value
                if not carried(write(0, payload)):
                    continue
                place = [*(step for name in path for step in (name, 0)), member.name, *broken.at]
                rule = model.rule_at(broken.keyword, place)
                yield rule, f"{pointer(*place)}: {broken.what}", payload
