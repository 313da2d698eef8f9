"""Walk two JSON Schema documents side by side and name every change with a rule ID.

The walk follows the instance: from the root through ``properties`` and ``items``,
resolving ``$ref`` within each document, so a change is reported once per schema location
(``pointer``, in the new document, or the old one for removals) together with the instance
path it concerns (``path``; ``*`` stands for any array index). Keywords the walk does not
model are compared as wholes: any difference there is ``UNCLASSIFIED_CHANGE`` (breaking
until a person has looked), never silently compatible. Keyword families: ``_keywords``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from refitwire.gate import _keywords as kw
from refitwire.gate._change import ANNOTATIONS, Change
from refitwire.gate._document import Document
from refitwire.gate._errors import GateError
from refitwire.gate._rules import Rule
from refitwire.wire import join, parse_version


def diff(old: Document, new: Document) -> list[Change]:
    """Every change from ``old`` to ``new``, in walk order."""
    try:
        return list(_Walker(old, new).root())
    except RecursionError:
        raise GateError(new.source, "nested too deep to compare") from None


class _Walker:
    def __init__(self, old: Document, new: Document) -> None:
        self.old, self.new = old, new
        self.seen: set[tuple[str, str]] = set()

    def root(self) -> Iterator[Change]:
        yield from self.walk(self.old.schema, "", self.new.schema, "", "")

    def _deref(self, document: Document, node: Any, at: str) -> tuple[Any, str]:
        """``node`` through its references, and its schema location, by the wire's resolver."""
        node, at = document.follow(node, at, until=_beside_assertions)
        return ({} if node is True else node), at

    def walk(self, old: Any, old_at: str, new: Any, new_at: str, path: str) -> Iterator[Change]:
        old, old_at = self._deref(self.old, old, old_at)
        new, new_at = self._deref(self.new, new, new_at)
        if (old_at, new_at) in self.seen:
            return
        self.seen.add((old_at, new_at))
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                yield Change(
                    Rule.UNCLASSIFIED_CHANGE,
                    new_at,
                    path,
                    "boolean schema changed",
                    old,
                    new,
                )
            return
        yield from kw.types(old, new, new_at, path)
        yield from kw.values(old, new, new_at, path, self.old.wire_id)
        yield from kw.numeric(old, new, new_at, path)
        yield from kw.lengths(old, new, new_at, path)
        yield from kw.strings_arrays(old, new, new_at, path)
        yield from self._objects(old, old_at, new, new_at, path)
        yield from kw.annotation_changes(old, new, new_at, path)
        yield from kw.unmodelled(old, new, new_at, path)
        old_items, new_items = old.get("items"), new.get("items")
        if old_items is not None and new_items is not None:
            yield from self.walk(
                old_items, join(old_at, "items"), new_items, join(new_at, "items"), join(path, "*")
            )
        elif old_items is not None or new_items is not None:
            yield Change(
                Rule.UNCLASSIFIED_CHANGE,
                join(new_at, "items"),
                join(path, "*"),
                "items added or removed",
                old_items,
                new_items,
            )

    # -- objects -------------------------------------------------------------------------------

    def _objects(
        self, old: dict[str, Any], old_at: str, new: dict[str, Any], new_at: str, path: str
    ) -> Iterator[Change]:
        old_props: dict[str, Any] = old.get("properties", {})
        new_props: dict[str, Any] = new.get("properties", {})
        old_req, new_req = set(old.get("required", [])), set(new.get("required", []))
        old_closed, new_closed = kw.closed(old), kw.closed(new)
        version = self.new.version
        for name in new_props.keys() - old_props.keys():
            where, here = join(new_at, "properties", name), join(path, name)
            if name in new_req and name not in old_req:
                yield Change(
                    Rule.PROPERTY_ADDED_REQUIRED,
                    where,
                    here,
                    f"required property {name!r} added",
                    None,
                    new_props[name],
                )
            elif old_closed:
                yield Change(
                    Rule.PROPERTY_ADDED_TO_CLOSED_OBJECT,
                    where,
                    here,
                    f"property {name!r} added to an object that rejects unknown members",
                    None,
                    new_props[name],
                )
            else:
                yield Change(
                    Rule.PROPERTY_ADDED_OPTIONAL,
                    where,
                    here,
                    f"optional property {name!r} added",
                    None,
                    new_props[name],
                )
            added_in = new_props[name].get("x-added-in") if isinstance(new_props[name], dict) else None
            if added_in is None:
                yield Change(Rule.ADDED_IN_MISSING, where, here, _no_stamp(name, new_props[name], version))
            elif version is not None and not _added_between(added_in, self.old.version, version):
                yield Change(
                    Rule.ADDED_IN_MISMATCH,
                    join(where, "x-added-in"),
                    here,
                    f"property {name!r}, new since {self.old.version or 'the old document'}, "
                    f"says x-added-in {added_in!r} in a {version} document",
                    None,
                    added_in,
                )
        for name in old_props.keys() - new_props.keys():
            where, here = join(old_at, "properties", name), join(path, name)
            required = name in old_req
            yield Change(
                Rule.PROPERTY_REMOVED_REQUIRED if required else Rule.PROPERTY_REMOVED_OPTIONAL,
                where,
                here,
                f"{'required' if required else 'optional'} property {name!r} removed",
                old_props[name],
                None,
            )
            if new_closed:  # old blobs that carry it are now unknown members of a closed object
                yield Change(
                    Rule.PROPERTY_REMOVED_FROM_CLOSED_OBJECT,
                    where,
                    here,
                    f"property {name!r} removed from an object that rejects unknown members",
                    old_props[name],
                    None,
                )
        for name in sorted(new_props.keys() & old_props.keys(), key=list(new_props).index):
            where, here = join(new_at, "properties", name), join(path, name)
            if name in new_req and name not in old_req:
                yield Change(
                    Rule.REQUIRED_ADDED,
                    join(new_at, "required"),
                    here,
                    f"property {name!r} made required",
                    False,
                    True,
                )
            if name in old_req and name not in new_req:
                yield Change(
                    Rule.REQUIRED_REMOVED,
                    join(new_at, "required"),
                    here,
                    f"property {name!r} made optional",
                    True,
                    False,
                )
            yield from self._added_in(old_props[name], new_props[name], where, here, name)
            yield from self.walk(
                old_props[name], join(old_at, "properties", name), new_props[name], where, here
            )
        for name in sorted((new_req ^ old_req) - old_props.keys() - new_props.keys()):
            here = join(path, name)
            rule_id = Rule.REQUIRED_ADDED if name in new_req else Rule.REQUIRED_REMOVED
            yield Change(
                rule_id,
                join(new_at, "required"),
                here,
                f"undeclared member {name!r} required: {name in old_req} -> {name in new_req}",
                name in old_req,
                name in new_req,
            )
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            before, after = kw.open_schema(old.get(keyword, True)), kw.open_schema(new.get(keyword, True))
            if before == after:  # an empty schema and true accept the same members
                continue
            where = join(new_at, keyword)
            if before is True:  # false, or a schema that unknown members must match
                yield Change(
                    Rule.ADDITIONAL_PROPERTIES_CLOSED,
                    where,
                    path,
                    f"{keyword}: false added"
                    if after is False
                    else f"{keyword}: unknown members must match {kw.show_value(after)}",
                    old.get(keyword),
                    new.get(keyword),
                )
            elif before is False and after in (True, {}):
                yield Change(
                    Rule.ADDITIONAL_PROPERTIES_OPENED,
                    where,
                    path,
                    f"{keyword}: false removed",
                    False,
                    new.get(keyword),
                )
            else:
                yield Change(
                    Rule.UNCLASSIFIED_CHANGE,
                    where,
                    path,
                    f"{keyword} changed",
                    old.get(keyword),
                    new.get(keyword),
                )

    def _added_in(self, old: Any, new: Any, at: str, path: str, name: str) -> Iterator[Change]:
        old_stamp = old.get("x-added-in") if isinstance(old, dict) else None
        new_stamp = new.get("x-added-in") if isinstance(new, dict) else None
        if new_stamp is None:
            yield Change(
                Rule.ADDED_IN_MISSING, at, path, f"property {name!r} has no x-added-in", old_stamp, None
            )
        elif old_stamp is not None and old_stamp != new_stamp:
            yield Change(
                Rule.ADDED_IN_CHANGED,
                join(at, "x-added-in"),
                path,
                f"x-added-in of {name!r} {old_stamp!r} -> {new_stamp!r}",
                old_stamp,
                new_stamp,
            )


