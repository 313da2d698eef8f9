"""A candidate member whose schema applies subschemas (``anyOf`` an integer or a string, a
``not``, ``contains``, a ``patternProperties`` map) goes through the library and the generators:
its JSON types are its branches' (a value of none of them is TYPE, one of them that no branch
takes is the member's rule), an integer written 0.0 is INTEGER_LITERAL beside the strings, and
every keyword has valid values and breaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _gate_helpers import make_repo, refitwire
from refitwire import InvalidBlob, wire, wrap_rendezvous_blob
from refitwire.compat.keywords import breaks, domain, unbreakable
from refitwire.wire import Registry

MODE = {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 7}, {"type": "string", "enum": ["auto"]}]}
MEMBERS = {
    "mode": {"description": "A mode.", **MODE, "x-added-in": "1.3.0"},
    "groups": {"description": "Groups.", "type": "array", "items": {"type": "integer", "minimum": 0},
               "contains": {"const": 0}, "maxItems": 4, "x-added-in": "1.3.0"},
    "lane": {"description": "A lane.", "type": "integer", "minimum": 0, "maximum": 15, "not": {"const": 13},
             "x-added-in": "1.3.0"},
    "labels": {"description": "Labels.", "type": "object", "additionalProperties": False,
               "patternProperties": {"^[a-z]+$": {"type": "string", "maxLength": 8}}, "x-added-in": "1.3.0"},
}  # fmt: skip


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    repo = make_repo(tmp_path_factory.mktemp("composed"))
    assert refitwire(repo, "schema", "new", "1.3.0").returncode == 0
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        schema["$defs"]["tensor"]["properties"].update(MEMBERS)
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    return wire.default_registry().with_candidates(Path(repo / "schema"))


def _blob(registry: Registry, mode: object) -> bytes:
    from refitwire._models import classes_of

    shard = {"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [4]}
    fields = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [4], "shards": [shard]}
    tensor = classes_of(registry).tensor.model_validate(fields)
    blob = wrap_rendezvous_blob(b"m", "a", "h:1", [tensor], 3, spec_version="1.3.0", registry=registry)
    doc = json.loads(blob)
    doc["tensors"][0]["mode"] = mode
    return json.dumps(doc).encode()


def test_the_model_reads_a_members_types_from_its_branches(registry: Registry) -> None:
    model = registry.wire_model("rendezvous", "1.3.0")
    assert model.level("tensors")["mode"].types == ("integer", "string")
    assert wire.schema_types({"allOf": [{"type": ["integer", "null"]}, {"type": "integer"}]}) == ("integer",)
    assert wire.schema_types({"not": {"const": 1}}) == ()  # any type
    sides = {"if": {"minimum": 0}, "then": {"type": "integer"}, "else": {"type": ["string", "null"]}}
    assert wire.schema_types(sides) == ("integer", "string", "null")
    assert wire.schema_types({**sides, "else": True}) == ()  # a side that allows any type
    assert wire.schema_types({k: v for k, v in sides.items() if k != "if"}) == ()  # no if: no sides


@pytest.mark.parametrize(
    ("mode", "rule"),
    [
        (3, None),
        ("auto", None),
        ("7", "SCHEMA"),
        (9, "SCHEMA"),
        ([], "TYPE"),
        (2.5, "TYPE"),
        (0.0, "INTEGER_LITERAL"),
    ],
)
def test_a_value_of_no_branch_is_its_type_and_an_integer_is_written_as_one(
    registry: Registry, mode: object, rule: str | None
) -> None:
    from refitwire import unwrap_rendezvous_blob

    blob = _blob(registry, mode)
    if rule is None:
        unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry)
        return
    with pytest.raises(InvalidBlob) as raised:
        unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry)
    assert (raised.value.rule, raised.value.pointer) == (rule, "/tensors/0/mode")


@pytest.mark.parametrize("name", MEMBERS)
def test_every_keyword_has_values_and_breaks(registry: Registry, name: str) -> None:
    member = registry.wire_model("rendezvous", "1.3.0").level("tensors")[name]
    assert domain(member.schema) and breaks(member.schema)
    assert unbreakable(member.schema) == ()
