"""Members the table pass has no fast path for, read generically: objects (an object member, an
array of arrays), and arrays of objects other than the shards (a level of its own, which a
later schema may add). None of the released versions has one; a candidate's may."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec
from pydantic import BaseModel
from refitwire._errors import InvalidBlob, Violation
from refitwire._wire import Member, WireModel, is_index, pointer

__all__ = [
    "as_builtins",
    "as_models",
    "level_model",
    "deep_integers",
    "holds_objects",
    "member_literals",
    "with_written_levels",
]


def deep_integers(member: Member) -> bool:
    """Whether ``member`` holds integers the table pass's sums do not reach: deeper than the
    member or its items, or beside values of other types (``anyOf`` an integer or a string)."""
    places = set(member.integer_places)
    return (
        member.child is not None or not places <= {(), ("*",)} or bool(places and not member.holds_integers)
    )


def holds_objects(schema: Any) -> bool:
    """Whether a value of ``schema`` is an object, or an array holding objects (at any depth)."""
    if not isinstance(schema, Mapping):
        return False
    types = schema.get("type")
    return "object" in (types if isinstance(types, list) else [types]) or holds_objects(schema.get("items"))


def as_models(
    fields: dict[str, Any],
    nested: Sequence[tuple[str, tuple[str, ...]]],
    model: WireModel | None,
    levels: Mapping[tuple[str, ...], Any],
) -> None:
    """The checked items of each member holding a level, as that level's models (validated:
    rare, and no rule of section 2.3 reads them). Items that do not convert are left as read:
    they broke a rule, reported (INTEGER_LITERAL), and the table is refused."""
    for name, level in nested:
        items = fields.get(name)
        if items is not None and model is not None:
            with contextlib.suppress(InvalidBlob):  # the models' own error (refitwire._models)
                fields[name] = tuple(level_model(item, level, model, levels) for item in items)


def level_model(
    item: Any, level: tuple[str, ...], model: WireModel, levels: Mapping[tuple[str, ...], Any]
) -> Any:
    """One object of ``level`` (parsed, or a typed read's struct) as its model (``levels``: the
    class of each level): the members ``model``'s version declares, unknown ones ignored
    (READ_IGNORE_UNKNOWN), nested levels alike."""
    values: dict[str, Any] = {}
    for member in model.level(*level).members:
        value = item.get(member.name) if isinstance(item, Mapping) else getattr(item, member.name, None)
        if value is not None and member.child is not None:
            value = tuple(level_model(inner, member.child, model, levels) for inner in value)
        elif value is not None and not isinstance(value, (str, int, float, bool, list)):
            value = msgspec.to_builtins(value)  # a struct (an object member) as a dict
        values[member.name] = value
    return levels[level].model_validate(values)


def as_builtins(fields: dict[str, Any], names: tuple[str, ...]) -> None:
    """The typed read's structs in ``names`` as the plain dicts and tuples the models hold."""
    for name in names:
        if fields.get(name) is not None:
            fields[name] = msgspec.to_builtins(fields[name])


def member_literals(
    obj: Any, members: Sequence[Member], model: WireModel | None, at: tuple[str | int, ...]
) -> Iterator[Violation]:
    """INTEGER_LITERAL wherever ``members`` of ``obj`` (a parsed object) hold integers, at any
    depth: inside objects and arrays (``Member.integer_places``) and in the objects of a level
    of their own, whose members are looked at the same way (``model``: the version's)."""
    if not isinstance(obj, Mapping):
        return
    for member in members:
        value = obj.get(member.name)
        if member.child is not None and model is not None:
            inner = model.level(*member.child).members
            for i, item in enumerate(value if isinstance(value, (list, tuple)) else ()):
                yield from member_literals(item, inner, model, (*at, member.name, i))
        else:
            for place in member.integer_places:
                yield from _literals_at(value, place, (*at, member.name))


def _literals_at(value: Any, place: tuple[str, ...], at: tuple[str | int, ...]) -> Iterator[Violation]:
    if not place:
        if type(value) is float:
            yield _not_integer_literal(value, *at)
        return
    step, rest = place[0], place[1:]
    if step == "*" and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _literals_at(item, rest, (*at, i))
    elif is_index(step) and isinstance(value, (list, tuple)) and int(step) < len(value):
        yield from _literals_at(value[int(step)], rest, (*at, int(step)))
    elif isinstance(value, Mapping) and step in value:
        yield from _literals_at(value[step], rest, (*at, step))


def _not_integer_literal(value: float, *path: str | int) -> Violation:
    return Violation(
        "INTEGER_LITERAL", pointer(*path), value, "integers are written without a fraction or exponent"
    )


def with_written_levels(
    obj: dict[str, Any], nested: Sequence[tuple[str, tuple[str, ...]]], model: WireModel
) -> dict[str, Any]:
    """``obj`` (a copy it may change) with each member holding a level written as the writer of
    ``model``'s version writes it: plain dicts of the members it declares in the schema's order,
    absent (``None``) ones left out, required constants written (the decoded form never holds
    them), nested levels alike (a model or a decoded form's dict)."""
    for name, level in nested:
        items = obj.get(name)
        if isinstance(items, (list, tuple)):  # anything else is refused, naming TYPE, when checked
            obj[name] = [_written_object(item, level, model) for item in items]
    return obj


def _written_object(item: Any, level: tuple[str, ...], model: WireModel) -> Any:
    if not isinstance(item, (BaseModel, Mapping)):
        return item  # not an object: refused, naming the rule, when the document is checked
    declared = model.level(*level)
    fields = item.__dict__ if isinstance(item, BaseModel) else item
    written = {
        m.name: fields.get(m.name) if m.in_decoded_form else m.const
        for m in declared.members
        if not m.in_decoded_form or fields.get(m.name) is not None
    }
    return with_written_levels(written, [(m.name, m.child) for m in declared.members if m.child], model)
