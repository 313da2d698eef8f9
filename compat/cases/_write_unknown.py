"""Write payloads that carry members the writer's version does not know (WRITE_KNOWN_MEMBERS).

Each golden writer payload again, with every member a later version declares at a level (a
1.0.0 writer is handed each shard's ``digest`` and the ``publisher_step``), and one member no
version declares, added to every object of every level (the top, each tensor, each shard):
what a newer reader's decoded form looks like to an older writer. The writer must write exactly what it writes without
them (the same rules, the same payload carried, the same bytes) or refuse the payload naming
``WRITE_KNOWN_MEMBERS``; a writer that copies payload members into the blob fails
``WRITE_KNOWN_MEMBERS`` on the written-blob check, whatever the seed.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from typing import Any

from refitwire import wire
from refitwire.compat.cases import _cases, _forms

__all__ = ["unknown_member_cases"]

#: What the unknown members hold: a nested value of every JSON kind, as a future member might.
_VALUE: Any = {"nested": [1, {"deep": None}], "text": "x", "n": 2**70, "flag": True}


def _unknown_name(declared: set[str], level: tuple[str, ...]) -> str:
    """A member name the level does not declare (so it stays unknown for a candidate too)."""
    name = "future_" + (level[-1] if level else "top")
    while name in declared:
        name += "_"
    return name


def with_unknown_members(payload: dict[str, Any], version: str, registry: wire.Registry) -> dict[str, Any]:
    model = _cases.model_of(version, registry)
    later = _later_members(version, registry)
    out = copy.deepcopy(payload)
    for path, level in model.levels.items():
        name = _unknown_name({m.name for m in level.members}, path)
        for obj in _forms.objects_at(out, model, path):
            for member, value in later.get(path, {}).items():
                if obj.get(member) is None:  # absent, or null as the writer's own decoded form has it
                    obj[member] = copy.deepcopy(value)
            obj[name] = copy.deepcopy(_VALUE)
    return out


def _later_members(version: str, registry: wire.Registry) -> dict[tuple[str, ...], dict[str, Any]]:
    """Per level ``version`` has, each member a later version of ``registry`` declares there and
    ``version`` does not, with a value it allows (the first of its domain, null aside)."""
    model = _cases.model_of(version, registry)
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for newer in registry.known_versions():
        if wire.version_key(newer) <= wire.version_key(version):
            continue
        for path, level in _cases.model_of(newer, registry).levels.items():
            if path not in model.levels:
                continue  # inside a member the writer does not know: carried with that member
            for member in level.members:
                if member.name not in model.levels[path] and member.in_decoded_form:
                    values = _cases.member_values(json.dumps(dict(member.schema), sort_keys=True))
                    if values:  # (none for a member that may only be null: absent is all it can say)
                        found.setdefault(path, {}).setdefault(member.name, values[0])
    return found


def unknown_member_cases(version: str, registry: wire.Registry) -> tuple[_cases.WriteCase, ...]:
    """``write:ID@V+unknown`` for each golden writer case of ``version`` in ``registry``."""
    return _unknown_member_cases(version, registry)


@functools.cache
def _unknown_member_cases(version: str, registry: wire.Registry) -> tuple[_cases.WriteCase, ...]:
    return tuple(
        dataclasses.replace(
            case,
            id=f"{case.id}+unknown",
            description=f"{case.description}, with members {version} does not know in every object",
            payload=with_unknown_members(case.payload, version, registry),
            may_refuse="WRITE_KNOWN_MEMBERS",  # refusing what it cannot write is as good as dropping it
        )
        for case in _cases.write_cases()
        if case.spec_version == version
    )
