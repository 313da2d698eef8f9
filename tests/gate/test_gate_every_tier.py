"""The runtime step reports every disagreement at every tier: nothing is dropped unreported.

The judge is tried on reports a fake matrix writes (every case named, cheap), and the whole
gate on pull requests in throwaway clones whose *reference code* changes, run as the CI
workflow runs the pull request's own reference (``--testee``), with the real matrix and the
released upstream readers (marked slow and upstream).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _gate_helpers import candidate, fake_matrix, make_repo, write, write_text_locks
from refitwire import wire
from refitwire.compat.upstream import envs
from refitwire.gate import EXIT_BREAKING, Rule, render, run_gate

RANK = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0"}
PARTICIPANTS = [("reference@1.2.0", "1.2.0"), ("modelexpress@0.7.0", "1.2.0"), ("candidate@1.3.0", "1.3.0")]


def _rank(schema: dict) -> None:  # type: ignore[type-arg]
    schema["properties"]["publisher_rank"] = dict(RANK)


def _case(writer: str | None, reader: str | None, tier: str, case: str = "gen-abc") -> dict[str, object]:
    return {"case": case, "outcome": "failed", "writer": writer, "reader": reader, "message": "rejected",
            "symptom": "rejected a blob", "tier": tier}  # fmt: skip


def _report(tmp_path: Path, results: list[dict[str, object]]):  # type: ignore[no-untyped-def]
    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _rank))
    return run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        matrix_command=fake_matrix(tmp_path, results, PARTICIPANTS),
        allow_missing=True,
    )


def test_a_recommended_failure_of_a_candidate_writer_read_by_a_release_fails(tmp_path: Path) -> None:
    report = _report(tmp_path, [_case("candidate@1.3.0", "reference@1.2.0", "recommended", "gen-span")])
    assert report.matrix.status == "failed" and report.exit_code == EXIT_BREAKING
    [cell] = report.matrix.failing
    assert cell.startswith("candidate@1.3.0 -> reference@1.2.0: 1 case(s) (1 recommended), first gen-span")
    assert [f.change.rule for f in report.findings if f.failing] == [Rule.MATRIX_DISAGREES]


def test_a_release_rejecting_what_a_candidate_reader_rejects_too_counts_both_ways(tmp_path: Path) -> None:
    report = _report(tmp_path, [_case("modelexpress@0.7.0", "candidate@1.3.0", "recommended")])
    assert report.matrix.status == "failed"


def test_failures_no_side_of_which_is_under_test_are_shown_with_why_not_dropped(tmp_path: Path) -> None:
    results = [
        _case("reference@1.2.0", "modelexpress@0.7.0", "recommended", "gen-1"),
        _case(None, "modelexpress@0.7.0", "recommended", "read:v-1"),
        _case(None, "candidate@1.3.0", "recommended", "read:v-2"),
    ]
    report = _report(tmp_path, results)
    assert report.matrix.status == "passed", report.matrix.detail
    [head, *symptoms] = report.matrix.not_counted
    assert head.startswith("3 failure(s) not counted: no side of these cells is under test")
    assert "SPEC.md section 7" in head and symptoms == [
        "3 x recommended rejected a blob (e.g. gen-1 [reference@1.2.0 -> modelexpress@0.7.0])"
    ]
    assert head in render(report, "text")


# -- the reference's code changed: the pull request's own reference as the testee -----------------------

SPAN_TESTEE = '''"""The reference testee with a writer that no longer enforces ADDR_SPAN (the pull request)."""
import sys

import refitwire._codec as codec
from refitwire import InvalidBlob


enforced = codec.check


def check(*args, **kwargs):
    # The writer's own check, whatever its signature, less ADDR_SPAN: a testee that crashes on
    # every write would fail the gate too, for a reason that is not the loosening under test.
    try:
        enforced(*args, **kwargs)
    except InvalidBlob as exc:
        found = [v for v in exc.violations if v.rule != "ADDR_SPAN"]
        if found:
            raise InvalidBlob(found) from None


codec.check = check
from refitwire.compat.testees import reference  # noqa: E402

sys.exit(reference.main())
'''

NAME_TESTEE = '''"""The reference testee whose reader enforces a new rule: agent_name at most 8 bytes (the pull request)."""
import sys

from refitwire import InvalidBlob, Violation
from refitwire.compat.testees import reference
from refitwire import wire

unwrap = reference.unwrap_rendezvous_blob


def enforced(blob, **kwargs):
    payload = unwrap(blob, **kwargs)
    if len(payload.agent_name.encode()) > 8:
        raise InvalidBlob([Violation("AGENT_NAME_LENGTH", "/agent_name", payload.agent_name, "longer than 8 bytes")])
    return payload


reference.unwrap_rendezvous_blob = enforced
sys.exit(reference.main())
'''


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream envs {missing} not built (python -m refitwire.compat.upstream.envs)")
    monkeypatch.setenv(envs.ENV_VAR, os.pathsep.join(map(str, envs.cache_dirs())))
    return make_repo(tmp_path)


@pytest.mark.slow
@pytest.mark.upstream
def test_the_reference_writer_loosening_addr_span_is_a_finding_with_its_case(clone: Path) -> None:
    (clone / "testee.py").write_text(SPAN_TESTEE)
    report = run_gate(
        clone,
        "HEAD",
        registry=wire.default_registry(),
        testees=[f"{sys.executable} {clone / 'testee.py'}"],
        examples=3,
        seed=3,
    )
    assert report.exit_code == EXIT_BREAKING, render(report, "text")
    [finding] = [f for f in report.findings if f.failing]
    assert (
        finding.change.rule == Rule.MATRIX_DISAGREES and "the schemas did not change" in finding.change.detail
    )
    # the loosening is the only thing that fails: one cell, the testee writing what it had to
    # refuse (a testee that crashes fails every cell it joins, with some other case first)
    assert len(report.matrix.failing) == 1, report.matrix.failing
    [cell] = report.matrix.failing
    # labelled by its start reply (the reference's own name), shown with the case to rerun
    assert cell.startswith("refitwire@") and "first refuse:ADDR_SPAN-" in cell, cell
    # what the writer did, naming the rule its blob breaks
    assert "(recommended)" in cell and "wrote an invalid blob (ADDR_SPAN)" in cell, cell


@pytest.mark.slow
@pytest.mark.upstream
def test_a_new_spec_rule_enforced_in_the_reference_fails_with_the_cells_it_breaks(clone: Path) -> None:
    spec = clone / "schema" / "SPEC.md"
    row = "| `AGENT_NAME_LENGTH` | `agent_name` MUST be at most 8 bytes. | `/agent_name` |\n"
    text = spec.read_text()
    spec.write_text(text.replace("| `SCHEMA_ID` |", row + "| `SCHEMA_ID` |", 1))
    write_text_locks(clone)  # the row is released text too: its lock written, as the gate asks
    (clone / "testee.py").write_text(NAME_TESTEE)
    report = run_gate(
        clone,
        "HEAD",
        registry=wire.default_registry(),
        testees=[f"{sys.executable} {clone / 'testee.py'}"],
        examples=3,
        seed=3,
    )
    assert report.exit_code == EXIT_BREAKING
    rules = {
        f.change.rule for f in report.findings if f.failing and not f.change.pointer.startswith("/spec_text/")
    }
    assert rules == {Rule.SPEC_RULE_ADDED}  # unproven statically, so the runtime step ran and shows it
    assert report.matrix.status == "failed", report.matrix.detail
    assert any("-> refitwire@" in c and "AGENT_NAME_LENGTH" in c for c in report.matrix.failing), (
        report.matrix.failing
    )
