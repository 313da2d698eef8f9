"""Decoded-form arithmetic over a wire model: the payload as a version sees it. Generic in the
levels and members of the model, so a candidate's new members are carried to and from every
participant with no edit here. (What a reader reports and a writer writes is the library's
reader's and writer's, given the registry that holds the version.)"""

from __future__ import annotations

from typing import Any

from refitwire.wire import EMPTY_WHEN_ABSENT, NO_CONST, Member, WireModel, decoded_members, version_key

__all__ = ["NO_CONST", "count_view", "objects_at", "project"]


def project(payload: dict[str, Any], model: WireModel, level: tuple[str, ...] = ()) -> dict[str, Any]:
    """The payload as a reader or writer of ``model`` sees it: what it does not declare dropped,
    what it declares present (``null`` when absent)."""
    # Each level's members once per call: a table at the limit holds ~10^5 objects per level.
    members = {path: decoded_members(model.levels[path]) for path in model.levels}

    def one(obj: dict[str, Any], at: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for member in members[at]:
            value = obj.get(member.name)
            if member.child is not None and value is not None:  # absent (optional) stays None
                out[member.name] = [one(item, member.child) for item in value]
            else:
                out[member.name] = value
        return out

    return one(payload, level)


def decoded_document(document: dict[str, Any], model: WireModel) -> dict[str, Any]:
    """The decoded form of a checked blob's JSON object as the model says (SPEC section 6): the
    oracle the vector tools write, computed from the model rather than by the reference reader."""
    out = project(document, model)
    if EMPTY_WHEN_ABSENT in out:
        out[EMPTY_WHEN_ABSENT] = out[EMPTY_WHEN_ABSENT] or ""
    return out


def objects_at(document: dict[str, Any], model: WireModel, level: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every object of ``level`` in a document or payload, in document order."""
    found = [document]
    for depth in range(len(level)):
        found = [item for obj in found for item in obj.get(level[depth]) or [] if isinstance(item, dict)]
    return found


def count_view(decoded: dict[str, Any], model: WireModel) -> dict[str, Any]:
    """What a count-only read of a blob reports, from the blob's decoded form: every member but
    the table (``envelope``), and the number of the table's entries (``entries``)."""
    table = model.table_at()[-1]
    return {"envelope": {k: v for k, v in decoded.items() if k != table}, "entries": len(decoded[table])}


#: The files ``schema/protocol/decoded.json`` and ``envelope.json`` are generated from the
#: newest released model by these.
DECODED_ID = "urn:refitwire:schema:protocol:1:decoded"
ENVELOPE_ID = "urn:refitwire:schema:protocol:1:envelope"


def decoded_schema(model: WireModel) -> dict[str, Any]:
    """The JSON Schema of the neutral decoded form (``schema/protocol/decoded.json``): every member
    of ``model`` the decoded form holds, with its JSON type; ``null`` for what may be absent. A
    member every version has is required (its value may be null); one a later version added may be
    missing from an older reader's answer. Values are not range-checked: a reader reports what it
    read, and a writer may be given a payload it must refuse."""
    first = model.top.members[0].added_in
    later = sorted({m.added_in for m in model.members() if m.added_in != first}, key=version_key)
    since = "; ".join(
        f"{', '.join(f'`{m.name}`' for m in model.members() if m.added_in == v)} for spec {v}+" for v in later
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": DECODED_ID,
        "title": "The neutral decoded form of a rendezvous blob (SPEC.md section 6)",
        "description": (
            "What a reader reports and a writer is given: every member of the reader's or writer's spec "
            f"version but the constants ({since}); null means absent. Types are checked here, values are "
            "not range-checked. Members not listed may be added. Generated from the schemas by "
            "tools/build_protocol.py: do not edit."
        ),
        **_decoded_object(model, (), first),
    }


def envelope_schema(model: WireModel) -> dict[str, Any]:
    """The JSON Schema of a count-only read's ``envelope`` (``schema/protocol/envelope.json``):
    the decoded form's top level without the table."""
    table = model.table_at()[-1]
    top = _decoded_object(model, (), model.top.members[0].added_in)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ENVELOPE_ID,
        "title": "What a count-only read reports of a rendezvous blob besides the count (IMPLEMENTERS.md)",
        "description": (
            f"The decoded form's top level (decoded.json) without `{table}`, whose entries a count-only "
            "read counts instead. Generated from the schemas by tools/build_protocol.py: do not edit."
        ),
        "type": "object",
        "required": [name for name in top["required"] if name != table],
        "properties": {name: shape for name, shape in top["properties"].items() if name != table},
    }


def _decoded_object(model: WireModel, level: tuple[str, ...], first: str) -> dict[str, Any]:
    members = decoded_members(model.levels[level])
    return {
        "type": "object",
        "required": [m.name for m in members if m.added_in == first],
        "properties": {m.name: _decoded_value(model, m, first) for m in members},
    }


def _decoded_value(model: WireModel, member: Member, first: str) -> dict[str, Any]:
    types = ["array"] if member.items is not None else list(member.types)
    if not member.required or member.nullable:
        types.append("null")
    shape: dict[str, Any] = {"type": _one_or_list(types)}
    if member.child is not None:
        shape["items"] = _decoded_object(model, member.child, first)
    elif member.items is not None:
        shape["items"] = {"type": _one_or_list(list(member.items.types))}
    return shape


def _one_or_list(types: list[str]) -> str | list[str]:
    return types[0] if len(types) == 1 else types
