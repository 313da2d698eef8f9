"""``refitwire diff`` through the command line: exit codes 0/100/1, files and REF:path."""

from __future__ import annotations

import json
from pathlib import Path

from _gate_helpers import ROOT, candidate, make_repo, refitwire, write
from refitwire.gate import Rule


def test_compatible_pair_exits_0() -> None:
    done = refitwire(ROOT, "diff", "schema/rendezvous/1.1.0.json", "schema/rendezvous/1.2.0.json")
    assert done.returncode == 0, done.stderr
    assert Rule.PROPERTY_ADDED_OPTIONAL in done.stdout


def test_breaking_pair_exits_100_with_witness(tmp_path: Path) -> None:
    def required(schema: dict) -> None:  # type: ignore[type-arg]
        schema["required"].append("publisher_step")

    write(tmp_path / "new.json", candidate("1.3.0", required))
    done = refitwire(
        ROOT, "diff", "schema/rendezvous/1.2.0.json", str(tmp_path / "new.json"), "--format", "json"
    )
    assert done.returncode == 100
    [finding] = [json.loads(x) for x in done.stdout.splitlines() if '"finding"' in x]
    assert finding["rule"] == Rule.REQUIRED_ADDED and finding["witnesses"][0]["direction"] == "BACKWARD"


def test_ref_path_reads_git_history(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    done = refitwire(repo, "diff", "HEAD:schema/rendezvous/1.0.0.json", "schema/rendezvous/1.2.0.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(Rule.PROPERTY_ADDED_OPTIONAL) == 2


def test_bad_inputs_exit_1(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"type": "strung"}')
    for old in ("no-such-file.json", "no-such-ref:schema/index.json", str(tmp_path / "bad.json")):
        done = refitwire(ROOT, "diff", old, "schema/rendezvous/1.2.0.json")
        assert done.returncode == 1, (old, done.stdout)
        assert done.stdout == ""


def test_gate_error_survives_pickle_and_copy() -> None:
    import copy
    import pickle

    from refitwire.gate import GateError

    error = GateError("schema/rendezvous/next.json", "not a version")
    for clone in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error)):
        assert (clone.source, clone.detail, str(clone)) == (error.source, error.detail, str(error))


def test_no_witness_is_unproven_never_breaking(tmp_path: Path) -> None:
    """Skipping the witness search leaves a schema-only verdict: counted unproven, never breaking."""

    def required(schema: dict) -> None:  # type: ignore[type-arg]
        schema["required"].append("publisher_step")

    write(tmp_path / "new.json", candidate("1.3.0", required))
    new = str(tmp_path / "new.json")
    done = refitwire(ROOT, "diff", "schema/rendezvous/1.2.0.json", new, "--format", "json", "--no-witness")
    assert done.returncode == 100
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    [finding] = [x for x in lines if x["type"] == "finding"]
    assert finding["rule"] == Rule.REQUIRED_ADDED and not finding["witnesses"]
    assert finding["unproven"] and finding["witness_search"] == "skipped"
    [footer] = [x for x in lines if x["type"] == "footer"]
    assert footer["verdict"] == "unproven", footer
    text = refitwire(ROOT, "diff", "schema/rendezvous/1.2.0.json", new, "--no-witness").stdout
    assert "UNPROVEN REQUIRED_ADDED" in text and "witness search skipped (--no-witness)" in text
