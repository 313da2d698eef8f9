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
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema_rs
from refitwire.compat._cases import member_values, register_candidate
from refitwire.compat._forms import decoded_document, objects_at, written_document
from refitwire.compat._hypothesis import deterministic
from refitwire.engine import (
    EMPTY_WHEN_ABSENT,
    SPEC_VERSIONS,
    WIRE_SCHEMA_ID,
    InvalidBlob,
    Violation,
    schema_errors,
    semantic_violations,
    writer_violations,
)
from refitwire.wire import (
    Member,
    compile_model,
    join,
    parse_version,
    tokens,
    unreleased_versions,
    version_key,
    wire_model,
)


class UnknownVersion(ValueError):
    """A participant declared a spec version that is neither released nor a candidate here."""


def candidate_versions(schema_dir: Path) -> list[str]:
    """Rendezvous versions in ``schema_dir`` that are not released."""
    return list(unreleased_versions(schema_dir))


def base_version(version: str) -> str | None:
    """The newest released version at or below ``version`` (whose semantic rules the candidate keeps)."""
    below = [v for v in SPEC_VERSIONS if version_key(v) <= (parse_version(version) or (0, 0, 0))]
    return below[-1] if below else None


@functools.cache
def load(schema_dir: Path, version: str) -> Candidate:
    """The candidate ``version`` from ``schema_dir``; UnknownVersion when there is no such file."""
    path = schema_dir / "rendezvous" / f"{version}.json"
    if version in SPEC_VERSIONS or not path.is_file():
        raise UnknownVersion(
            f"spec version {version!r} is not released (known: {', '.join(SPEC_VERSIONS)}) "
            f"and {schema_dir} has no candidate schema rendezvous/{version}.json"
        )
    candidate = Candidate(json.loads(path.read_text(encoding="utf-8")), version)
    register_candidate(candidate.model)
    return candidate


