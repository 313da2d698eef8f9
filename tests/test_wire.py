"""refitwire.wire: the model compiled from the schema files, and the shared pointer, version and $ref helpers."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from refitwire import PublishedShard, PublishedTensor, released_versions, schema_document, wire
from refitwire.wire import RefError, compile_model, parse_version, pointer, resolve_refs, tokens, version_key

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("parts", "text"),
    [((), ""), (("tensors", 0, "addr"), "/tensors/0/addr"), (("a/b", "m~n"), "/a~1b/m~0n"), (("",), "/")],
)
def test_pointers_follow_rfc_6901_and_the_root_is_empty(parts: tuple[Any, ...], text: str) -> None:
    assert pointer(*parts) == text
    assert tokens(text) == [str(p) for p in parts]


def test_a_place_is_a_pointer_with_every_index_starred() -> None:
    from refitwire.wire import general_pointer

    assert general_pointer("/tensors/3/shards/10/a~1b") == "/tensors/*/shards/*/a~1b"
    assert general_pointer("") == ""
    shard = (
        wire.default_registry().wire_model("rendezvous", released_versions()[-1]).level("tensors", "shards")
    )
    assert shard["addr"].place == "/tensors/*/shards/*/addr"


def test_only_rfc_6901_array_indices_are_indices() -> None:
    # "01" and the Unicode digits pass str.isdigit, and int("²") raises: they are member names
    from refitwire.wire import general_pointer, is_index, path_of

    assert [is_index(t) for t in ("0", "7", "10", "01", "²", "٣", "", "-1", "1e2")] == [
        True, True, True, False, False, False, False, False, False,
    ]  # fmt: skip
    assert path_of("/tensors/10/01/²/٣") == ("tensors", 10, "01", "²", "٣")
    assert general_pointer("/a/0/01/²") == "/a/*/01/²"


def test_versions_compare_as_numbers() -> None:
    assert version_key("1.10.0") > version_key("1.9.0")
    assert parse_version("1.2") is None and parse_version("01.2.0") is None and parse_version(None) is None
    assert (
        parse_version("1.2.0\n") is None
        and parse_version("1.2.0 ") is None
        and parse_version("1.2.٣") is None
    )
    with pytest.raises(ValueError, match="not a spec version"):
        version_key("v1")


def _levels(model: wire.WireModel) -> dict[tuple[str, ...], list[tuple[Any, ...]]]:
    return {
        path: [(m.name, m.required, m.types, m.nullable, m.rule, m.added_in, m.item_rule(), m.bounds, m.pattern)
               for m in level.members]
        for path, level in model.levels.items()
    }  # fmt: skip


@pytest.mark.parametrize("version", released_versions())
def test_the_model_reads_the_schema_not_its_layout(version: str) -> None:
    """Moving ``$defs`` or inlining them is the same wire: the same model."""
    original = schema_document("rendezvous", version)
    moved = copy.deepcopy(original)
    moved["$defs"]["box"] = moved["$defs"].pop("shard")
    moved["$defs"]["tensor"]["properties"]["shards"]["items"]["$ref"] = "#/$defs/box"
    inlined = resolve_refs(original)
    assert "$defs" not in json.dumps(inlined) and "$ref" not in json.dumps(inlined)
    expected = _levels(compile_model(original, "rendezvous"))
    assert (
        _levels(compile_model(moved, "rendezvous"))
        == expected
        == _levels(compile_model(inlined, "rendezvous"))
    )


def test_the_model_of_the_latest_release() -> None:
    model = wire.default_registry().wire_model("rendezvous", released_versions()[-1])
    assert list(model.levels) == [(), ("tensors",), ("tensors", "shards")]
    assert model.top.names[0] == "schema" and model.wire_id == "mx.reshard.shard_table.v1"
    step = model.top["publisher_step"]
    assert (step.required, step.nullable, step.bounds, step.rule) == (
        False,
        True,
        (0, 2**63 - 1),
        "STEP_RANGE",
    )
    shard = model.level("tensors", "shards")
    assert shard["digest"].added_in == "1.1.0" and shard["shape"].item_rule() == "SIZE_RANGE"
    assert model.rule_at("minimum", ("tensors", 3, "shards", 0, "shape", 1)) == "SIZE_RANGE"
    assert model.rule_at("type", ("tensors", 3, "shards", 0, "addr")) == "TYPE"
    assert model.rule_at("const", ("schema",)) == "SCHEMA_ID"
    assert not wire.default_registry().wire_model("rendezvous", "1.0.0").knows("digest", "tensors", "shards")


def test_a_value_of_no_type_an_enum_allows_is_a_type_error_at_any_depth() -> None:
    """An untyped ``enum`` missed by a value of a type its values have is the member's own rule
    (SCHEMA here); by one of another type, TYPE. Inside an object member's value too: the
    subschema at the path is asked, not the member holding it."""
    transport = {"type": "object", "properties": {"kind": {"enum": ["tcp", "unix"]},
                 "ports": {"type": "array", "prefixItems": [{"enum": [1, 2]}]}}}  # fmt: skip
    schema = {"type": "object", "properties": {"transport": transport, "mode": {"enum": ["a", "b"]}}}
    model = compile_model(schema, "rendezvous")
    assert model.rule_at("enum", ("mode",), "c") == "SCHEMA"
    assert model.rule_at("enum", ("mode",), 7) == "TYPE"
    assert model.rule_at("enum", ("transport", "kind"), "TCP") == "SCHEMA"
    assert model.rule_at("enum", ("transport", "kind"), 7) == "TYPE"
    assert model.rule_at("enum", ("transport", "ports", 0), 3) == "SCHEMA"
    assert model.rule_at("enum", ("transport", "ports", 0), "1") == "TYPE"


def test_a_reference_that_does_not_resolve_is_an_error() -> None:
    with pytest.raises(RefError, match="does not resolve"):
        resolve_refs({"properties": {"a": {"$ref": "#/$defs/missing"}}})
    with pytest.raises(RefError, match="cycle"):
        resolve_refs({"$defs": {"n": {"properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"})


def test_the_models_fields_are_the_schemas_members() -> None:
    """The generated models follow the newest schema, and the declarations static checkers see
    (the ``TYPE_CHECKING`` block of ``_models.py``) list exactly those fields."""
    model = wire.default_registry().newest_model()
    assert list(PublishedTensor.model_fields) == list(model.level("tensors").names)
    assert list(PublishedShard.model_fields) == list(model.level("tensors", "shards").names)
    tree = ast.parse((ROOT / "reference" / "_models.py").read_text(encoding="utf-8"))
    declared = {
        node.name: [
            a.target.id for a in node.body if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)
        ]
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name in ("PublishedShard", "PublishedTensor")
    }
    released = wire.default_registry().wire_model("rendezvous", released_versions()[-1])
    assert declared == {
        "PublishedTensor": list(released.level("tensors").names),
        "PublishedShard": list(released.level("tensors", "shards").names),
    }


def _folder_with_a_candidate(tmp_path: Path) -> Path:
    """A copy of the released files, their index and SPEC.md, plus a 1.9.0 rendezvous schema the index does not list."""
    folder = tmp_path / "schema"
    for document in ("rendezvous", "shard-table"):
        (folder / document).mkdir(parents=True)
        for version in released_versions():
            (folder / document / f"{version}.json").write_bytes(
                (wire.default_registry().folder / document / f"{version}.json").read_bytes()
            )
    for name in ("index.json", "SPEC.md"):
        (folder / name).write_bytes((wire.default_registry().folder / name).read_bytes())
    later = schema_document("rendezvous", released_versions()[-1])
    later["x-spec-version"] = "1.9.0"
    (folder / "rendezvous" / "1.9.0.json").write_text(json.dumps(later), encoding="utf-8")
    return folder


def test_a_schema_file_added_after_install_is_seen(tmp_path: Path) -> None:
    """A registry reads a folder's files as they are, so a version scaffolded after an editable
    install is known without reinstalling; another folder is another registry, and the default
    one is left as it was (no cache to clear)."""
    assert (wire.default_registry().folder / "index.json").is_file()
    default = wire.default_registry().known_versions()  # (a clone's candidate among them)
    registry = wire.Registry.from_folder(_folder_with_a_candidate(tmp_path))
    assert registry.known_versions() == (*released_versions(), "1.9.0")
    assert registry.released_versions() == released_versions()
    assert registry.candidate_versions() == ("1.9.0",)
    assert registry.wire_model("rendezvous", "1.9.0").version == "1.9.0"
    assert registry.newest_model().version == "1.9.0"
    assert wire.default_registry().known_versions() == default  # the default registry never saw it
    with pytest.raises(ValueError, match=r"unknown spec version '1\.9\.0'"):
        wire.default_registry().wire_model("rendezvous", "1.9.0")


def test_a_candidate_is_the_registry_with_one_more_resource() -> None:
    """``with_resource`` returns a new registry (like ``referencing.Registry.with_resource``):
    the one it extends is unchanged, and the released models are shared, not recompiled."""
    base = wire.default_registry()
    schema = schema_document("rendezvous", released_versions()[-1])
    schema["x-spec-version"] = "1.9.0"
    schema["properties"]["publisher_rank"] = {"type": "integer", "minimum": 0, "x-added-in": "1.9.0"}
    extended = base.with_resource("rendezvous", "1.9.0", schema)
    assert extended is not base and base.known_versions() == (
        *released_versions(),
        *base.candidate_versions(),
    )
    assert extended.candidate_versions() == (*base.candidate_versions(), "1.9.0")
    assert extended.candidate_versions("shard-table") == base.candidate_versions("shard-table")
    assert extended.newest_model().top["publisher_rank"].added_in == "1.9.0"
    assert extended.wire_model("rendezvous", released_versions()[-1]) is base.wire_model(
        "rendezvous", released_versions()[-1]
    )
    with pytest.raises(AttributeError):
        extended.index = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        extended.models[("rendezvous", "2.0.0")] = extended.newest_model()  # type: ignore[index]
    with pytest.raises(ValueError, match="unknown document"):
        base.with_resource("nothing", "1.9.0", schema)


def test_a_candidate_is_read_and_written_by_the_library_with_its_registry() -> None:
    """The library's own reader and writer at a candidate version, given the registry holding it:
    its new table member is a field of that registry's models, written and read back."""
    from refitwire import from_decoded, to_decoded, unwrap_rendezvous_blob, wrap_rendezvous_blob

    schema = schema_document("rendezvous", released_versions()[-1])
    schema["x-spec-version"] = "1.9.0"
    schema["$defs"]["shard"]["properties"]["numa_node"] = {
        "type": "integer", "minimum": 0, "maximum": 255, "x-added-in": "1.9.0",
    }  # fmt: skip
    registry = wire.default_registry().with_resource("rendezvous", "1.9.0", schema)
    shard = {
        "agent_name": "a",
        "device_id": 0,
        "addr": 4096,
        "shard_offset": [0],
        "shape": [2],
        "numa_node": 3,
    }
    decoded = {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==", "publisher_step": 7,
               "tensors": [{"name": "t", "dtype": "torch.float32", "elsize": 4, "full_shape": [2], "shards": [shard]}]}  # fmt: skip
    p = from_decoded(decoded, registry)
    blob = wrap_rendezvous_blob(*p[:4], p.publisher_step, spec_version="1.9.0", registry=registry)
    assert b'"numa_node": 3}' in blob
    read = unwrap_rendezvous_blob(blob, spec_version="1.9.0", registry=registry)
    assert to_decoded(read, "1.9.0", registry)["tensors"][0]["shards"][0]["numa_node"] == 3
    with pytest.raises(ValueError, match="unknown spec version"):  # the default registry knows no 1.9.0
        unwrap_rendezvous_blob(blob, spec_version="1.9.0")
    from refitwire import InvalidBlob

    with pytest.raises(InvalidBlob) as refused:
        unwrap_rendezvous_blob(blob.replace(b'"numa_node": 3', b'"numa_node": 256'), spec_version="1.9.0",
                               registry=registry)  # fmt: skip
    assert refused.value.pointer == "/tensors/0/shards/0/numa_node"


