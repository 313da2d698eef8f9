"""A candidate spec version (an unreleased schema file) taking part in the matrix and the gate.

The gate runs the matrix with the working tree's schema/ so that a proposed version meets
every released reader and writer before it lands. The candidate behaves as its own schema
says, not as the release below it:

* it **reads** with the candidate schema, then the semantic rules JSON Schema cannot say
  (ADDR_SPAN, BOX_IN_BOUNDS, ...) of the newest released version at or below it;
* it **writes** the payload in the candidate's shape: its wire id, every member it declares
  (a value for each member only it declares, so older readers must ignore them);
* :meth:`Candidate.exercise` turns a generated payload into one whose changed members carry
  a value only the candidate allows, so a loosening is shown to every released reader.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._registry import schema as released_schema
from refitwire._spec import SPEC_VERSIONS, WIRE_SCHEMA_ID, version_key
from refitwire._validate import semantic_violations, writer_violations

LEVELS = ("", "tensor", "shard")
#: The members of the neutral decoded form, per level, in the writer's order.
DECODED = {
    "": ("agent_name", "metadata_endpoint", "agent_meta_b64"),
    "tensor": ("name", "dtype", "elsize", "full_shape"),
    "shard": ("agent_name", "device_id", "addr", "shard_offset", "shape", "digest"),
}
_OPTIONAL_TOP = ("publisher_step",)


class UnknownVersion(ValueError):
    """A participant declared a spec version that is neither released nor a candidate here."""


def candidate_versions(schema_dir: Path) -> list[str]:
    """Rendezvous versions in ``schema_dir`` that are not released."""
    found = [p.stem for p in (schema_dir / "rendezvous").glob("*.json")]
    return sorted((v for v in found if v not in SPEC_VERSIONS and _key(v)), key=version_key)


def base_version(version: str) -> str | None:
    """The newest released version at or below ``version`` (whose semantic rules the candidate keeps)."""
    below = [v for v in SPEC_VERSIONS if version_key(v) <= (_key(version) or ())]
    return below[-1] if below else None


def _key(version: str) -> tuple[int, ...] | None:
    try:
        return version_key(version)
    except ValueError:
        return None


@functools.cache
def load(schema_dir: Path, version: str) -> Candidate:
    """The candidate ``version`` from ``schema_dir``; UnknownVersion when there is no such file."""
    path = schema_dir / "rendezvous" / f"{version}.json"
    if version in SPEC_VERSIONS or not path.is_file():
        raise UnknownVersion(
            f"spec version {version!r} is not released (known: {', '.join(SPEC_VERSIONS)}) "
            f"and {schema_dir} has no candidate schema rendezvous/{version}.json"
        )
    return Candidate(json.loads(path.read_text(encoding="utf-8")), version)


def _node(root: dict[str, Any], level: str) -> dict[str, Any]:
    node: dict[str, Any] = root if level == "" else root.get("$defs", {}).get(level, {})
    return node


def _members(root: dict[str, Any], level: str) -> dict[str, Any]:
    members: dict[str, Any] = _node(root, level).get("properties", {})
    return members


class Candidate:
    """The reference's rules at a version only a schema file knows."""

    def __init__(self, schema: dict[str, Any], version: str, kind: str = "rendezvous") -> None:
        self.version = version
        self.kind = kind  # the document whose released rules it keeps (the gate also reads shard tables)
        self.base = base_version(version)
        self.schema = schema
        self.validator = jsonschema_rs.validator_for(schema)
        wire = _members(schema, "").get("schema", {})
        self.wire_id = wire.get("const", schema.get("x-wire-id", WIRE_SCHEMA_ID))
        old = released_schema(kind, self.base) if self.base else {"$defs": {}}
        self.added = {
            level: {k: v for k, v in _members(schema, level).items() if k not in _members(old, level)}
            for level in LEVELS
        }
        self._old = old

    # -- reading ------------------------------------------------------------------------------

    def violations(self, document: Any) -> list[Violation]:
        """The candidate schema's verdict, then the base version's semantic rules."""
        found = [
            Violation(_rule(self.schema, e), pointer(*e.instance_path), e.instance, e.message)
            for e in self.validator.iter_errors(document)
        ]
        if found or self.base is None:
            return found
        try:
            found = semantic_violations(document, self.base, self.kind)
        except (KeyError, TypeError, AttributeError, ValueError):  # a shape the base rules cannot read
            return []
        # "integers have no fraction" refines the base's type; a member whose type the candidate
        # redefined (integer -> number) is the candidate's to say
        return [
            v for v in found if not (v.rule == "INTEGER_LITERAL" and _member_at(v.pointer) in self._retyped)
        ]

    @functools.cached_property
    def _retyped(self) -> set[tuple[str, str]]:
        return {
            (level, member)
            for level in LEVELS
            for member, new in _members(self.schema, level).items()
            if member in _members(self._old, level)
            and new.get("type") != _members(self._old, level)[member].get("type")
        }

    def check(self, document: Any) -> None:
        found = self.violations(document)
        if found:
            raise InvalidBlob(found)

    def decoded(self, document: dict[str, Any]) -> dict[str, Any]:
        """The neutral decoded form of a checked blob (absent optionals as null)."""
        out = {k: document.get(k) for k in DECODED[""]}
        out["metadata_endpoint"] = out["metadata_endpoint"] or ""  # absent or null reads as empty
        for member in _OPTIONAL_TOP:
            if member in _members(self.schema, ""):
                out[member] = document.get(member)
        declared = set(_members(self.schema, "shard"))
        out["tensors"] = [
            {
                **{k: t.get(k) for k in DECODED["tensor"]},
                "shards": [
                    {k: s.get(k) for k in DECODED["shard"] if k in declared} for s in t.get("shards", [])
                ],
            }
            for t in document.get("tensors", [])
        ]
        return out

    def writer_violations(self, document: dict[str, Any]) -> list[Violation]:
        """WRITE_KNOWN_MEMBERS and WRITE_OMIT_ABSENT against the candidate's own members."""
        return writer_violations(document, self.version, self.schema)

    # -- writing ------------------------------------------------------------------------------

    def document(self, decoded: dict[str, Any]) -> dict[str, Any]:
        """The blob's JSON object for ``decoded``: the writer's member order, absent optionals omitted."""
        top = {"schema": self.wire_id, **{k: decoded.get(k) for k in DECODED[""]}}
        top["tensors"] = [
            {
                **{k: t.get(k) for k in DECODED["tensor"]},
                "shards": [{k: s[k] for k in DECODED["shard"] if s.get(k) is not None} for s in t["shards"]],
            }
            for t in decoded["tensors"]
        ]
        for member in _OPTIONAL_TOP:
            if decoded.get(member) is not None:
                top[member] = decoded[member]
        for level, obj in _walk(top):
            for member, subschema in self.added[level].items():
                if member not in obj and member not in _OPTIONAL_TOP and member not in DECODED[level]:
                    obj[member] = self._sample(member, subschema)
        return top

    def write(self, decoded: dict[str, Any]) -> bytes:
        document = self.document(decoded)
        self.check(document)
        return json.dumps(document).encode("ascii")

    def exercise(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with each changed member set to a value only the candidate allows: in
        every object of its level, or when that breaks a semantic rule (an address span, a box)
        in the first one only. Unchanged when neither is a blob the candidate would write."""
        out = payload
        for level, member, value in self._changed_members:
            for first_only in (False, True):
                trial = copy.deepcopy(out)
                for n, obj in enumerate(o for lv, o in _walk(trial) if lv == level):
                    if n == 0 or not first_only:
                        obj[member] = copy.deepcopy(value)
                try:
                    self.check(self.document(trial))
                except (InvalidBlob, KeyError, TypeError):
                    continue
                out = trial
                break
        return out

    @functools.cached_property
    def _changed_members(self) -> list[tuple[str, str, Any]]:
        found = []
        for level in LEVELS:
            members = (*DECODED[level], *(_OPTIONAL_TOP if level == "" else ()))
            for member in members:
                new, old = _members(self.schema, level).get(member), _members(self._old, level).get(member)
                if new is None or old is None or _bare(new) == _bare(old):
                    continue
                value = _only_in(
                    json.dumps(self._with_defs(new), sort_keys=True),
                    json.dumps({**_bare(old), "$defs": self._old.get("$defs", {})}, sort_keys=True),
                )
                if value is not _NOTHING:
                    found.append((level, member, value))
        return found

    def _with_defs(self, subschema: dict[str, Any]) -> dict[str, Any]:
        return {**_bare(subschema), "$defs": self.schema.get("$defs", {})}

    def _sample(self, member: str, subschema: dict[str, Any]) -> Any:
        return _sample(json.dumps(self._with_defs(subschema), sort_keys=True))


def _walk(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every object of a blob with its level: the top, each tensor, each shard."""
    tensors = document.get("tensors") or []
    return [
        ("", document),
        *(("tensor", t) for t in tensors),
        *(("shard", s) for t in tensors for s in t.get("shards") or []),
    ]


def _member_at(at: str) -> tuple[str, str]:
    """(level, member) of a violation's pointer: ``/x``, ``/tensors/0/x``, ``/tensors/0/shards/1/x``."""
    parts = at.split("/")[1:]
    depth = min((len(parts) - 1) // 2, 2)  # 0: top, 1: a tensor, 2: a shard (an item index may follow)
    return LEVELS[depth], parts[2 * depth] if len(parts) > 2 * depth else ""


def _bare(subschema: dict[str, Any]) -> dict[str, Any]:
    """A subschema without annotations (``x-*``, descriptions), which change no verdict."""
    skip = {"description", "title", "examples", "$comment"}
    return {k: v for k, v in subschema.items() if not k.startswith("x-") and k not in skip}


def _rule(root: dict[str, Any], error: Any) -> str:
    keyword = str(error.schema_path[-1]) if error.schema_path else ""
    if keyword in ("required", "type"):
        return keyword.upper()
    rule, node = "SCHEMA", root
    for step in error.schema_path:
        try:
            node = node[step] if isinstance(node, dict) else node[int(step)]
        except (KeyError, IndexError, ValueError, TypeError):
            break
        if isinstance(node, dict) and "x-rule" in node:
            rule = node["x-rule"]
    return rule


_NOTHING = object()


def _quiet() -> Any:
    from hypothesis import HealthCheck, settings

    return settings(database=None, deadline=None, suppress_health_check=list(HealthCheck), max_examples=300,
                    derandomize=True)  # fmt: skip


@functools.cache
def _only_in(new_json: str, old_json: str) -> Any:
    """A non-null value ``new`` allows and ``old`` does not (deterministic), or _NOTHING."""
    from hypothesis import errors, find
    from hypothesis_jsonschema import from_schema

    old = jsonschema_rs.validator_for(json.loads(old_json))
    try:
        return find(
            from_schema(json.loads(new_json)),
            lambda v: v is not None and not old.is_valid(v),
            settings=_quiet(),
        )
    except (errors.NoSuchExample, errors.Unsatisfiable, errors.InvalidArgument):
        return _NOTHING


@functools.cache
def _sample(subschema_json: str) -> Any:
    """The simplest non-null value the candidate allows for a new member (deterministic)."""
    from hypothesis import find
    from hypothesis_jsonschema import from_schema

    return find(from_schema(json.loads(subschema_json)), lambda value: value is not None, settings=_quiet())
