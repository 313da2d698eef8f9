"""The count-only read (the quorum check's read, protocol command ``count``) is held to what a
full read says of the envelope: a reader whose quorum path reads an unstamped blob as step 0,
miscounts the table, leaves the endpoint ``null`` or accepts a foreign schema id (which every
released count-only read refuses) fails a Required case; one without a count-only read is one
skipped case."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat._results import RECOMMENDED, REQUIRED, Outcome, Result
from refitwire.compat.cases import _cases
from refitwire.compat.runner import _asking, _checks, _kinds, _run
from refitwire.compat.testees.reference import answer
from refitwire.wire import spec_rules

Mutation = Callable[[dict[str, Any]], dict[str, Any]]


def _step_zero(reply: dict[str, Any]) -> dict[str, Any]:
    if "envelope" in reply and reply["envelope"].get("publisher_step") is None:
        reply["envelope"]["publisher_step"] = 0  # "an unstamped publisher must not block the quorum"
    return reply


def _one_more(reply: dict[str, Any]) -> dict[str, Any]:
    if "entries" in reply:
        reply["entries"] += 1
    return reply


def _endpoint_null(reply: dict[str, Any]) -> dict[str, Any]:
    if reply.get("envelope", {}).get("metadata_endpoint") == "":
        reply["envelope"]["metadata_endpoint"] = None
    return reply


def _any_schema(reply: dict[str, Any]) -> dict[str, Any]:
    if reply.get("rule") == "SCHEMA_ID":
        envelope = {"agent_name": "a", "metadata_endpoint": "", "agent_meta_b64": "", "publisher_step": None}
        return {"seq": reply["seq"], "envelope": envelope, "entries": 0}
    return reply


class _Reader:
    """The reference testee in process, its count-only answers changed by ``mutation``."""

    def __init__(self, mutation: Mutation | None = None, counts: bool = True) -> None:
        self.mutation, self.counts = mutation, counts
        self.version, self.label, self.stderr = "1.2.0", "reader", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        if message["cmd"] == "count" and not self.counts:
            return {"seq": message["seq"], "skipped": True, "reason": "unknown command 'count'"}
        reply = copy.deepcopy(answer(message, self.version, wire.default_registry()))
        return self.mutation(reply) if self.mutation and message["cmd"] == "count" else reply


def _results(reader: _Reader) -> list[Result]:
    scope = _asking.Scope(_run.Plan(registry=wire.default_registry(), participants=[]), [], None)
    cases = _cases.count_cases(wire.default_registry())
    count = _kinds.kind("count")
    return list(_asking._offered(reader, scope, "count", cases, _checks.read_vector, count))  # type: ignore[arg-type]


def test_the_reference_passes_every_count_case() -> None:
    results = _results(_Reader())
    assert len(results) > len(
        _cases.count_cases(wire.default_registry())
    )  # the verdicts, and the reasons of rejections
    assert [r for r in results if r.outcome is not Outcome.PASSED] == []
    assert {r.tier for r in results} == {REQUIRED, RECOMMENDED}


@pytest.mark.parametrize(
    ("mutation", "tier", "symptom"),
    [
        (_step_zero, REQUIRED, "wrong type at /envelope/publisher_step"),
        (_one_more, REQUIRED, "value differs at /entries"),
        (_endpoint_null, REQUIRED, "null at /envelope/metadata_endpoint"),
        (_any_schema, REQUIRED, "accepted: breaks SCHEMA_ID"),  # the released count-only read refuses it
    ],
)
def test_a_broken_count_only_read_fails(mutation: Mutation, tier: str, symptom: str) -> None:
    failed = [r for r in _results(_Reader(mutation)) if r.outcome is Outcome.FAILED]
    assert failed, f"{mutation.__name__} passed every count case"
    assert {r.symptom for r in failed if r.tier == tier} == {symptom}


def test_no_count_only_read_is_one_skipped_case() -> None:
    (result,) = _results(_Reader(counts=False))
    assert (result.case, result.outcome) == ("count", Outcome.SKIPPED)


def test_only_the_envelope_is_asked_of_an_invalid_vector() -> None:
    """A violation inside an entry, or of an encoding rule (SPEC section 2.1), is no count case: a
    count-only read may leave the entries to the read of the table."""
    encoding = {
        rule.id for rule in spec_rules(wire.default_registry()).rules if rule.section.startswith("2.1 ")
    }
    table = _cases.model_of("1.2.0", wire.default_registry()).table_at()[-1]
    asked = {
        c.id.removeprefix("count:"): c.expect["1.2.0"] for c in _cases.count_cases(wire.default_registry())
    }
    kinds = set()
    for case in _cases.read_cases():
        e = case.expect["1.2.0"]
        assert e is not None
        inside = not e["valid"] and (e["pointer"].startswith(f"/{table}/") or e["rule"] in encoding)
        assert (asked.get(case.id.removeprefix("read:")) is None) == inside, case.id
        kinds.add((e["valid"], inside))
    assert kinds == {(True, False), (False, False), (False, True)}  # each kind is there to be told apart


def test_a_count_reply_is_checked_against_its_schema() -> None:
    reply = _checks.ask_read(
        _Reader(lambda r: {**r, "entries": -1}),
        _cases.count_cases(wire.default_registry())[0].blob,
        cmd="count",
    )
    assert reply.pointer == "/entries" and reply.malformed  # type: ignore[union-attr]
