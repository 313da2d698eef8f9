"""A receiver's merge of several publishers' tables (protocol command ``merge``, SPEC.md 2.6) is
held to both merge rules: a merger that keeps the last replica, keeps every replica, dedupes
across tensor names, or lets tables that disagree through fails a case, Required where every
released upstream does it right; one without a merge is one skipped case. The vector file is
what its builder makes, matches its schema, and every case passes against the reference."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource
from refitwire import wire
from refitwire.compat._results import RECOMMENDED, REQUIRED, Outcome, Result
from refitwire.compat.cases import _merge
from refitwire.compat.runner import _asking, _kinds, _run
from refitwire.compat.testees.reference import answer

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "schema" / "vectors" / "merge"


def _merge_as(tables: list[list[dict[str, Any]]], *, keep: str = "first", dedupe: str = "name",
              agree: tuple[str, ...] = ("dtype", "elsize", "full_shape"), prefix: bool = False,
              by_count: bool = False, aliases: dict[str, str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """A merger written here from SPEC.md 2.6, each way of breaking it a parameter."""
    merged: dict[str, dict[str, Any]] = {}
    seen: dict[Any, int] = {}
    for table in tables:
        for tensor in table:
            kept = merged.setdefault(tensor["name"], {**tensor, "shards": []})
            for member in agree:
                mine, theirs = kept[member], tensor[member]
                if member == "dtype" and not prefix:
                    mine, theirs = mine.removeprefix("torch."), theirs.removeprefix("torch.")
                if member == "dtype" and aliases:  # (labels of one size taken for one dtype)
                    mine, theirs = aliases.get(mine, mine), aliases.get(theirs, theirs)
                if member == "full_shape" and by_count:  # (shapes compared by their element count)
                    mine, theirs = math.prod(mine), math.prod(theirs)
                if mine != theirs:
                    raise ValueError("MERGE_CONSISTENT")
            for shard in tensor["shards"]:
                box = json.dumps([shard["shard_offset"], shard["shape"]])
                key = box if dedupe == "everywhere" else (tensor["name"], box)
                if dedupe == "none" or key not in seen:
                    seen[key] = len(kept["shards"])
                    kept["shards"].append(shard)
                elif keep == "last":
                    kept["shards"][seen[key]] = shard
    return list(merged.values())


class _Merger:
    """A testee answering ``merge`` with ``merger`` (the reference's own, when None)."""

    def __init__(self, merger: Any = None, merges: bool = True) -> None:
        self.merger, self.merges = merger, merges
        self.version, self.label, self.stderr = "1.2.0", "receiver", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        if not self.merges:
            return {"seq": message["seq"], "skipped": True, "reason": "unknown command 'merge'"}
        if self.merger is None:
            return answer(message, self.version, wire.default_registry())
        try:
            return {"seq": message["seq"], "merged": self.merger(message["tables"])}
        except ValueError as exc:
            return {"seq": message["seq"], "rejected": True, "message": str(exc), "rule": str(exc)}


def _results(merger: _Merger) -> list[Result]:
    scope = _asking.Scope(_run.Plan(registry=wire.default_registry(), participants=[]), [], None)
    merge = _kinds.kind("merge")
    return list(_asking._offered(merger, scope, "merge", _merge.merge_cases(), _merge.check_merge, merge))  # type: ignore[arg-type]


@pytest.mark.parametrize("merger", [None, _merge_as], ids=["reference", "written-here"])
def test_a_right_merge_passes_every_case(merger: Any) -> None:
    results = _results(_Merger(merger))
    assert len(results) == len(_merge.merge_cases())
    assert [r for r in results if r.outcome is not Outcome.PASSED] == []


@pytest.mark.parametrize(
    ("options", "tier"),
    [
        ({"keep": "last"}, REQUIRED),
        ({"dedupe": "none"}, REQUIRED),
        ({"dedupe": "everywhere"}, REQUIRED),
        ({"agree": ("dtype", "elsize")}, REQUIRED),  # full_shape unchecked
        ({"agree": ("dtype", "full_shape")}, RECOMMENDED),  # elsize unchecked: as upstream does
        ({"prefix": True}, RECOMMENDED),  # torch.bfloat16 is not bfloat16: as upstream does
        ({"by_count": True}, REQUIRED),  # [8, 4] taken for [4, 8]
        ({"aliases": {"half": "float16", "float": "float32", "double": "float64"}}, REQUIRED),
    ],
)
def test_a_wrong_merge_fails(options: dict[str, Any], tier: str) -> None:
    failed = [r for r in _results(_Merger(lambda tables: _merge_as(tables, **options))) if r.outcome.bad]
    assert failed, f"{options} passed every merge case"
    assert tier in {r.tier for r in failed} and all(r.symptom for r in failed)


def test_no_merge_is_one_skipped_case() -> None:
    (result,) = _results(_Merger(merges=False))
    assert (result.case, result.outcome) == ("merge", Outcome.SKIPPED)


def test_the_file_matches_its_schema_and_its_builder() -> None:
    decoded = json.loads((ROOT / "schema" / "protocol" / "decoded.json").read_text(encoding="utf-8"))
    registry = Registry().with_resource(decoded["$id"], Resource.from_contents(decoded))
    meta = json.loads((FOLDER / "merge.schema.json").read_text(encoding="utf-8"))
    doc = json.loads((FOLDER / "merge.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(meta, registry=registry).validate(doc)
    assert {v["rule"] for v in doc["vectors"]} == {"MERGE_CONSISTENT", "MERGE_REPLICAS"}
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "build_merge_vectors.py"), "--check"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
