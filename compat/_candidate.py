"""A candidate spec version (an unreleased schema file) taking part in the matrix.

The gate runs the matrix with the working tree's schema/ so that a proposed version meets
every released reader and writer before it lands. The candidate reads with its own schema
plus the semantic rules of the newest released version below it, and writes what that
version writes plus a value for every member only the candidate declares, so that older
readers are shown the new members and must ignore them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
from hypothesis import HealthCheck, find, settings
from hypothesis_jsonschema import from_schema
from refitwire._codec import rendezvous_document
from refitwire._decoded import from_decoded
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._registry import schema as released_schema
from refitwire._spec import SPEC_VERSIONS, version_key
from refitwire._validate import violations, writer_violations

LEVELS = ("", "tensor", "shard")


def candidate_versions(schema_dir: Path) -> list[str]:
    """Rendezvous versions in ``schema_dir`` that are not released."""
    found = [p.stem for p in (schema_dir / "rendezvous").glob("*.json")]
    return sorted((v for v in found if v not in SPEC_VERSIONS), key=version_key)


def base_version(version: str) -> str:
    """The newest released version at or below ``version`` (whose rules the candidate keeps)."""
    below = [v for v in SPEC_VERSIONS if version_key(v) <= version_key(version)]
    if not below:
        raise ValueError(f"candidate {version} is older than every released version")
    return below[-1]


def _members(root: dict[str, Any], level: str) -> dict[str, Any]:
    node = root if level == "" else root["$defs"][level]
    members: dict[str, Any] = node.get("properties", {})
    return members


@functools.cache
def load(schema_dir: Path, version: str) -> Candidate:
    return Candidate(schema_dir, version)


class Candidate:
    def __init__(self, schema_dir: Path, version: str) -> None:
        self.version = version
        self.base = base_version(version)
        self.schema = json.loads((schema_dir / "rendezvous" / f"{version}.json").read_text(encoding="utf-8"))
        self.validator = jsonschema_rs.validator_for(self.schema)
        old = released_schema("rendezvous", self.base)
        self.added = {
            level: {k: v for k, v in _members(self.schema, level).items() if k not in _members(old, level)}
            for level in LEVELS
        }

    # -- reading ------------------------------------------------------------------------------

    def violations(self, document: dict[str, Any]) -> list[Violation]:
        """The candidate schema's verdict, then the base version's semantic rules."""
        found = [
            Violation(_rule(e), pointer(*e.instance_path), e.instance, e.message)
            for e in self.validator.iter_errors(document)
        ]
        if found:
            return found
        return [
            v for v in violations(document, "rendezvous", self.base) if v.rule not in ("REQUIRED", "TYPE")
        ]

    def check(self, document: dict[str, Any]) -> None:
        found = self.violations(document)
        if found:
            raise InvalidBlob(found)

    def writer_violations(self, document: dict[str, Any]) -> list[Violation]:
        """WRITE_KNOWN_MEMBERS and WRITE_OMIT_ABSENT against the candidate's own members."""
        return writer_violations(document, self.version, self.schema)

    # -- writing ------------------------------------------------------------------------------

    def write(self, decoded: dict[str, Any]) -> bytes:
        p = from_decoded(decoded)
        document = rendezvous_document(*p[:4], p.publisher_step, self.base)
        for level, obj in _walk(document):
            for member, subschema in self.added[level].items():
                obj[member] = _sample(
                    json.dumps(subschema, sort_keys=True), json.dumps(self.schema.get("$defs", {}))
                )
        self.check(document)
        return json.dumps(document).encode("ascii")


def _walk(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every object of a blob with its level: the top, each tensor, each shard."""
    tensors = document.get("tensors") or []
    return [
        ("", document),
        *(("tensor", t) for t in tensors),
        *(("shard", s) for t in tensors for s in t.get("shards") or []),
    ]


def _rule(error: Any) -> str:
    keyword = str(error.schema_path[-1]) if error.schema_path else ""
    return {"required": "REQUIRED", "type": "TYPE"}.get(keyword, "SCHEMA")


@functools.cache
def _sample(subschema_json: str, defs_json: str) -> Any:
    """The simplest non-null value the candidate allows for a new member (deterministic)."""
    subschema = {**json.loads(subschema_json), "$defs": json.loads(defs_json)}
    subschema = {k: v for k, v in subschema.items() if not k.startswith("x-")}
    quiet = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
    return find(from_schema(subschema), lambda value: value is not None, settings=quiet)
