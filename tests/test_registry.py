"""The released schema files: present, unchanged, annotated, loadable from package data."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from refitwire import InvalidBlob, released_versions, unwrap_rendezvous_blob, wire, wire_schema_id
from refitwire import schema_document as schema
from refitwire._registry import released, schema_bytes
from refitwire._spec import added_in, knows, version_key

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
ENTRIES = [
    (doc, e) for doc, entries in released(wire.default_registry())["documents"].items() for e in entries
]

#: The sha256 of every released schema file, pinned here and not read from the tree, so a
#: change to a released file fails even when schema/index.json is edited to match. A new
#: version adds a line; a line never changes.
RELEASED = {
    "rendezvous/1.0.0.json": "41f074e5b32be52a3421f4aec2f1d57433d6a71ffeabbb098b62ecfa886d80b7",
    "rendezvous/1.1.0.json": "b807b841f8fce0cffce704fec7291a82317bda3e3a5bc509e2d84b16643dcb17",
    "rendezvous/1.2.0.json": "a8e62b4933309b76584d8a6a348b7315623b719796da69bb94a5e092e2bf0a3c",
    "shard-table/1.0.0.json": "01e7136bb6610334e63b94603d3903831ebc24312c2f38a5e87709dd00f279cf",
    "shard-table/1.1.0.json": "6f072c8f831681ff20c395950bed6cdf0b0fc84b8a222560ee73db07c2f9d334",
    "shard-table/1.2.0.json": "b5853eed191a2464ce89e5072773db76208ac19653faa251efc93ac6c411188f",
}


@pytest.mark.parametrize("path", sorted(RELEASED))
def test_a_released_file_never_changes(path: str) -> None:
    assert hashlib.sha256((SCHEMA_DIR / path).read_bytes()).hexdigest() == RELEASED[path], path
    # and the installed package data is the same file, not a copy that drifted
    assert schema_bytes(path, wire.default_registry()) == (SCHEMA_DIR / path).read_bytes()


def test_the_index_records_the_pinned_hashes() -> None:
    listed = {e["path"]: e["sha256"] for _, e in ENTRIES}
    assert {p: listed.get(p) for p in RELEASED} == RELEASED, "a released file's recorded hash changed"
    assert set(listed) <= set(RELEASED), f"pin the new release here: {sorted(set(listed) - set(RELEASED))}"


@pytest.mark.parametrize(("document", "entry"), ENTRIES, ids=[e["path"] for _, e in ENTRIES])
def test_each_schema_is_a_valid_2020_12_schema_with_its_version(document: str, entry: dict[str, Any]) -> None:
    doc = schema(document, entry["version"])
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["$id"].endswith(f":{document}:{entry['version']}")
    assert doc["x-spec-version"] == entry["version"]
    assert doc["properties"]["schema"]["const"] == wire_schema_id()


def _members(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            found.append((f"{path}/{name}", sub))
        for key, sub in node.items():
            found += _members(sub, f"{path}/{key}")
    return found


@pytest.mark.parametrize("document", ["rendezvous", "shard-table"])
@pytest.mark.parametrize("version", released_versions())
def test_every_member_says_which_version_added_it(document: str, version: str) -> None:
    for path, member in _members(schema(document, version)):
        assert member.get("x-added-in") in released_versions()[: released_versions().index(version) + 1], path


def test_each_version_only_adds_optional_members() -> None:
    for older, newer in itertools.pairwise(released_versions()):
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
    registry = wire.default_registry()  # a file the index does not list is a candidate, never released
    candidates = {
        f"{d}/{v}.json" for d in ("rendezvous", "shard-table") for v in registry.candidate_versions(d)
    }
    assert listed == on_disk - candidates and not listed & candidates
    assert (
        json.loads(schema_bytes("index.json", wire.default_registry()))["latest"] == released_versions()[-1]
    )


def test_versions_compare_as_numbers_not_strings() -> None:
    assert version_key("1.10.0") > version_key("1.9.0") and "1.10.0" < "1.9.0"
    assert list(released_versions()) == sorted(released_versions(), key=version_key)
    assert knows(wire.default_registry(), "1.10.0", "digest") and knows(
        wire.default_registry(), "1.10.0", "publisher_step"
    )
    with pytest.raises(ValueError, match="not a spec version"):
        version_key("1.x")


def test_added_in_is_what_the_latest_schemas_annotate() -> None:
    annotated = {}
    for document in ("rendezvous", "shard-table"):
        for path, member in _members(schema(document, released_versions()[-1])):
            if member["x-added-in"] != released_versions()[0]:
                annotated[path.rsplit("/", 1)[1]] = member["x-added-in"]
    released = {m: v for m, v in added_in(wire.default_registry()).items() if v in released_versions()}
    assert released == annotated == {"digest": "1.1.0", "publisher_step": "1.2.0"}  # (a candidate's aside)


def test_a_caller_changing_a_schema_document_does_not_change_the_reader() -> None:
    blob = b'{"schema": "other", "agent_name": "a", "agent_meta_b64": "", "tensors": []}'
    document = schema("rendezvous", released_versions()[-1])
    document["properties"]["schema"]["x-rule"] = "CHANGED"
    document["properties"].clear()
    assert schema("rendezvous", released_versions()[-1])["properties"]["schema"]["x-rule"] == "SCHEMA_ID"
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(blob)
    assert caught.value.rule == "SCHEMA_ID"
