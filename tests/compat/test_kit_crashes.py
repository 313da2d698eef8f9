"""A crash is never a verdict: an exception inside one of the kit's rules, readers or writers
makes the case it was judging errored, with the traceback, and fails the run; it never reads as
"valid", "rejected", "passed" or "no witness"."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refitwire import from_decoded, latest, released_versions, schema_document, wire, wrap_rendezvous_blob
from refitwire.compat import Candidate, Plan, errored_run, report_ok, run_matrix
from refitwire.compat.runner._participants import reference
from refitwire.gate import Document

DECODED = {"agent_name": "a", "metadata_endpoint": "h:1", "agent_meta_b64": "bQ==", "publisher_step": 7,
           "tensors": [{"name": "t", "dtype": "torch.float32", "elsize": 4, "full_shape": [2], "shards": [
               {"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [2]}]}]}  # fmt: skip


def _valid_document() -> dict[str, Any]:
    p = from_decoded(DECODED)
    document: dict[str, Any] = json.loads(wrap_rendezvous_blob(*p[:4], p.publisher_step))
    return document


VALID = _valid_document()  # written before any rule is made to crash


@pytest.fixture
def crashing_rule(monkeypatch: pytest.MonkeyPatch) -> str:
    """The table rules of section 2.3 raise, in this process only (the testees are not touched)."""
    message = "planted crash in the table rules"

    def crash(*args: Any, **kwargs: Any) -> Iterator[Any]:
        raise KeyError(message)
        yield  # a generator, like the real one

    monkeypatch.setattr("refitwire._validate.table_rules", crash)
    return message


def test_a_crashing_rule_errors_the_matrix_cases_it_judges(crashing_rule: str) -> None:
    """The matrix checks every written blob with the reference's own rules in-process: with
    those rules crashing, each generated write case is errored with the traceback, none passes,
    and the run's verdict is a failure (the CLI's exit 1)."""
    plan = Plan(
        registry=wire.default_registry(),
        participants=[reference(wire.default_registry())[-1]],
        seed=1,
        examples=2,
        limits=False,
    )
    lines = run_matrix(plan)
    results = [line for line in lines if line["type"] == "result"]
    written = [r for r in results if r["case"].startswith("gen-") and ":" not in r["case"]]
    assert written, "no generated write case ran"
    assert all(r["outcome"] == "errored" for r in written), [r["outcome"] for r in written]
    for r in written:
        assert (r["symptom"], r["fault"]) == ("the kit crashed", "kit")
        assert "Traceback (most recent call last)" in r["message"] and crashing_rule in r["message"]
    # An errored run, not a verdict on the implementation: counted apart, never in a tier.
    footer = lines[-1]
    crashed = [r for r in results if r.get("fault") == "kit"]
    assert footer["kit_crashed"] == len(crashed) >= len(written)
    assert footer["required_failed"] + footer["recommended_failed"] == sum(
        r["outcome"] in ("failed", "errored") and r.get("fault") != "kit" for r in results
    )
    assert not report_ok(footer) and errored_run(footer) == len(crashed)


def test_a_kit_crash_makes_the_command_an_errored_run(
    crashing_rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI, in this process (so the planted crash holds): exit 1, a line saying the
    run errored because the kit crashed, and every traceback in the report."""
    from refitwire.cli import main

    report = tmp_path / "r.jsonl"
    testee = f"{sys.executable} -m refitwire.compat.testees.reference"
    code = main(["conformance", "--testee", testee, "--no-upstream", "--no-size-limit", "--seed", "1",
                 "--examples", "2", "--output", str(report)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "the run errored: the kit crashed on" in err, err
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    crashed = [r for r in lines if r.get("fault") == "kit"]
    assert crashed and all(crashing_rule in r["message"] for r in crashed)
    assert lines[-1]["kit_crashed"] == len(crashed)


def test_a_crashing_rule_is_no_verdict_of_a_candidate_or_a_gate_reader(crashing_rule: str) -> None:
    """A candidate is read by the library's reader: its crash raises (it was once "no
    violations"); the gate's reader of a released version raises ReaderCrash (once "rejected")."""
    from refitwire.gate._errors import ReaderCrash
    from refitwire.gate._readers import reader

    document = VALID
    schema = schema_document("rendezvous", latest())
    schema["x-spec-version"] = "1.9.0"
    with pytest.raises(KeyError, match=crashing_rule):
        Candidate.of_schema(wire.default_registry(), schema, "1.9.0").violations(document)
    released = Document(f"rendezvous/{released_versions()[-1]}", schema_document("rendezvous", latest()))
    with pytest.raises(ReaderCrash, match=crashing_rule):
        reader(released, wire.default_registry())(document)
