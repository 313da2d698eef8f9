"""A candidate spec version (an unreleased schema file) taking part in the matrix and the gate.

The gate runs the matrix with the working tree's schema/ so that a proposed version meets
every released reader and writer before it lands. A candidate is the same registry as the
library's with one more schema file (``Registry.with_resource``), and it is read and written
by the library's own reader and writer, given that registry: its schema, then the semantic
rules JSON Schema cannot say (ADDR_SPAN, BOX_IN_BOUNDS, ...) over its own members; its wire
id and every member it declares written in its order. What stays here is what the matrix
asks of a candidate beyond reading and writing:

* :meth:`Candidate.refusal_rule`: which of the writer refusals it really refuses;
* :meth:`Candidate.exercise` turns a generated payload into one whose changed members carry
  a value only the candidate allows, so a loosening is shown to every released reader.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema_rs
from refitwire import InvalidBlob, Violation, from_decoded, violations, wire, wrap_rendezvous_blob
from refitwire.compat._errors import UnknownVersion
from refitwire.compat._hypothesis import deterministic, kit_draws
from refitwire.compat.cases import objects_at
from refitwire.wire import Registry, check, parse_version, version_key, writer_violations


def candidate_versions(schema_dir: Path, registry: Registry) -> list[str]:
    """Rendezvous versions in ``schema_dir`` that ``registry`` does not release."""
    return list(wire.unreleased_versions(schema_dir, registry))


def with_candidates(schema_dir: Path | None, registry: Registry) -> Registry:
    """``registry`` with every unreleased schema file of ``schema_dir``."""
    return registry if schema_dir is None else registry.with_candidates(schema_dir)


def base_version(version: str, registry: Registry) -> str | None:
    """The newest released version at or below ``version``."""
    key = parse_version(version) or (0, 0, 0)
    below = [v for v in registry.released_versions() if version_key(v) <= key]
    return below[-1] if below else None


def load(registry: Registry, version: str) -> Candidate:
    """The candidate ``version`` of ``registry``; UnknownVersion when it holds no such file."""
    if version not in registry.candidate_versions():
        raise UnknownVersion(
            f"spec version {version!r} is not released (known: {', '.join(registry.released_versions())}) "
            f"and no candidate schema rendezvous/{version}.json was given (--schema-dir)"
        )
    return Candidate(registry, version)


class Candidate:
    """A version of ``registry`` that only a schema file knows, read and written by the library."""

    def __init__(self, registry: Registry, version: str, kind: str = "rendezvous") -> None:
        self.registry = registry
        self.version = version
        self.kind = kind  # the document it is read as (the gate also reads shard tables)
        self.model = registry.wire_model(kind, version)
        self.base = base_version(version, registry)
        self._old = registry.wire_model(kind, self.base) if self.base else None

    @classmethod
    def of_schema(
        cls, registry: Registry, schema: dict[str, Any], version: str, kind: str = "rendezvous"
    ) -> Candidate:
        """``registry`` with ``schema`` as ``kind`` at ``version`` (the gate's proposed file)."""
        return cls(registry.with_resource(kind, version, schema), version, kind)

    # -- reading: the library's reader at the candidate's version ------------------------------

    def violations(self, document: Any) -> list[Violation]:
        return violations(document, self.kind, self.version, self.registry)

    def check(self, document: Any) -> None:
        check(document, self.kind, self.version, self.registry)

    def writer_violations(self, document: dict[str, Any]) -> list[Violation]:
        """WRITE_KNOWN_MEMBERS and WRITE_OMIT_ABSENT against the candidate's own members."""
        return writer_violations(document, self.version, registry=self.registry)

    # -- writing: the library's writer at the candidate's version ------------------------------

    def write(self, decoded: dict[str, Any]) -> bytes:
        p = from_decoded(decoded, self.registry)
        return wrap_rendezvous_blob(
            *p[:4], p.publisher_step, spec_version=self.version, registry=self.registry, **p.optional_members
        )

    def refusal_rule(self, payload: dict[str, Any]) -> str | None:
        """The rule the candidate refuses ``payload`` with, or None when it would write it."""
        try:
            self.write(payload)
        except InvalidBlob as exc:
            return exc.rule
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
                    self.write(trial)
                except InvalidBlob:
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
        with kit_draws():
            return find(
                from_schema(json.loads(new_json)),
                lambda v: v is not None and not old.is_valid(v),
                settings=deterministic(),
            )
    except (errors.NoSuchExample, errors.Unsatisfiable, errors.InvalidArgument):
        return _NOTHING
