"""The wire, compiled from one schema file: its levels, members, types, bounds, order and versions.

A *level* is a kind of object on the wire, named by the array members that lead to it from
the top: ``()`` is the document, ``("tensors",)`` a tensor, ``("tensors", "shards")`` a
shard. A *member* is one property of a level, in the order the schema lists it (the
writer's order). Everything is read from the schema with every ``$ref`` resolved, so the
model is the same however the file is laid out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from refitwire._wire._basics import is_index, pointer, resolve_refs, version_key

__all__ = ["NO_CONST", "Level", "Member", "WireModel", "compile_model"]

NO_CONST: Any = type("NoConst", (), {"__repr__": lambda self: "NO_CONST"})()
#: ``rule_at`` not given the offending value (``None`` is a value: JSON's null).
_UNSEEN: Any = object()


@dataclass(frozen=True)
class Member:
    """One member of one level, or (``name == "*"``) the items of an array member."""

    name: str
    level: tuple[str, ...]
    required: bool
    types: tuple[str, ...]  # JSON types, "null" left out (see ``nullable``)
    nullable: bool
    rule: str | None  # the SPEC rule the schema names for this value (``x-rule``)
    added_in: str
    schema: Mapping[str, Any] = field(repr=False)  # the member's subschema, references resolved
    items: Member | None = None  # for an array: what each item is (None when prefixItems says the first)
    child: tuple[str, ...] | None = None  # for an array of objects: the level of its items

    @property
    def const(self) -> Any:
        return self.schema.get("const", NO_CONST)

    @property
    def in_decoded_form(self) -> bool:
        """Whether the neutral decoded form (SPEC.md section 6) holds this member: all but the
        required constants, which are always there and always the same (an optional one's
        presence is what it says). A writer writes a required constant without being given it."""
        return self.const is NO_CONST or not self.required

    @property
    def pattern(self) -> str | None:
        pattern = self.schema.get("pattern")
        return pattern if isinstance(pattern, str) else None

    @property
    def bounds(self) -> tuple[int | None, int | None]:
        return self.schema.get("minimum"), self.schema.get("maximum")

    @property
    def holds_integers(self) -> bool:
        """An integer, or an array of integers: where INTEGER_LITERAL applies."""
        if self.types == ("integer",):
            return True
        # (items that may be null are not summed: the deep path looks at each)
        return self.items is not None and self.items.types == ("integer",) and not self.items.nullable

    @functools.cached_property
    def integer_places(self) -> tuple[tuple[str, ...], ...]:
        """Where integers sit inside a value of this member, as paths of member names, item
        indices (``"0"``) and ``*`` for every item: ``()`` for an integer, ``("*",)`` for an array
        of them, ``("rank",)`` in an object; those of a level's objects are its own members'
        (INTEGER_LITERAL applies at each)."""
        return () if self.child is not None else _integer_paths(self.schema)

    @property
    def place(self) -> str:
        """The member's pointer with ``*`` for every array index (``/tensors/*/shards/*/addr``);
        an array's items are at its place + ``/*``."""
        return pointer(*[step for name in self.level for step in (name, "*")], self.name)

    def item_rule(self) -> str | None:
        """The rule of an item of this array, else of the member."""
        return (self.items.rule if self.items is not None else None) or self.rule

    def first_path(self, *, item: bool = False) -> tuple[str | int, ...]:
        """The instance path of this member in the first object of every array on the way
        (``("tensors", 0, "shards", 0, "addr")``), or of its first item: what
        :meth:`WireModel.rule_at` reads to find the rule a break there names."""
        path: tuple[str | int, ...] = (*[step for name in self.level for step in (name, 0)], self.name)
        return (*path, 0) if item else path


@dataclass(frozen=True)
class Level:
    path: tuple[str, ...]
    members: tuple[Member, ...]

    def __getitem__(self, name: str) -> Member:
        for member in self.members:
            if member.name == name:
                return member
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(m.name == name for m in self.members)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members if m.required)

    @property
    def optional(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if not m.required)


