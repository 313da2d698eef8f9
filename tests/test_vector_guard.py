"""tools/_vector_guard.py: a generated vector the JSON Schema contradicts is left out. Every
committed vector agrees with it; a valid vector the schema rejects, an invalid one whose first
schema error is elsewhere, and one whose rule the schema does not name at its pointer do not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import tools_module

VECTORS = Path(__file__).resolve().parents[1] / "schema" / "vectors"


@pytest.fixture(scope="module")
def guard() -> Iterator[Any]:
    yield from tools_module("_vector_guard")


def _committed() -> list[dict[str, Any]]:
    return [
        v
        for name in ("writer-output.json", "legal-forms.json", "invalid.json")
        for v in json.loads((VECTORS / name).read_text(encoding="utf-8"))["vectors"]
    ]


def test_every_committed_vector_agrees_with_the_schema(guard: Any) -> None:
    assert [v["id"] for v in _committed() if not guard.agrees(v)] == []


def _with(doc: dict[str, Any], expect: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "v-test",
        "description": "made here",
        "document": "rendezvous",
        "blob": json.dumps(doc),
        "expect": {"1.2.0": expect},
    }


def test_a_contradicted_vector_is_left_out(guard: Any) -> None:
    valid = next(v for v in _committed() if v["expect"]["1.2.0"]["valid"] and "blob" in v)
    doc = json.loads(valid["blob"])
    assert guard.agrees(_with(doc, {"valid": True}))
    shard = doc["tensors"][0]["shards"][0]
    shard["device_id"] = -1  # a schema error where the vector says there is none
    assert not guard.agrees(_with(doc, {"valid": True}))
    assert guard.agrees(
        _with(doc, {"valid": False, "rule": "DEVICE_ID_RANGE", "pointer": "/tensors/0/shards/0/device_id"})
    )
    # another rule at that place, and the right rule at a later place than the first error
    assert not guard.agrees(
        _with(doc, {"valid": False, "rule": "TYPE", "pointer": "/tensors/0/shards/0/device_id"})
    )
    shard["device_id"], shard["addr"] = "0", "4096"  # two of one rule: the first in document order is it
    first, later = "/tensors/0/shards/0/device_id", "/tensors/0/shards/0/addr"
    assert guard.agrees(_with(doc, {"valid": False, "rule": "TYPE", "pointer": first}))
    assert not guard.agrees(_with(doc, {"valid": False, "rule": "TYPE", "pointer": later}))
    kept = guard.consistent([_with(doc, {"valid": True}), valid])
    assert kept == [valid]
