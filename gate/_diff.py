"""Walk two JSON Schema documents side by side and name every change with a rule ID.

The walk follows the instance: from the root through ``properties`` and ``items``,
resolving ``$ref`` within each document, so a change is reported once per schema location
(``pointer``, in the new document, or the old one for removals) together with the instance
path it concerns (``path``; ``*`` stands for any array index). Keywords the walk does not
model are compared as wholes: any difference there is ``UNCLASSIFIED_CHANGE`` (breaking
until a person has looked), never silently compatible.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs
from refitwire.gate._errors import GateError
from refitwire.gate._rules import Direction, rule

#: Keywords that never change which instances validate.
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$comment",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$anchor",
    }
)
#: Keywords expected to change with every version; not reported.
_VERSION_STAMPS = frozenset({"$id", "x-spec-version"})
_MODELLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "pattern",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "$ref",
        "$defs",
        "definitions",
        "x-added-in",
    }
)
_LENGTHS = (("minLength", "maxLength"), ("minItems", "maxItems"), ("minProperties", "maxProperties"))
_JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


@dataclass(frozen=True)
class Change:
    """One change between two schema documents."""

    rule: str
    pointer: str
    path: str
    detail: str
    old: Any = None
    new: Any = None
    directions: tuple[Direction, ...] = field(default=())

    @property
    def severity(self) -> str:
        return rule(self.rule).severity

    @property
    def breaking(self) -> bool:
        return rule(self.rule).breaking


@dataclass(frozen=True)
class Document:
    """A schema document and where it came from (a file name or ``REF:path``)."""

    source: str
    schema: dict[str, Any]

    @property
    def version(self) -> str | None:
        stamp = self.schema.get("x-spec-version")
        return stamp if isinstance(stamp, str) else None

    @property
    def wire_id(self) -> str | None:
        stamp = self.schema.get("x-wire-id")
        return stamp if isinstance(stamp, str) else None


def load_document(source: str, data: bytes) -> Document:
    """Parse and check one schema document; GateError (a usage error) if it is not one."""
    try:
        schema = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GateError(source, f"not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise GateError(source, f"a schema document is a JSON object, not {type(schema).__name__}")
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        where = "/" + "/".join(str(p) for p in exc.instance_path)
        raise GateError(source, f"not a valid JSON Schema at {where}: {exc.message}") from None
    except jsonschema_rs.ReferencingError as exc:
        raise GateError(source, f"cannot check against its meta-schema: {exc}") from None
    document = Document(source, schema)
    _check_refs(document, schema, "")
    return document


def _check_refs(document: Document, node: Any, at: str) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            _resolve(document, ref, at)
        for key, value in node.items():
            _check_refs(document, value, f"{at}/{_escape(key)}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_refs(document, value, f"{at}/{i}")


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _resolve(document: Document, ref: str, at: str) -> tuple[str, Any]:
    if not ref.startswith("#"):
        raise GateError(
            document.source, f"{ref!r} at {at}: only references within the document are supported"
        )
    pointer = ref[1:]
    node: Any = document.schema
    for token in pointer.split("/")[1:] if pointer else []:
        token = _unescape(token)
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise GateError(document.source, f"{ref!r} at {at} does not resolve")
    return pointer, node


def diff(old: Document, new: Document) -> list[Change]:
    """Every change from ``old`` to ``new``, in walk order."""
    return list(_Walker(old, new).root())


class _Walker:
    def __init__(self, old: Document, new: Document) -> None:
        self.old, self.new = old, new
        self.seen: set[tuple[str, str]] = set()

    def root(self) -> Iterator[Change]:
        yield from self.walk(self.old.schema, "", self.new.schema, "", "")

    def _deref(self, document: Document, node: Any, at: str) -> tuple[Any, str]:
        hops = 0
        node = True if node is True else node
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            assertions = set(node) - {"$ref"} - ANNOTATIONS - {"x-added-in", "x-rule"}
            assertions = {k for k in assertions if not k.startswith("x-")}
            if assertions:  # $ref beside other assertions: compared as a whole
                break
            at, node = _resolve(document, node["$ref"], at)
            hops += 1
            if hops > 64:
                raise GateError(document.source, f"$ref cycle at {at}")
        if node is True:
            node = {}
        return node, at

    def walk(self, old: Any, old_at: str, new: Any, new_at: str, path: str) -> Iterator[Change]:
        old, old_at = self._deref(self.old, old, old_at)
        new, new_at = self._deref(self.new, new, new_at)
        if (old_at, new_at) in self.seen:
            return
        self.seen.add((old_at, new_at))
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                yield Change(
                    "UNCLASSIFIED_CHANGE",
                    new_at,
                    path or "/",
                    "boolean schema changed",
                    old,
                    new,
                    ("BACKWARD", "FORWARD"),
                )
            return
        yield from self._types(old, new, new_at, path)
        yield from self._values(old, new, new_at, path)
        yield from self._numeric(old, new, new_at, path)
        yield from self._lengths(old, new, new_at, path)
        yield from self._strings_arrays(old, new, new_at, path)
        yield from self._objects(old, old_at, new, new_at, path)
        yield from self._annotations(old, new, new_at, path)
        yield from self._unmodelled(old, new, new_at, path)
        old_items, new_items = old.get("items"), new.get("items")
        if old_items is not None and new_items is not None:
            yield from self.walk(old_items, f"{old_at}/items", new_items, f"{new_at}/items", f"{path}/*")
        elif old_items is not None or new_items is not None:
            directions: tuple[Direction, ...] = ("BACKWARD",) if new_items is not None else ("FORWARD",)
            yield Change(
                "UNCLASSIFIED_CHANGE",
                f"{new_at}/items",
                f"{path}/*",
                "items added or removed",
                old_items,
                new_items,
                directions,
            )

    # -- types and nullability -------------------------------------------------------------

    def _types(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        old_types, new_types = _types(old.get("type")), _types(new.get("type"))
        if old_types == new_types:
            return
        where, here = f"{at}/type", path or "/"
        old_null = old_types is None or "null" in old_types
        new_null = new_types is None or "null" in new_types
        if old_types is not None and new_types is not None and old_null != new_null:
            rule_id = "NULLABLE_ADDED" if new_null else "NULLABLE_REMOVED"
            yield Change(
                rule_id,
                where,
                here,
                f"null {'now' if new_null else 'no longer'} allowed",
                old.get("type"),
                new.get("type"),
                rule(rule_id).directions,
            )
        old_rest = None if old_types is None else old_types - {"null"}
        new_rest = None if new_types is None else new_types - {"null"}
        if old_rest == new_rest:
            return
        if _covers(new_rest, old_rest):
            rule_id = "TYPE_WIDENED"
        elif _covers(old_rest, new_rest):
            rule_id = "TYPE_NARROWED"
        else:
            rule_id = "TYPE_CHANGED"
        detail = f"type {_show(old.get('type'))} -> {_show(new.get('type'))}"
        yield Change(rule_id, where, here, detail, old.get("type"), new.get("type"), rule(rule_id).directions)

    # -- enum and const ----------------------------------------------------------------------

    def _values(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        old_values, new_values = _values(old), _values(new)
        if old_values == new_values:
            return
        here = path or "/"
        keyword = "const" if "const" in new or ("const" in old and "enum" not in new) else "enum"
        where = f"{at}/{keyword}"
        if old_values is None:
            yield Change(
                "ENUM_INTRODUCED",
                where,
                here,
                f"restricted to {_show_values(new_values)}",
                None,
                _plain(new_values),
                rule("ENUM_INTRODUCED").directions,
            )
            return
        if new_values is None:
            yield Change(
                "ENUM_DROPPED",
                where,
                here,
                f"no longer restricted to {_show_values(old_values)}",
                _plain(old_values),
                None,
                rule("ENUM_DROPPED").directions,
            )
            return
        if "const" in old and "const" in new:
            wire = old.get("x-rule") == "SCHEMA_ID" or old["const"] == self.old.wire_id
            rule_id = "WIRE_ID_CHANGED" if wire else "CONST_CHANGED"
            yield Change(
                rule_id,
                where,
                here,
                f"const {_show(old['const'])} -> {_show(new['const'])}",
                old["const"],
                new["const"],
                rule(rule_id).directions,
            )
            return
        added, removed = new_values - old_values, old_values - new_values
        if added:
            yield Change(
                "ENUM_VALUE_ADDED",
                where,
                here,
                f"now allows {_show_values(added)}",
                None,
                _plain(added),
                rule("ENUM_VALUE_ADDED").directions,
            )
        if removed:
            yield Change(
                "ENUM_VALUE_REMOVED",
                where,
                here,
                f"no longer allows {_show_values(removed)}",
                _plain(removed),
                None,
                rule("ENUM_VALUE_REMOVED").directions,
            )

    # -- numeric bounds ------------------------------------------------------------------------

    def _numeric(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        here = path or "/"
        for low in (True, False):
            old_bound, new_bound = _bound(old, low), _bound(new, low)
            if old_bound == new_bound:
                continue
            keyword = _bound_keyword(new if new_bound is not None else old, low)
            tighter = _tighter(new_bound, old_bound, low)
            rule_id = "NUMERIC_BOUND_TIGHTENED" if tighter else "NUMERIC_BOUND_LOOSENED"
            yield Change(
                rule_id,
                f"{at}/{keyword}",
                here,
                f"{'lower' if low else 'upper'} bound {_show_bound(old_bound)} -> {_show_bound(new_bound)}",
                old.get(keyword),
                new.get(keyword),
                rule(rule_id).directions,
            )
        old_step, new_step = old.get("multipleOf"), new.get("multipleOf")
        if old_step != new_step:
            # stricter: every multiple of the new step is one of the old; looser: the reverse
            stricter = old_step is None or (new_step is not None and _divides(old_step, new_step))
            looser = new_step is None or (old_step is not None and _divides(new_step, old_step))
            directions: tuple[Direction, ...] = ("BACKWARD", "FORWARD")
            rule_id = "NUMERIC_BOUND_TIGHTENED"
            if stricter and not looser:
                directions = ("BACKWARD",)
            elif looser and not stricter:
                rule_id, directions = "NUMERIC_BOUND_LOOSENED", ("FORWARD",)
            yield Change(
                rule_id,
                f"{at}/multipleOf",
                here,
                f"multipleOf {old_step} -> {new_step}",
                old_step,
                new_step,
                directions,
            )

    # -- lengths -------------------------------------------------------------------------------

    def _lengths(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        here = path or "/"
        for low_kw, high_kw in _LENGTHS:
            old_low, new_low = old.get(low_kw, 0), new.get(low_kw, 0)
            if old_low != new_low:
                rule_id = "LENGTH_BOUND_TIGHTENED" if new_low > old_low else "LENGTH_BOUND_LOOSENED"
                yield Change(
                    rule_id,
                    f"{at}/{low_kw}",
                    here,
                    f"{low_kw} {old_low} -> {new_low}",
                    old.get(low_kw),
                    new.get(low_kw),
                    rule(rule_id).directions,
                )
            old_high, new_high = old.get(high_kw, math.inf), new.get(high_kw, math.inf)
            if old_high != new_high:
                rule_id = "LENGTH_BOUND_TIGHTENED" if new_high < old_high else "LENGTH_BOUND_LOOSENED"
                yield Change(
                    rule_id,
                    f"{at}/{high_kw}",
                    here,
                    f"{high_kw} {_show_bound((old_high, False))} -> {_show_bound((new_high, False))}",
                    old.get(high_kw),
                    new.get(high_kw),
                    rule(rule_id).directions,
                )

    def _strings_arrays(
        self, old: dict[str, Any], new: dict[str, Any], at: str, path: str
    ) -> Iterator[Change]:
        here = path or "/"
        old_pattern, new_pattern = old.get("pattern"), new.get("pattern")
        if old_pattern != new_pattern:
            if old_pattern is None:
                rule_id = "PATTERN_ADDED"
            elif new_pattern is None:
                rule_id = "PATTERN_REMOVED"
            else:
                rule_id = "PATTERN_CHANGED"
            yield Change(
                rule_id,
                f"{at}/pattern",
                here,
                f"pattern {_show(old_pattern)} -> {_show(new_pattern)}",
                old_pattern,
                new_pattern,
                rule(rule_id).directions,
            )
        old_unique, new_unique = bool(old.get("uniqueItems")), bool(new.get("uniqueItems"))
        if old_unique != new_unique:
            rule_id = "UNIQUE_ITEMS_ADDED" if new_unique else "UNIQUE_ITEMS_REMOVED"
            yield Change(
                rule_id,
                f"{at}/uniqueItems",
                here,
                f"uniqueItems {old_unique} -> {new_unique}",
                old.get("uniqueItems"),
                new.get("uniqueItems"),
                rule(rule_id).directions,
            )

    # -- objects -------------------------------------------------------------------------------

    def _objects(
        self, old: dict[str, Any], old_at: str, new: dict[str, Any], new_at: str, path: str
    ) -> Iterator[Change]:
        old_props: dict[str, Any] = old.get("properties", {})
        new_props: dict[str, Any] = new.get("properties", {})
        old_req, new_req = set(old.get("required", [])), set(new.get("required", []))
        old_closed, new_closed = _closed(old), _closed(new)
        version = self.new.version
        for name in new_props.keys() - old_props.keys():
            where, here = f"{new_at}/properties/{_escape(name)}", f"{path}/{_escape(name)}"
            if name in new_req and name not in old_req:
                yield Change(
                    "PROPERTY_ADDED_REQUIRED",
                    where,
                    here,
                    f"required property {name!r} added",
                    None,
                    new_props[name],
                    rule("PROPERTY_ADDED_REQUIRED").directions,
                )
            elif old_closed:
                yield Change(
                    "PROPERTY_ADDED_TO_CLOSED_OBJECT",
                    where,
                    here,
                    f"property {name!r} added to an object that rejects unknown members",
                    None,
                    new_props[name],
                    rule("PROPERTY_ADDED_TO_CLOSED_OBJECT").directions,
                )
            else:
                yield Change(
                    "PROPERTY_ADDED_OPTIONAL",
                    where,
                    here,
                    f"optional property {name!r} added",
                    None,
                    new_props[name],
                )
            added_in = new_props[name].get("x-added-in") if isinstance(new_props[name], dict) else None
            if added_in is None:
                yield Change("ADDED_IN_MISSING", where, here, f"new property {name!r} has no x-added-in")
            elif version is not None and not _added_between(added_in, self.old.version, version):
                yield Change(
                    "ADDED_IN_MISMATCH",
                    f"{where}/x-added-in",
                    here,
                    f"property {name!r}, new since {self.old.version or 'the old document'}, "
                    f"says x-added-in {added_in!r} in a {version} document",
                    None,
                    added_in,
                )
        for name in old_props.keys() - new_props.keys():
            where, here = f"{old_at}/properties/{_escape(name)}", f"{path}/{_escape(name)}"
            backward: tuple[Direction, ...] = ("BACKWARD",) if new_closed else ()
            if name in old_req:
                yield Change(
                    "PROPERTY_REMOVED_REQUIRED",
                    where,
                    here,
                    f"required property {name!r} removed",
                    old_props[name],
                    None,
                    backward + ("FORWARD",),
                )
            else:
                yield Change(
                    "PROPERTY_REMOVED_OPTIONAL",
                    where,
                    here,
                    f"optional property {name!r} removed",
                    old_props[name],
                    None,
                    backward,
                )
        for name in sorted(new_props.keys() & old_props.keys(), key=list(new_props).index):
            where, here = f"{new_at}/properties/{_escape(name)}", f"{path}/{_escape(name)}"
            if name in new_req and name not in old_req:
                yield Change(
                    "REQUIRED_ADDED",
                    f"{new_at}/required",
                    here,
                    f"property {name!r} made required",
                    False,
                    True,
                    rule("REQUIRED_ADDED").directions,
                )
            if name in old_req and name not in new_req:
                yield Change(
                    "REQUIRED_REMOVED",
                    f"{new_at}/required",
                    here,
                    f"property {name!r} made optional",
                    True,
                    False,
                    rule("REQUIRED_REMOVED").directions,
                )
            yield from self._added_in(old_props[name], new_props[name], where, here, name)
            yield from self.walk(
                old_props[name], f"{old_at}/properties/{_escape(name)}", new_props[name], where, here
            )
        for name in sorted((new_req ^ old_req) - old_props.keys() - new_props.keys()):
            here = f"{path}/{_escape(name)}"
            rule_id = "REQUIRED_ADDED" if name in new_req else "REQUIRED_REMOVED"
            yield Change(
                rule_id,
                f"{new_at}/required",
                here,
                f"undeclared member {name!r} required: {name in old_req} -> {name in new_req}",
                name in old_req,
                name in new_req,
                rule(rule_id).directions,
            )
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            before, after = old.get(keyword, True), new.get(keyword, True)
            if before == after:
                continue
            where = f"{new_at}/{keyword}"
            if before in (True, {}) and after is False:
                yield Change(
                    "ADDITIONAL_PROPERTIES_CLOSED",
                    where,
                    path or "/",
                    f"{keyword}: false added",
                    old.get(keyword),
                    False,
                    rule("ADDITIONAL_PROPERTIES_CLOSED").directions,
                )
            elif before is False and after in (True, {}):
                yield Change(
                    "ADDITIONAL_PROPERTIES_OPENED",
                    where,
                    path or "/",
                    f"{keyword}: false removed",
                    False,
                    new.get(keyword),
                )
            else:
                yield Change(
                    "UNCLASSIFIED_CHANGE",
                    where,
                    path or "/",
                    f"{keyword} changed",
                    old.get(keyword),
                    new.get(keyword),
                    ("BACKWARD", "FORWARD"),
                )

    def _added_in(self, old: Any, new: Any, at: str, path: str, name: str) -> Iterator[Change]:
        old_stamp = old.get("x-added-in") if isinstance(old, dict) else None
        new_stamp = new.get("x-added-in") if isinstance(new, dict) else None
        if new_stamp is None:
            yield Change(
                "ADDED_IN_MISSING", at, path, f"property {name!r} has no x-added-in", old_stamp, None
            )
        elif old_stamp is not None and old_stamp != new_stamp:
            yield Change(
                "ADDED_IN_CHANGED",
                f"{at}/x-added-in",
                path,
                f"x-added-in of {name!r} {old_stamp!r} -> {new_stamp!r}",
                old_stamp,
                new_stamp,
            )

    # -- annotations and everything else ---------------------------------------------------------

    def _annotations(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        keys = (
            (old.keys() | new.keys()) - _VERSION_STAMPS - {"x-added-in"}
            if at == ""
            else ((old.keys() | new.keys()) - {"x-added-in"})
        )
        for key in sorted(keys):
            if (key in ANNOTATIONS or key.startswith("x-")) and old.get(key) != new.get(key):
                yield Change(
                    "ANNOTATION_CHANGED",
                    f"{at}/{_escape(key)}",
                    path or "/",
                    f"{key} changed",
                    old.get(key),
                    new.get(key),
                )

    def _unmodelled(self, old: dict[str, Any], new: dict[str, Any], at: str, path: str) -> Iterator[Change]:
        for key in sorted(old.keys() | new.keys()):
            if key in _MODELLED or key in ANNOTATIONS or key in _VERSION_STAMPS or key.startswith("x-"):
                continue
            if old.get(key) != new.get(key):
                yield Change(
                    "UNCLASSIFIED_CHANGE",
                    f"{at}/{_escape(key)}",
                    path or "/",
                    f"{key} changed; the gate does not model it",
                    old.get(key),
                    new.get(key),
                    ("BACKWARD", "FORWARD"),
                )


def version_key(version: str) -> tuple[int, ...] | None:
    """``1.2.0`` -> (1, 2, 0); None for anything that is not a dotted version."""
    parts = version.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def _added_between(added_in: Any, old: str | None, new: str) -> bool:
    """Whether ``added_in`` names a version after ``old`` and at most ``new``."""
    stamp = version_key(added_in) if isinstance(added_in, str) else None
    upper = version_key(new)
    if stamp is None or upper is None or stamp > upper:
        return False
    lower = version_key(old) if old else None
    return lower is None or stamp > lower


def _types(value: Any) -> frozenset[str] | None:
    if value is None:
        return None
    types = frozenset([value] if isinstance(value, str) else value)
    if not types <= _JSON_TYPES:
        raise ValueError(f"unknown type {sorted(types - _JSON_TYPES)}")
    return types


def _covers(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    """Whether every value of type set ``narrow`` is of type set ``wide``."""
    if wide is None:
        return True
    if narrow is None:
        return False
    expanded = set(wide) | ({"integer"} if "number" in wide else set())
    return narrow <= expanded


def _values(schema: dict[str, Any]) -> frozenset[str] | None:
    if "const" in schema:
        return frozenset([_canon(schema["const"])])
    if "enum" in schema:
        return frozenset(_canon(v) for v in schema["enum"])
    return None


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _plain(values: frozenset[str] | None) -> list[Any] | None:
    return None if values is None else [json.loads(v) for v in sorted(values)]


def _show_values(values: frozenset[str] | None) -> str:
    return "nothing" if values is None else ", ".join(sorted(values))


def _show(value: Any) -> str:
    return json.dumps(value)


def _bound(schema: dict[str, Any], low: bool) -> tuple[float, bool] | None:
    """The effective (value, exclusive) lower or upper bound; None when unbounded."""
    inclusive = schema.get("minimum" if low else "maximum")
    exclusive = schema.get("exclusiveMinimum" if low else "exclusiveMaximum")
    candidates = []
    if isinstance(inclusive, (int, float)) and not isinstance(inclusive, bool):
        candidates.append((inclusive, False))
    if isinstance(exclusive, (int, float)) and not isinstance(exclusive, bool):
        candidates.append((exclusive, True))
    if not candidates:
        return None
    # the tighter of the two: for a lower bound the larger value (exclusive wins a tie)
    return (
        max(candidates, key=lambda b: (b[0], b[1]))
        if low
        else min(candidates, key=lambda b: (b[0], not b[1]))
    )


def _bound_keyword(schema: dict[str, Any], low: bool) -> str:
    exclusive = "exclusiveMinimum" if low else "exclusiveMaximum"
    return exclusive if exclusive in schema else ("minimum" if low else "maximum")


def _tighter(new: tuple[float, bool] | None, old: tuple[float, bool] | None, low: bool) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    if new[0] != old[0]:
        return new[0] > old[0] if low else new[0] < old[0]
    return new[1] and not old[1]


def _show_bound(bound: tuple[float, bool] | None) -> str:
    if bound is None or bound[0] == math.inf:
        return "none"
    return f"{bound[0]}{' (exclusive)' if bound[1] else ''}"


def _divides(step: float, value: float) -> bool:
    quotient = value / step
    return quotient == int(quotient)


def _closed(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties") is False or schema.get("unevaluatedProperties") is False
