"""The gate end to end in a throwaway git checkout: exit codes, formats, locks, baseline, matrix."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from _gate_helpers import candidate, fake_matrix, gate, git, make_repo, refitwire, write
from refitwire import wire
from refitwire.gate import EXIT_BREAKING, EXIT_COMPATIBLE, EXIT_ERROR, GateError, Rule, render, run_gate
from refitwire.gate._baseline import Accepted

STEP_RANK = {"type": ["integer", "null"], "minimum": 0, "x-added-in": "1.3.0",
             "description": "Rank of the publisher within its group."}  # fmt: skip


def _optional(schema: dict) -> None:  # type: ignore[type-arg]
    schema["properties"]["publisher_rank"] = dict(STEP_RANK)


def _required(schema: dict) -> None:  # type: ignore[type-arg]
    _optional(schema)
    schema["required"].append("publisher_rank")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def _cli(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return refitwire(repo, "gate", "--against", "HEAD", "--matrix", "never", *args)


# -- the worked example of docs/gate.md --------------------------------------------------------------


def test_worked_example_optional_field_passes(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _optional))
    code, text = gate(repo)
    assert code == EXIT_COMPATIBLE, text
    assert Rule.PROPERTY_ADDED_OPTIONAL in text
    assert "verdict: compatible (exit 0)" in text


def test_worked_example_required_field_fails_with_witness(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    code, out = gate(repo, fmt="json")
    assert code == EXIT_BREAKING, out
    records = [json.loads(line) for line in out.splitlines()]
    failing = [r for r in records if r["type"] == "finding" and r["failing"]]
    assert {r["against"] for r in failing} == {"1.0.0", "1.1.0", "1.2.0"}  # transitive
    assert {r["rule"] for r in failing} == {Rule.PROPERTY_ADDED_REQUIRED}
    for record in failing:
        [witness] = record["witnesses"]
        assert witness["direction"] == "BACKWARD"
        assert "publisher_rank" not in witness["blob"]
        assert "publisher_rank" in witness["rejection"]


# -- exit codes and robustness -----------------------------------------------------------------------


def test_no_candidate_is_compatible(repo: Path) -> None:
    assert gate(repo)[0] == EXIT_COMPATIBLE


def test_modified_released_file_is_breaking(repo: Path) -> None:
    path = repo / "schema/rendezvous/1.1.0.json"
    path.write_text(path.read_text().replace("Name of the publisher's NIXL agent.", "The agent."))
    code, out = gate(repo, fmt="json")
    assert code == EXIT_BREAKING
    rules = [json.loads(line).get("rule") for line in out.splitlines()]
    assert Rule.RELEASED_FILE_MODIFIED in rules


def test_removed_released_file_is_breaking(repo: Path) -> None:
    (repo / "schema/shard-table/1.0.0.json").unlink()
    code, text = gate(repo)
    assert code == EXIT_BREAKING
    assert Rule.RELEASED_FILE_REMOVED in text


def test_candidate_not_newer_is_breaking(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.1.5.json", candidate("1.1.5", _optional))
    code, text = gate(repo)
    assert code == EXIT_BREAKING
    assert Rule.VERSION_NOT_NEWER in text


def test_new_major_must_change_the_wire_id(repo: Path) -> None:
    write(repo / "schema/rendezvous/2.0.0.json", candidate("2.0.0", _required))
    code, text = gate(repo)
    assert code == EXIT_BREAKING
    assert Rule.MAJOR_WITHOUT_NEW_WIRE_ID in text

    def v2(schema: dict) -> None:  # type: ignore[type-arg]
        _required(schema)
        schema["properties"]["schema"]["const"] = schema["x-wire-id"] = "mx.reshard.shard_table.v2"

    write(repo / "schema/rendezvous/2.0.0.json", candidate("2.0.0", v2))
    code, text = gate(repo)
    assert code == EXIT_COMPATIBLE, text
    assert Rule.MAJOR_VERSION_BREAK in text


@pytest.mark.parametrize("ref", ["no-such-ref", "HEAD~5", "-x"])
def test_a_broken_ref_is_bad_input(repo: Path, ref: str) -> None:
    with pytest.raises(GateError, match=ref):  # the CLI prints it as one line: the test below
        run_gate(repo, ref, registry=wire.default_registry(), matrix="never")


@pytest.mark.parametrize("text", ["{", "[]", '{"type": 7}', '{"$ref": "#/$defs/nope"}'])
def test_a_malformed_candidate_is_bad_input(repo: Path, text: str) -> None:
    (repo / "schema/rendezvous/1.3.0.json").write_text(text)
    with pytest.raises(GateError, match=r"^schema/rendezvous/1\.3\.0\.json: "):
        run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")


def test_bad_input_exits_1_with_one_line(repo: Path) -> None:
    (repo / "schema/rendezvous/1.3.0.json").write_text('{"type": 7}')
    done = _cli(repo)
    assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (EXIT_ERROR, "", 1), done.stderr
    assert done.stderr.startswith("refitwire gate: schema/rendezvous/1.3.0.json: ")
    done = refitwire(repo, "gate", "--against=no-such-ref", "--matrix", "never")
    assert (done.returncode, done.stdout) == (EXIT_ERROR, "") and "refitwire gate:" in done.stderr


def test_not_a_git_checkout_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(GateError):
        run_gate(tmp_path, registry=wire.default_registry(), matrix="never")


def test_default_base_is_the_merge_base_with_main(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "schema")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "1.3.0")
    code, text = gate(repo, against=None)
    assert code == EXIT_BREAKING
    assert "merge-base(HEAD, main)" in text


# -- formats -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "github", "sarif"])
def test_every_format_parses_and_says_matrix_not_run(repo: Path, fmt: str) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert report.exit_code == EXIT_BREAKING
    out = render(report, fmt, root=repo)
    if fmt == "json":
        records = [json.loads(line) for line in out.splitlines()]
        assert records[0]["type"] == "header" and records[-1]["type"] == "footer"
        assert records[-1]["exit_code"] == EXIT_BREAKING and records[-1]["matrix"] == "not-run"
    elif fmt == "junit":
        root = ET.fromstring(out)
        assert root.tag == "testsuites" and int(root.get("failures", "0")) >= 3
        matrix = root.find("testsuite[@name='runtime matrix']/testcase/skipped")
        assert matrix is not None
    elif fmt == "sarif":
        sarif = json.loads(out)
        assert sarif["version"] == "2.1.0"
        [run] = sarif["runs"]
        assert {r["ruleId"] for r in run["results"] if r["level"] == "error"} == {
            Rule.PROPERTY_ADDED_REQUIRED
        }
        assert run["properties"]["matrix"] == "not-run"
    elif fmt == "github":
        line = next(n for n, text in enumerate((repo / "schema/rendezvous/1.3.0.json").read_text().splitlines(), 1)
                    if '"publisher_rank": {' in text)  # fmt: skip
        assert out.count(f"::error file=schema/rendezvous/1.3.0.json,line={line},") == 3
        assert "::warning title=runtime matrix::runtime matrix: not run" in out
    else:
        assert "runtime matrix: not run" in out and "witness (BACKWARD" in out


def test_write_witnesses_as_blobs_validate_reads(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    done = _cli(repo, "--write-witnesses", str(tmp_path / "w"))
    assert done.returncode == EXIT_BREAKING
    files = sorted((tmp_path / "w").glob("*.json"))
    assert [f.name.split("-rejects-")[0] for f in files] == [
        "1.0.0-accepted-1.3.0", "1.1.0-accepted-1.3.0", "1.2.0-accepted-1.3.0"]  # fmt: skip
    checked = refitwire(repo, "validate", *map(str, files))  # plain blobs: an old writer could write each
    assert checked.returncode == 0 and checked.stdout.count("conforms to 1.0.0, 1.1.0, 1.2.0") == 3, (
        checked.stdout
    )
    manifest = [json.loads(line) for line in (tmp_path / "w" / "witnesses.jsonl").read_text().splitlines()]
    assert {m["rule"] for m in manifest} == {Rule.PROPERTY_ADDED_REQUIRED}


# -- baseline --------------------------------------------------------------------------------------------


def _entry(**changes: object) -> dict[str, object]:
    entry: dict[str, object] = {"rule": Rule.PROPERTY_ADDED_REQUIRED, "pointer": "/properties/publisher_rank",
                                "change": "0" * 16, "reason": "coordinated rollout", "link": "issue-12",
                                "expires": "2999-01-01"}  # fmt: skip
    entry.update(changes)
    return entry


def _hash_of(repo: Path, rule: str) -> str:
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never", witnesses=False)
    return next(f.hash for f in report.findings if f.change.rule == rule)


def _with_baseline(repo: Path, tmp_path: Path, *entries: dict[str, object]) -> tuple[int, str]:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"accepted": list(entries)}))
    return gate(repo, baseline=path)


def test_matching_baseline_entry_suppresses(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    code, text = _with_baseline(repo, tmp_path, _entry(change=_hash_of(repo, Rule.PROPERTY_ADDED_REQUIRED)))
    assert code == EXIT_COMPATIBLE, text
    assert text.count("ACCEPTED PROPERTY_ADDED_REQUIRED") == 3


def test_stale_baseline_entry_fails(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _optional))
    code, text = _with_baseline(repo, tmp_path, _entry())
    assert code == EXIT_BREAKING
    assert Rule.BASELINE_STALE in text


def test_expired_baseline_entry_fails_and_suppresses_nothing(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    code, text = _with_baseline(
        repo, tmp_path, _entry(expires="2000-01-01", change=_hash_of(repo, Rule.PROPERTY_ADDED_REQUIRED))
    )
    assert code == EXIT_BREAKING
    assert Rule.BASELINE_EXPIRED in text and "BREAKING PROPERTY_ADDED_REQUIRED" in text


def test_a_malformed_baseline_is_bad_input(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GateError, match=r"baseline\.json"):
        _with_baseline(repo, tmp_path, {"rule": "X"})


def test_baseline_expiry_is_checked_against_today(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    entry = Accepted(0, Rule.PROPERTY_ADDED_REQUIRED, "/properties/publisher_rank", "r", "l",
                     datetime.date(2030, 1, 1), change=_hash_of(repo, Rule.PROPERTY_ADDED_REQUIRED))  # fmt: skip
    before = run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        baseline=[entry],
        matrix="never",
        today=datetime.date(2029, 12, 31),
    )
    after = run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        baseline=[entry],
        matrix="never",
        today=datetime.date(2030, 1, 2),
    )
    assert before.exit_code == EXIT_COMPATIBLE and after.exit_code == EXIT_BREAKING


# -- the runtime matrix step ----------------------------------------------------------------------------


def _cell(
    writer: str | None, reader: str | None, outcome: str = "failed", case: str = "gen-abc"
) -> dict[str, object]:
    return {"case": case, "outcome": outcome, "writer": writer, "reader": reader, "message": "rejected"}


def test_matrix_passes_after_static_pass(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _optional))
    report = run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        matrix_command=fake_matrix(tmp_path, [_cell("reference@1.2.0", None, "passed")]),
    )
    assert report.matrix.status == "passed" and report.exit_code == EXIT_COMPATIBLE
    assert report.matrix.seed == 7 and "modelexpress@0.7.0" in report.matrix.ran


def test_rules_compatible_but_matrix_fails_names_the_cells(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _optional))
    cells = [
        _cell("reference@1.2.0", "modelexpress@0.7.0", case="gen-1"),
        _cell("reference@1.2.0", "modelexpress@0.7.0", case="gen-2"),
    ]
    report = run_gate(
        repo, "HEAD", registry=wire.default_registry(), matrix_command=fake_matrix(tmp_path, cells)
    )
    assert report.matrix.status == "failed" and report.exit_code == EXIT_BREAKING
    assert [f.change.rule for f in report.findings if f.failing] == [Rule.MATRIX_DISAGREES]
    [cell] = report.matrix.failing
    assert cell.startswith("reference@1.2.0 -> modelexpress@0.7.0: 2 case(s), first gen-1")


def test_rules_breaking_but_matrix_passes_is_a_disagreement(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    report = run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        matrix="always",
        matrix_command=fake_matrix(tmp_path, []),
    )
    assert Rule.MATRIX_DISAGREES in {f.change.rule for f in report.findings}
    assert report.exit_code == EXIT_BREAKING


def test_static_failure_skips_the_matrix_in_auto_mode(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    report = run_gate(
        repo, "HEAD", registry=wire.default_registry(), matrix_command=fake_matrix(tmp_path, [])
    )
    assert report.matrix.status == "not-run" and "static check failed" in report.matrix.detail


def test_matrix_without_footer_is_an_error_not_a_pass(repo: Path, tmp_path: Path) -> None:
    report = run_gate(
        repo, "HEAD", registry=wire.default_registry(), matrix_command=fake_matrix(tmp_path, [], footer=False)
    )
    assert report.matrix.status == "errored" and report.exit_code == EXIT_ERROR


def test_require_matrix_turns_not_run_into_an_error(repo: Path) -> None:
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never", require_matrix=True)
    assert report.exit_code == EXIT_ERROR


def test_a_released_reader_that_did_not_run_makes_the_step_incomplete(repo: Path, tmp_path: Path) -> None:
    ran = [("reference@1.0.0", "1.0.0"), ("reference@1.1.0", "1.1.0"), ("reference@1.2.0", "1.2.0"),
           ("modelexpress@0.6.0", "1.2.0")]  # fmt: skip
    command = fake_matrix(tmp_path, [], participants=ran)
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix_command=command)
    assert (report.matrix.status, report.exit_code, report.verdict) == (
        "incomplete",
        EXIT_ERROR,
        "incomplete",
    )
    assert report.matrix.missing == ("modelexpress@0.7.0",)
    accepted = run_gate(
        repo, "HEAD", registry=wire.default_registry(), matrix_command=command, allow_missing=True
    )
    assert (
        accepted.exit_code == EXIT_COMPATIBLE
        and "accepted as missing: modelexpress@0.7.0" in accepted.matrix.detail
    )


def test_accepted_break_scopes_what_the_matrix_may_fail(repo: Path, tmp_path: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    findings = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never").findings
    entries = [Accepted(i, f.change.rule, f.change.pointer, "r", "l", datetime.date(2999, 1, 1), change=f.hash)
               for i, f in enumerate(findings) if f.failing]  # fmt: skip
    participants = [("reference@1.2.0", "1.2.0"), ("candidate@1.3.0", "1.3.0")]
    backward = [
        _cell("reference@1.2.0", "candidate@1.3.0")
    ]  # old writer, new reader: what the accepted break says
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), baseline=entries[:1], matrix_command=fake_matrix(tmp_path, backward, participants),
                      allow_missing=True)  # fmt: skip
    assert report.exit_code == EXIT_COMPATIBLE, report.matrix
    assert report.matrix.expected == 1
    forward = [_cell("candidate@1.3.0", "reference@1.2.0")]  # not what was accepted
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), baseline=entries[:1], matrix_command=fake_matrix(tmp_path, forward, participants),
                      allow_missing=True)  # fmt: skip
    assert report.exit_code == EXIT_BREAKING and report.matrix.status == "failed"


def test_cells_across_major_lines_are_not_expected_to_work(repo: Path, tmp_path: Path) -> None:
    participants = [("reference@1.2.0", "1.2.0"), ("candidate@2.0.0", "2.0.0")]
    cells = [_cell("reference@1.2.0", "candidate@2.0.0"), _cell("candidate@2.0.0", "reference@1.2.0"),
             _cell(None, "candidate@2.0.0", case="read:v-1")]  # fmt: skip
    report = run_gate(
        repo,
        "HEAD",
        registry=wire.default_registry(),
        matrix_command=fake_matrix(tmp_path, cells, participants),
        allow_missing=True,
    )
    assert report.matrix.status == "passed" and report.matrix.expected == 3


def test_a_baseline_entry_accepts_only_the_content_it_names(repo: Path, tmp_path: Path) -> None:
    """An entry written for a typo fix in a released file does not also accept a later change to it."""
    path = repo / "schema/rendezvous/1.1.0.json"
    path.write_text(
        path.read_text().replace("Name of the publisher's NIXL agent.", "Name of the publisher NIXL agent.")
    )
    typo = _entry(
        rule=Rule.RELEASED_FILE_MODIFIED, pointer="", change=_hash_of(repo, Rule.RELEASED_FILE_MODIFIED)
    )
    assert _with_baseline(repo, tmp_path, typo)[0] == EXIT_COMPATIBLE
    path.write_text(path.read_text().replace('"maximum": 64', '"maximum": 16'))
    code, text = _with_baseline(repo, tmp_path, typo)
    assert code == EXIT_BREAKING
    assert Rule.BASELINE_STALE in text and "BREAKING RELEASED_FILE_MODIFIED" in text


def test_the_printed_pointer_and_entry_are_what_the_baseline_takes(repo: Path, tmp_path: Path) -> None:
    (repo / "schema/rendezvous/1.0.0.json").write_text(
        (repo / "schema/rendezvous/1.0.0.json").read_text() + " "
    )
    _, text = gate(repo)
    assert 'pointer ""' in text  # the root is "", as RFC 6901 writes it
    printed = json.loads(next(line for line in text.splitlines() if line.startswith('    {"rule"')))
    printed.update(reason="whitespace", link="issue-3", expires="2999-01-01")
    assert _with_baseline(repo, tmp_path, printed)[0] == EXIT_COMPATIBLE


def test_default_baseline_path_is_used(repo: Path) -> None:
    (repo / "schema/gate-baseline.json").write_text(json.dumps({"accepted": [_entry()]}))
    done = _cli(repo)  # the CLI's default baseline path (cli/gate.py), so through the CLI
    assert done.returncode == EXIT_BREAKING and Rule.BASELINE_STALE in done.stdout