@dataclass(frozen=True, eq=False)
class WireModel:
    """One document at one spec version, as its schema describes it.

    Compared and hashed by identity: what is built from a model (validators, decoders) is
    kept per model, so two registries holding different files of one version never share it."""

    document: str
    version: str
    wire_id: str | None
    levels: Mapping[tuple[str, ...], Level]
    schema: Mapping[str, Any] = field(repr=False)  # the file as written
    resolved: Mapping[str, Any] = field(repr=False)  # every reference inlined

    @property
    def top(self) -> Level:
        return self.levels[()]

    def level(self, *path: str) -> Level:
        return self.levels[path]

    def table_at(self, *level: str) -> tuple[str, ...]:
        """The level of the table ``level`` holds: its required array of objects (``tensors`` at
        the top, ``shards`` in a tensor). Any other array of objects, optional as every later
        member is, is a level of its own; with none required, the first."""
        held = [(m.child, m.required) for m in self.level(*level).members if m.child is not None]
        return next((child for child, required in held if required), held[0][0])

    @functools.cached_property
    def rounds_integers(self) -> bool:
        """Whether a JSON parser that reads an integer outside ``EXACT_INTEGERS`` as a double (orjson;
        SPEC.md section 5) could change a verdict here: an integer the schema does not bound inside
        that range, which a value past the range would not break once rounded to a double
        (a bound of -2^63 itself included: -2^63 - 1 rounds onto it)."""
        return any(not _bounded_inside(node) for node in _integer_nodes(self.resolved))

    def knows(self, name: str, *level: str) -> bool:
        """Whether this version declares ``name`` at ``level`` (default: the top)."""
        found = self.levels.get(level)
        return found is not None and name in found

    def members(self) -> Iterator[Member]:
        """Every member of every level, levels top first."""
        for level in self.levels.values():
            yield from level.members

    def at(self, path: Sequence[str | int]) -> Member | None:
        """The member (or array items) an instance path points into: ``("tensors", 3, "shards",
        0, "shape", 1)`` is an item of ``shape`` at level ``("tensors", "shards")``."""
        return self._find(path)[0]

    def _find(self, path: Sequence[str | int]) -> tuple[Member | None, int]:
        """:meth:`at`'s member, and how many steps of ``path`` lead to it (the rest are inside its value)."""
        level: tuple[str, ...] = ()
        member: Member | None = None
        for n, step in enumerate(path):
            if isinstance(step, int) or (isinstance(step, str) and is_index(step) and member is not None):
                if member is None or member.items is None:
                    return member, n
                if member.child is not None:
                    level, member = member.child, None
                else:
                    member = member.items
                continue
            found = self.levels.get(level)
            if found is None or member is not None or step not in found:
                return member, n
            member = found[step]
        return member, len(path)

    def rule_at(self, keyword: str, path: Sequence[str | int], instance: Any = _UNSEEN) -> str:
        """The rule a schema error names: ``required`` and ``type`` by the keyword (SPEC 2.2), as
        ``anyOf``, ``oneOf`` or an untyped ``enum`` the ``instance`` of a JSON type none of its
        branches or values has (a constant's other values are its own rule, as SCHEMA_ID's are),
        any other by the ``x-rule`` of the value it is about, else the nearest enclosing one."""
        if keyword == "required":
            return "REQUIRED"
        if keyword == "type" or (keyword in ("anyOf", "oneOf", "enum") and not self._typed(path, instance)):
            return "TYPE"
        for end in range(len(path), -1, -1):
            member = self.at(path[:end])
            if member is not None and member.rule:
                return member.rule
        return "SCHEMA"

    def _typed(self, path: Sequence[str | int], instance: Any) -> bool:
        """Whether ``instance`` has a JSON type the schema at ``path`` allows (True when unknown):
        a member's, or the subschema inside a member's value (``{"kind": {"enum": [...]}}``)."""
        member, depth = self._find(path)
        if instance is _UNSEEN or member is None:
            return True
        node: Any = member.schema
        for step in path[depth:]:
            node = _subschema_at(node, step)
        return node is None or _allows(tuple(t for t in schema_types(node) if t != "null"), instance)


def _subschema_at(node: Any, step: str | int) -> Any:
    """The subschema of ``node`` a value's ``step`` (a member name, an item index) is held to;
    None where the schema does not say (an object's unlisted member, say)."""
    if not isinstance(node, Mapping):
        return None
    if isinstance(step, int) or is_index(step):
        prefix = node.get("prefixItems") or ()
        return prefix[int(step)] if int(step) < len(prefix) else node.get("items")
    return (node.get("properties") or {}).get(step)


def _allows(types: tuple[str, ...], instance: Any) -> bool:
    """Whether ``instance``'s JSON type is one of ``types`` (an integral number is an integer)."""
    kind = _json_type(instance)
    return (
        not types
        or kind in types
        or (kind == "integer" and "number" in types)
        or (kind == "number" and "integer" in types and float(instance).is_integer())
    )


def compile_model(schema: Mapping[str, Any], document: str, first_version: str = "1.0.0") -> WireModel:
    """The model of ``schema`` (a rendezvous or shard-table schema of one version)."""
    resolved = resolve_refs(schema)
    version = str(schema.get("x-spec-version", first_version))
    levels: dict[tuple[str, ...], Level] = {}
    _walk(resolved, (), levels, first_version)
    levels = dict(sorted(levels.items(), key=lambda item: len(item[0])))  # the top first
    top = levels.get((), Level((), ()))
    wire = top["schema"].const if "schema" in top else NO_CONST
    wire_id = wire if isinstance(wire, str) else schema.get("x-wire-id")
    return WireModel(
        document, version, wire_id if isinstance(wire_id, str) else None, levels, schema, resolved
    )


def _integer_paths(node: Any) -> tuple[tuple[str, ...], ...]:
    if not isinstance(node, Mapping):
        return ()
    types = schema_types(node)
    found: list[tuple[str, ...]] = [()] if "integer" in types else []
    if isinstance(node.get("items"), Mapping):
        found += [("*", *path) for path in _integer_paths(node["items"])]
    for index, sub in enumerate(node.get("prefixItems") or ()):
        found += [(str(index), *path) for path in _integer_paths(sub)]
    for name, sub in (node.get("properties") or {}).items():
        found += [(name, *path) for path in _integer_paths(sub)]
    return tuple(found)


