"""Generated payloads reach the magnitudes the field uses, by construction (issue 46): agent
metadata from a few bytes to tens of KiB, names at their schema limits, many shards in one
tensor, a tensor name repeated. Each is a named case at every seed, and the realistic wrong
writers it is there for (metadata compressed past a threshold, tensors kept one per name) fail
it as Required, at the pointer of what they lost, while the reference passes every one.

The writers are the bank's faults (``faulty_conformance.py``), asked in process; the bank runs
them as processes (test_conformance_teeth.py)."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from faulty_conformance import COMPRESS_PAST, FAULTS
from refitwire import wire
from refitwire.compat._results import REQUIRED, Outcome
from refitwire.compat.cases import _cases, _magnitudes
from refitwire.compat.cases._forms import objects_at
from refitwire.compat.runner import _checks
from refitwire.compat.testees.reference import answer

REGISTRY = wire.default_registry()
VERSION = REGISTRY.released_versions()[-1]


def built(seed: int) -> dict[str, dict[str, Any]]:
    """The generated payloads of ``seed`` that are not Hypothesis's draws."""
    return {
        cid: p for cid, p in _cases.generated_payloads(seed, 2, REGISTRY).items() if not cid[4:].isdigit()
    }


def meta_bytes(payload: dict[str, Any]) -> int:
    return len(base64.b64decode(payload["agent_meta_b64"]))


@pytest.mark.parametrize("seed", [1, 7])
def test_every_seed_holds_the_magnitude_classes(seed: int) -> None:
    found = built(seed)
    assert {f"gen-{name}" for name in _magnitudes.MAGNITUDE_CLASSES} <= set(found)
    sizes = sorted(meta_bytes(p) for p in found.values())
    # from a few bytes to tens of KiB, and on both sides of the compressing writer's threshold
    assert sizes[0] <= 8 and sizes[-1] >= 10 * 1024
    assert any(n <= COMPRESS_PAST for n in sizes) and any(n > COMPRESS_PAST for n in sizes)
    assert max(len(t["shards"]) for p in found.values() for t in p["tensors"]) > 2**10
    repeated = [p for p in found.values() if len({t["name"] for t in p["tensors"]}) < len(p["tensors"])]
    assert repeated, "no payload repeats a tensor name"


def test_agent_metadata_is_binary_and_the_same_every_time() -> None:
    meta = _magnitudes.agent_metadata(64 * 1024)
    assert meta == _magnitudes.agent_metadata(64 * 1024)
    assert len(set(meta)) == 256  # every byte value, as the wire's base64 carries them
    assert _magnitudes.agent_metadata(5) == meta[:5]


def test_names_are_as_long_as_their_schema_allows() -> None:
    model = REGISTRY.wire_model("rendezvous", VERSION)
    payload = built(3)["gen-names-at-limit"]
    texts = [
        (path, m) for path, level in model.levels.items() for m in level.members if _magnitudes.free_text(m)
    ]
    assert {m.name for _, m in texts} >= {"agent_name", "name"}
    for path, member in texts:
        objects = objects_at(payload, model, path)
        assert objects and all(len(o[member.name]) == _magnitudes.name_length(member) for o in objects), (
            member
        )
    # a bound the schema gives is the length (a later version's maxLength, read from its member)
    bounded = dataclasses.replace(texts[0][1], schema={**texts[0][1].schema, "maxLength": 300})
    assert _magnitudes.name_length(bounded) == 300


class _Writer:
    """The reference writer with one of the bank's faults switched in, asked in process."""

    def __init__(self, fault: str) -> None:
        self.fault, self.version, self.label, self.stderr = fault, VERSION, f"testee: {fault}", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        reply = answer(message, VERSION, REGISTRY)
        return reply if self.fault == "none" else FAULTS[self.fault](message, reply) or reply


def written(fault: str, cid: str) -> list[Any]:
    payload = _cases.conform(built(5)[cid], VERSION, 0, REGISTRY)
    results, _ = _checks.write_generated(_Writer(fault), cid, payload, REGISTRY)
    return results


@pytest.mark.parametrize(
    ("fault", "case", "symptom"),
    [
        ("compresses-large-metadata", "gen-meta-4-kib", "value differs at /agent_meta_b64"),
        ("compresses-large-metadata", "gen-meta-64-kib", "value differs at /agent_meta_b64"),
        ("dedups-tensors-by-name", "gen-repeated-names", "length differs at /tensors"),
    ],
)
def test_a_realistic_wrong_writer_fails_the_case_named_for_it(fault: str, case: str, symptom: str) -> None:
    (verdict,) = [r for r in written(fault, case) if r.case == case]
    assert verdict.outcome is Outcome.FAILED and verdict.tier == REQUIRED, verdict
    assert verdict.symptom == f"blob does not carry the payload: {symptom}", verdict


@pytest.mark.parametrize("fault", ["compresses-large-metadata", "dedups-tensors-by-name", "none"])
def test_below_its_threshold_or_with_distinct_names_a_wrong_writer_is_not_blamed(fault: str) -> None:
    asked = ["gen-meta-bytes", "gen-many-shards"]
    asked += [] if fault == "dedups-tensors-by-name" else ["gen-repeated-names"]
    for cid in asked:
        assert all(r.outcome is Outcome.PASSED for r in written(fault, cid)), (fault, cid)


def test_the_reference_carries_every_entry_of_a_repeated_name() -> None:
    payload = _cases.project(built(5)["gen-repeated-names"], VERSION, REGISTRY)
    reply = answer({"cmd": "write", "seq": 0, "payload": payload}, VERSION, REGISTRY)
    doc = json.loads(base64.b64decode(reply["blob_b64"]))
    assert [len(t["shards"]) for t in doc["tensors"]] == [len(t["shards"]) for t in payload["tensors"]]


def test_the_classes_the_implementers_guide_names_are_cases() -> None:
    guide = (Path(__file__).resolve().parents[2] / "compat" / "IMPLEMENTERS.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"`(gen-[a-z0-9-]+)`", guide)) - {"gen-ID", "gen-N"}
    assert cited and cited <= set(built(1)), sorted(cited - set(built(1)))
