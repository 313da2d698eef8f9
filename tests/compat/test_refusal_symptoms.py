"""A writer that writes a payload it must refuse is told which wrong answer it gave: an invalid
blob (the payload copied), or a repaired one (a valid blob that does not carry the payload). A
pull request that starts repairing what its base copied then shows as a change against the
base report, whose comparison is by symptom, instead of as the same old failure."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat.cases._built_cases import refusal_cases
from refitwire.compat.runner import _checks
from refitwire.compat.testees.reference import answer

#: the payload a writer is asked to refuse: an address of 2^64
CASE = next(
    c
    for c in refusal_cases("1.2.0", wire.default_registry())
    if c.rule == "ADDR_RANGE" and "above its maximum" in c.description
)


class _Writer:
    """Writes what it is given, as is (``repairs``: its addresses masked to 64 bits first)."""

    def __init__(self, repairs: bool) -> None:
        self.repairs, self.version, self.label, self.stderr = repairs, "1.2.0", "writer", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        payload = json.loads(json.dumps(message["payload"]))
        for tensor in payload["tensors"]:
            for shard in tensor["shards"]:
                shard["addr"] &= (1 << 64) - 1 if self.repairs else -1
        written = answer({**message, "payload": {**payload, "tensors": []}}, "1.2.0", wire.default_registry())
        doc = json.loads(base64.b64decode(written["blob_b64"]))
        doc["tensors"] = payload["tensors"]  # as given, past any check
        return {**written, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


def test_an_invalid_blob_and_a_repaired_one_are_told_apart() -> None:
    symptoms = {}
    for repairs in (False, True):
        (result,) = _checks.refusal(_Writer(repairs), CASE, wire.default_registry())
        assert result.outcome.bad
        symptoms[repairs] = result.symptom
    assert "wrote an invalid blob (ADDR_RANGE)" in symptoms[False]
    assert "repaired it" in symptoms[True]


class _CoercingWriter(_Writer):
    """The released writer's way with a step: ``int()`` whatever it is given, then write."""

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        payload = json.loads(json.dumps(message["payload"]))
        payload["publisher_step"] = int(payload["publisher_step"])
        return answer({**message, "payload": payload}, "1.2.0", wire.default_registry())


def test_a_payload_member_of_the_wrong_type_is_a_refusal_case() -> None:
    """WRITE_VALID's TYPE sentence has cases: a step given as the string "7" must be refused, and
    a writer that coerces it to 7 is told it repaired the payload (the protocol carries it)."""
    (case,) = [
        c
        for c in refusal_cases("1.2.0", wire.default_registry())
        if c.rule == "TYPE" and c.payload.get("publisher_step") == "7"
    ]
    (result,) = _checks.refusal(_CoercingWriter(repairs=False), case, wire.default_registry())
    assert result.outcome.bad and "breaks TYPE" in result.message and "repaired it" in result.symptom
    answered = answer({"cmd": "write", "seq": 0, "payload": case.payload}, "1.2.0", wire.default_registry())
    assert answered.get("rule") == "TYPE"  # the reference refuses it, naming the rule


@pytest.mark.parametrize("written", ["4096.0", "4.096e3"])
def test_a_payload_integer_written_with_a_fraction_is_refused_as_integer_literal(written: str) -> None:
    """compat/IMPLEMENTERS.md, write: ``4096.0`` as a payload's ``addr`` is neither copied into
    the blob (INTEGER_LITERAL) nor repaired to ``4096``: the writer refuses it, naming the rule."""
    payload = {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bWV0YQ==", "publisher_step": None,
               "tensors": [{"name": "w", "dtype": "torch.bfloat16", "elsize": 2, "full_shape": [8, 4],
                            "shards": [{"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0, 0],
                                        "shape": [4, 4], "digest": None}]}]}  # fmt: skip
    line = json.dumps({"cmd": "write", "seq": 1, "payload": payload}).replace(
        '"addr": 4096', f'"addr": {written}'
    )
    reply = answer(json.loads(line), "1.2.0", wire.default_registry())
    assert reply.get("errored") is True and "blob_b64" not in reply, reply
    assert reply["rule"] == "INTEGER_LITERAL" and "/tensors/0/shards/0/addr" in reply["message"], reply
    assert "blob_b64" in answer(
        json.loads(line.replace(f'"addr": {written}', '"addr": 4096')), "1.2.0", wire.default_registry()
    )


class _StringStepWriter(_Writer):
    """One wrong behaviour: whatever it is given, it writes a valid payload with the step as a string."""

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        written = answer(
            {**message, "payload": {**_VALID, "publisher_step": 7}}, "1.2.0", wire.default_registry()
        )
        doc = json.loads(base64.b64decode(written["blob_b64"]))
        doc["publisher_step"] = "7"
        return {**written, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


_VALID = {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bWV0YQ==", "tensors": []}


def test_refusals_of_one_wrong_behaviour_are_one_group_with_their_count() -> None:
    """The payloads a writer must refuse break many rules; a writer that answers each of them with
    the same wrong blob (its step as a string: TYPE) has one cause, so comparing it with a base that
    refused them all lists one group with the count of its cases, not one group per refused rule."""
    from refitwire.compat import Report
    from refitwire.compat.report._delta import compare, grouped, render
    from refitwire.compat.report._report import Footer, Header

    cases = {c.rule: c for c in refusal_cases("1.2.0", wire.default_registry())}  # one case per rule
    assert len(cases) >= 5, sorted(cases)
    writer = _StringStepWriter(repairs=False)
    writer.label = "modelexpress@0.8.0.dev0+gnew"
    now = [r for c in cases.values() for r in _checks.refusal(writer, c, wire.default_registry())]
    assert all(r.outcome.bad for r in now) and len(now) == len(cases)

    def report(label: str, results: list[Any]) -> Report:
        participants = ({"label": label, "kind": "upstream-source"},)
        return Report(Header(5, 10, participants, (), "ran", {"focus": [label]}), tuple(results),
                      Footer(1.0, {}, 0, 0, 0, {}))  # fmt: skip

    delta = compare(report(writer.label, now), report("modelexpress@0.8.0.dev0+gold", []))
    [group] = grouped(delta)
    assert (group.kind, group.count) == ("new", len(cases)), group
    assert group.cause == "given a payload it must refuse, wrote an invalid blob (TYPE)"
    assert sorted(group.cases) == sorted(c.id for c in cases.values())
    listed = [line for line in render(delta, "base.jsonl") if "wrote an invalid blob" in line]
    assert len(listed) == 1 and f"recommended x{len(cases)}: " in listed[0], listed