def test_a_member_of_any_name_is_decoded_under_its_own_name() -> None:
    """A keyword, a name that is not an identifier and one Python would read as another
    (NFKC: the ligature "ﬁ" is "fi") each reach the decoded form from the reader's models."""
    from refitwire import from_decoded, to_decoded, unwrap_rendezvous_blob, wrap_rendezvous_blob

    schema = schema_document("rendezvous", released_versions()[-1])
    schema["x-spec-version"] = "1.9.0"
    names = {"for": 1, "x-rank": 2, "\ufb01eld": 3}
    for name in names:
        schema["$defs"]["shard"]["properties"][name] = {"type": "integer", "x-added-in": "1.9.0"}
    registry = wire.default_registry().with_resource("rendezvous", "1.9.0", schema)
    shard = {"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [2], **names}
    decoded = {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==", "publisher_step": 7,
               "tensors": [{"name": "t", "dtype": "torch.float32", "elsize": 4, "full_shape": [2], "shards": [shard]}]}  # fmt: skip
    p = from_decoded(decoded, registry)
    blob = wrap_rendezvous_blob(*p[:4], p.publisher_step, spec_version="1.9.0", registry=registry)
    read = unwrap_rendezvous_blob(blob, spec_version="1.9.0", registry=registry)
    assert to_decoded(read, "1.9.0", registry)["tensors"][0]["shards"][0] == {**shard, "digest": None}


def test_the_default_registry_and_its_models_outlast_other_folders_read_and_changed(tmp_path: Path) -> None:
    """``PublishedTensor`` imported once is the class of what is read later, however many other
    schema folders the process reads, and whichever of them changes (each was once evicted, or
    all dropped with a stale one, and the default rebuilt: decoded models then compared unequal)."""
    import shutil

    default, tensor = wire.default_registry(), PublishedTensor
    folders = []
    for n in range(10):
        folder = tmp_path / str(n)
        shutil.copytree(
            wire.package_root(), folder, ignore=shutil.ignore_patterns("vectors", "protocol", "report")
        )
        folders.append(folder.resolve())
        wire.registry_at(folders[-1])
    first = wire.registry_at(folders[-1])
    (folders[-1] / "SPEC.md").write_text((folders[-1] / "SPEC.md").read_text(encoding="utf-8") + "\n")
    assert wire.registry_at(folders[-1]) is not first  # a changed folder is read again
    assert wire.default_registry() is default
    import refitwire

    assert refitwire.PublishedTensor is tensor
    made = tensor(name="w", dtype="torch.bfloat16", elsize=2, full_shape=(4, 4),
                  shards=(PublishedShard(agent_name="r0", device_id=0, addr=4096, shard_offset=(0, 0), shape=(4, 4)),))  # fmt: skip
    blob = refitwire.wrap_rendezvous_blob(b"m", "r0", "h:1", [made])
    assert refitwire.unwrap_rendezvous_blob(blob).tensors == [made]
