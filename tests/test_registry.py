"""The released schema files: present, unchanged, annotated, loadable from package data."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from refitwire import SPEC_VERSIONS, WIRE_SCHEMA_ID
from refitwire import schema_document as schema
from refitwire._registry import released, schema_bytes

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
ENTRIES = [(doc, e) for doc, entries in released()["documents"].items() for e in entries]


@pytest.mark.parametrize(("document", "entry"), ENTRIES, ids=[e["path"] for _, e in ENTRIES])
def test_a_released_file_never_changes(document: str, entry: dict[str, Any]) -> None:
    assert hashlib.sha256((SCHEMA_DIR / entry["path"]).read_bytes()).hexdigest() == entry["sha256"]
    # and the installed package data is the same file, not a copy that drifted
    assert schema_bytes(entry["path"]) == (SCHEMA_DIR / entry["path"]).read_bytes()


@pytest.mark.parametrize(("document", "entry"), ENTRIES, ids=[e["path"] for _, e in ENTRIES])
def test_each_schema_is_a_valid_2020_12_schema_with_its_version(document: str, entry: dict[str, Any]) -> None:
    doc = schema(document, entry["version"])
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$id"].endswith(f":{document}:{entry['version']}")
    assert doc["x-spec-version"] == entry["version"]
    assert doc["properties"]["schema"]["const"] == WIRE_SCHEMA_ID


def _members(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            found.append((f"{path}/{name}", sub))
        for key, sub in node.items():
            found += _members(sub, f"{path}/{key}")
    return found


@pytest.mark.parametrize("document", ["rendezvous", "shard-table"])
@pytest.mark.parametrize("version", SPEC_VERSIONS)
def test_every_member_says_which_version_added_it(document: str, version: str) -> None:
    for path, member in _members(schema(document, version)):
        assert member.get("x-added-in") in SPEC_VERSIONS[: SPEC_VERSIONS.index(version) + 1], path


def test_each_version_only_adds_optional_members() -> None:
    for older, newer in itertools.pairwise(SPEC_VERSIONS):
        old, new = schema("rendezvous", older), schema("rendezvous", newer)
        assert new["required"] == old["required"]
        added = {p for p, m in _members(new) if m["x-added-in"] == newer}
        assert added and all(p.rsplit("/", 1)[1] not in new["required"] for p in added)


def test_the_index_lists_every_schema_file_on_disk() -> None:
    listed = {e["path"] for _, e in ENTRIES}
    on_disk = {
        str(p.relative_to(SCHEMA_DIR))
        for d in ("rendezvous", "shard-table")
        for p in (SCHEMA_DIR / d).glob("*.json")
    }
    assert listed == on_disk
    assert json.loads(schema_bytes("index.json"))["latest"] == SPEC_VERSIONS[-1]