#: Where a JSON integer is read exactly by every reader (SPEC.md section 5, "an integer outside
#: [-2^63, 2^64)"; orjson's own range, so checked against SPEC.md by tests/gate/test_gate_spec.py).
EXACT_INTEGERS = (-(2**63), 2**64)


def integer_bounds(node: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The ``minimum`` and ``maximum`` of an integer schema as integers: a fractional bound
    (``maximum: 10.5``) is the integer inside it. Where one branch of an ``anyOf`` or ``oneOf``
    alone takes integers, that branch's bounds hold (beside the keywords next to it)."""
    for keyword in ("anyOf", "oneOf"):
        branches = [
            b for b in node.get(keyword, ()) if isinstance(b, Mapping) and "integer" in schema_types(b)
        ]
        if len(branches) == 1:
            node = {**{k: v for k, v in node.items() if k != keyword}, **branches[0]}
            break
    low, high = node.get("minimum"), node.get("maximum")
    return (None if low is None else math.ceil(low), None if high is None else math.floor(high))


def _integer_nodes(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every (sub)schema in ``node`` that allows integers and is not a constant or a list of values."""
    if isinstance(node, Mapping):
        if "integer" in schema_types(node) and "const" not in node and "enum" not in node:
            yield node
        for value in node.values():
            yield from _integer_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _integer_nodes(value)


def _bounded_inside(node: Mapping[str, Any]) -> bool:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    low_ok = isinstance(low, (int, float)) and low > EXACT_INTEGERS[0]
    return low_ok and isinstance(high, (int, float)) and high < EXACT_INTEGERS[1]


#: The JSON types (SPEC 2.2, TYPE), as JSON Schema names them.
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def schema_types(node: Any) -> tuple[str, ...]:
    """The JSON types a (sub)schema allows: its ``type``, its constant's or its values' types,
    the union of its ``anyOf``/``oneOf`` branches', what its ``allOf`` parts all allow and the
    union of its ``then``'s and ``else``'s (beside an ``if``); () when it does not constrain the
    type (any JSON value)."""
    if not isinstance(node, Mapping):
        return ()
    declared = node.get("type")
    if isinstance(declared, str):
        return (declared,)
    if isinstance(declared, list):
        return tuple(str(t) for t in declared)
    if "const" in node:
        return (_json_type(node["const"]),)
    if isinstance(node.get("enum"), list):
        return tuple(dict.fromkeys(_json_type(v) for v in node["enum"]))
    for keyword in ("anyOf", "oneOf"):
        branches = [schema_types(b) for b in node.get(keyword) or () if b is not False]
        if branches and all(branches):  # (a branch allowing any type leaves it unconstrained)
            return tuple(dict.fromkeys(t for b in branches for t in b))
    parts = [schema_types(b) for b in node.get("allOf") or ()]
    if any(parts):
        constrained = [part for part in parts if part]
        return tuple(t for t in constrained[0] if all(t in part for part in constrained[1:]))
    sides = [schema_types(node.get(side, True)) for side in ("then", "else")] if "if" in node else []
    if sides and all(sides):  # (a side that is absent, or allows any type, leaves it unconstrained)
        return tuple(dict.fromkeys(t for side in sides for t in side))
    return ()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {str: "string", float: "number", list: "array", dict: "object"}.get(type(value), "object")


def _walk(
    node: Mapping[str, Any], path: tuple[str, ...], levels: dict[tuple[str, ...], Level], first: str
) -> None:
    required = set(node.get("required", ()))
    members = []
    for name, sub in node.get("properties", {}).items():
        if sub is True:  # the boolean schema true: any JSON value, as {} is (never dropped unseen)
            sub = {}
        if not isinstance(sub, Mapping):  # false: no value is allowed, so there is no member to carry
            continue
        members.append(_member(name, sub, path, name in required, levels, first))
    levels[path] = Level(path, tuple(members))


def _member(
    name: str,
    sub: Mapping[str, Any],
    level: tuple[str, ...],
    required: bool,
    levels: dict[tuple[str, ...], Level],
    first: str,
) -> Member:
    types = schema_types(sub)
    added = sub.get("x-added-in", first)
    items, child = None, None
    item_schema = sub.get("items")
    # ``items`` says what every item is only without ``prefixItems`` (which says the first ones)
    if "array" in types and isinstance(item_schema, Mapping) and not sub.get("prefixItems"):
        item_types = schema_types(item_schema)
        if "object" in item_types:
            child = (*level, name)
            _walk(item_schema, child, levels, added)  # its objects' members came with it
        items = Member("*", level, True, tuple(t for t in item_types if t != "null"), "null" in item_types,
                       item_schema.get("x-rule"), added, item_schema)  # fmt: skip
    version_key(added)  # a malformed x-added-in is an authoring error, reported here
    return Member(
        name=name,
        level=level,
        required=required,
        types=tuple(t for t in types if t != "null"),
        nullable="null" in types,
        rule=sub.get("x-rule"),
        added_in=added,
        schema=sub,
        items=items,
        child=child,
    )