def _no_stamp(name: str, schema: Any, version: str | None) -> str:
    """Why a new property without ``x-added-in`` is refused; for a boolean schema, what to write
    instead: ``true`` allows any JSON value as ``{}`` does, but has no room for the version
    that added it, which every member names (released readers and writers are judged by it)."""
    if isinstance(schema, bool):
        same: dict[str, Any] = {} if schema else {"not": {}}
        stamp = json.dumps({**same, "x-added-in": version or "MAJOR.MINOR.PATCH"})
        return (
            f"new property {name!r} is the boolean schema {json.dumps(schema)}, which cannot carry "
            f"x-added-in: write {stamp} ({'any JSON value' if schema else 'no value'}) instead"
        )
    return f"new property {name!r} has no x-added-in"


def _beside_assertions(node: Any) -> bool:
    """Whether a ``$ref`` has assertions beside it: the node is then compared as a whole."""
    beside = set(node) - {"$ref"} - ANNOTATIONS - {"x-added-in", "x-rule"}
    return any(not key.startswith("x-") for key in beside)


def _added_between(added_in: Any, old: str | None, new: str) -> bool:
    """Whether ``added_in`` names a version after ``old`` and at most ``new``."""
    stamp = parse_version(added_in) if isinstance(added_in, str) else None
    upper = parse_version(new)
    if stamp is None or upper is None or stamp > upper:
        return False
    lower = parse_version(old) if old else None
    return lower is None or stamp > lower