class Candidate:
    """The reference's rules at a version only a schema file knows, read from its wire model."""

    def __init__(self, schema: dict[str, Any], version: str, kind: str = "rendezvous") -> None:
        self.version = version
        self.kind = kind  # the document whose released rules it keeps (the gate also reads shard tables)
        self.base = base_version(version)
        self.schema = schema
        self.model = compile_model(schema, kind)
        self.validator = jsonschema_rs.validator_for(schema)
        self.wire_id = self.model.wire_id or WIRE_SCHEMA_ID
        self._old = wire_model(kind, self.base) if self.base else None

    # -- reading ------------------------------------------------------------------------------

    def violations(self, document: Any) -> list[Violation]:
        """The candidate schema's verdict, then the base version's semantic rules."""
        found = list(schema_errors(self.validator.iter_errors(document), self.model))
        found.sort(key=lambda v: v.rule != "SCHEMA_ID")  # a foreign document is reported as such (SPEC 2.7)
        if found or self.base is None:
            return found
        try:
            found = semantic_violations(document, self.base, self.kind)
        except (KeyError, TypeError, AttributeError, ValueError):  # a shape the base rules cannot read
            return []
        # "integers have no fraction" refines the base's type; a member whose type the candidate
        # redefined (integer -> number) is the candidate's to say
        found = [v for v in found if not (v.rule == "INTEGER_LITERAL" and self._retyped(v.pointer))]
        return found or list(self._new_integer_literals(document))

    def _new_integer_literals(self, document: Any) -> Iterator[Violation]:
        """INTEGER_LITERAL for the integer members the base version does not declare (its rules
        do not know them): a float where the candidate's schema says integer."""
        for level, declared in self.model.levels.items():
            old = self._old.levels.get(level) if self._old else None
            for member in declared.members:
                if not member.holds_integers or (old is not None and member.name in old):
                    continue
                for obj, at in _objects_with_paths(document, level):
                    value = obj.get(member.name)
                    items = value if isinstance(value, list) else [value]
                    for n, item in enumerate(items):
                        if type(item) is float:
                            where = join(at, member.name, *([n] if isinstance(value, list) else []))
                            yield Violation("INTEGER_LITERAL", where, item, "integers are written without a "
                                            "fraction or exponent")  # fmt: skip

    def _retyped(self, at: str) -> bool:
        place = [int(t) if t.isdigit() else t for t in tokens(at)]
        new, old = self.model.at(place), self._old.at(place) if self._old else None
        return new is not None and old is not None and new.types != old.types

    def check(self, document: Any) -> None:
        found = self.violations(document)
        if found:
            raise InvalidBlob(found)

    def decoded(self, document: dict[str, Any]) -> dict[str, Any]:
        """The neutral decoded form of a checked blob: every member the candidate declares."""
        return decoded_document(document, self.model)

    def writer_violations(self, document: dict[str, Any]) -> list[Violation]:
        """WRITE_KNOWN_MEMBERS and WRITE_OMIT_ABSENT against the candidate's own members."""
        return writer_violations(document, self.version, self.model)

    # -- writing ------------------------------------------------------------------------------

    def document(self, decoded: dict[str, Any]) -> dict[str, Any]:
        """The blob's JSON object for ``decoded``: the writer's member order, absent optionals
        omitted; a required member the payload lacks gets the simplest value the schema allows."""
        if EMPTY_WHEN_ABSENT in self.model.top and decoded.get(EMPTY_WHEN_ABSENT) is None:
            decoded = {**decoded, EMPTY_WHEN_ABSENT: ""}  # WRITE_ENDPOINT: always written, "" for none
        return written_document(decoded, self.model, fill=self._sample)

    def write(self, decoded: dict[str, Any]) -> bytes:
        document = self.document(decoded)
        self.check(document)
        return json.dumps(document).encode("ascii")

    def refusal_rule(self, payload: dict[str, Any]) -> str | None:
        """The rule the candidate refuses ``payload`` with, or None when it would write it."""
        try:
            self.check(self.document(payload))
        except InvalidBlob as exc:
            return exc.rule
        except (KeyError, TypeError):
            return None
        return None

    def exercise(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with each changed member set to a value only the candidate allows: in
        every object of its level, or when that breaks a semantic rule (an address span, a box)
        in the first one only. Unchanged when neither is a blob the candidate would write."""
        out = payload
        for level, member, value in self._changed_members:
            for first_only in (False, True):
                trial = copy.deepcopy(out)
                for n, obj in enumerate(objects_at(trial, self.model, level)):
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
    def _changed_members(self) -> list[tuple[tuple[str, ...], str, Any]]:
        found = []
        for path, level in self.model.levels.items():
            old_level = self._old.levels.get(path) if self._old else None
            for member in level.members:
                if member.child is not None or old_level is None or member.name not in old_level:
                    continue
                new, old = _bare(member.schema), _bare(old_level[member.name].schema)
                if new == old:
                    continue
                value = _only_in(json.dumps(new, sort_keys=True), json.dumps(old, sort_keys=True))
                if value is not _NOTHING:
                    found.append((path, member.name, value))
        return found

    def _sample(self, member: Member) -> Any:
        """A value the candidate allows for a required member a payload lacks (deterministic)."""
        return member_values(json.dumps(_bare(member.schema), sort_keys=True))[0]


def _objects_with_paths(document: Any, level: tuple[str, ...]) -> list[tuple[dict[str, Any], str]]:
    """Every object of ``level`` in ``document`` with its JSON pointer."""
    found: list[tuple[Any, str]] = [(document, "")]
    for name in level:
        found = [(item, join(at, name, n)) for obj, at in found if isinstance(obj, dict)
                 for n, item in enumerate(obj.get(name) or [])]  # fmt: skip
    return [(obj, at) for obj, at in found if isinstance(obj, dict)]


def _bare(subschema: Any) -> Any:
    """A subschema without annotations (``x-*``, descriptions), which change no verdict."""
    skip = {"description", "title", "examples", "$comment"}
    if isinstance(subschema, list):
        return [_bare(item) for item in subschema]
    if not isinstance(subschema, Mapping):
        return subschema
    return {k: _bare(v) for k, v in subschema.items() if not k.startswith("x-") and k not in skip}


_NOTHING = object()


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
            settings=deterministic(),
        )
    except (errors.NoSuchExample, errors.Unsatisfiable, errors.InvalidArgument):
        return _NOTHING
