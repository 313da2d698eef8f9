"""The gate's verdicts on the changes a team meets in its first month, each in a throwaway clone.

Witnesses an old writer could really produce, equivalent rewrites, unproven findings, what
this change introduces, release checks and bad input. The runtime step is not run here
(``matrix="never"``): tests/gate/test_gate_real_matrix.py runs it for real.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import refitwire
from _gate_helpers import candidate, commit, git, make_repo, write
from _gate_helpers import refitwire as cli
from refitwire import wire
from refitwire.gate import EXIT_BREAKING, EXIT_COMPATIBLE, EXIT_ERROR, GateError, Rule, render, run_gate

ADDR_MAX = 2**48 - 1


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def _shard(schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema["$defs"]["shard"]["properties"]
    return props


def _failing(repo: Path) -> list[Any]:
    return [
        f
        for f in run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never").findings
        if f.failing
    ]


# -- witnesses an old writer could produce -------------------------------------------------------


def test_addr_tightened_witness_is_one_every_old_reader_reads(repo: Path) -> None:
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: _shard(s)["addr"].update(maximum=ADDR_MAX)),
    )
    failing = _failing(repo)
    assert {f.change.rule for f in failing} == {Rule.NUMERIC_BOUND_TIGHTENED}
    for finding in failing:
        [witness] = finding.witnesses
        addr = witness.blob["tensors"][0]["shards"][0]["addr"]
        assert ADDR_MAX < addr < 2**64 - 1  # not 2^64-1, which ADDR_SPAN makes unwritable
        document = json.loads(json.dumps(witness.blob))
        assert refitwire.violations(document, "rendezvous", finding.against) == []  # the old reader reads it
        assert witness.rejection.startswith("ADDR") or "maximum" in witness.rejection


def test_a_loosened_pattern_is_proven_in_the_direction_it_breaks(repo: Path) -> None:
    def widen(s: dict[str, Any]) -> None:
        _shard(s)["digest"]["pattern"] = "^([0-9a-f]{32}|[0-9a-f]{64})$"

    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", widen))
    [finding, *_] = _failing(repo)
    assert [w.direction for w in finding.witnesses] == ["FORWARD"] and finding.no_witness == ("BACKWARD",)
    assert len(finding.witnesses[0].blob["tensors"][0]["shards"][0]["digest"]) == 64


# -- no "breaking" without evidence ------------------------------------------------------------------


def _equivalent(s: dict[str, Any]) -> None:
    shard = _shard(s)
    shard["digest"]["pattern"] = "^[a-f0-9]{32}$"  # the class reordered
    shard["digest"]["type"] = ["null", "string"]  # the type array reordered
    elsize = s["$defs"]["tensor"]["properties"]["elsize"]
    elsize["exclusiveMaximum"] = elsize.pop("maximum") + 1  # maximum 64 is exclusiveMaximum 65 for integers


def test_a_shard_table_candidate_reads_with_the_shard_table_rules() -> None:
    """A witness's reader is the document's own: a shard-table candidate ignores an unknown
    member the rendezvous rules would check (agent_meta_b64 pad bits), as the released one does."""
    from refitwire.gate._document import load_document
    from refitwire.gate._readers import reader

    schema = json.loads(json.dumps(refitwire.schema_document("shard-table", "1.2.0")))
    schema.update({"x-spec-version": "1.3.0", "$id": schema["$id"].replace("1.2.0", "1.3.0")})
    document = load_document("schema/shard-table/1.3.0.json", json.dumps(schema).encode())
    blob = {"schema": refitwire.wire_schema_id(), "tensors": [], "agent_meta_b64": "AB=="}
    assert refitwire.violations(blob, "shard-table", "1.2.0") == []
    assert reader(document, wire.default_registry())(blob) is None


def test_equivalent_rewrites_pass(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _equivalent))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert report.exit_code == EXIT_COMPATIBLE, [f.change for f in report.findings if f.failing]
    assert {f.change.rule for f in report.findings if f.change.breaking} == set()
    assert {f.change.rule for f in report.findings if f.against == "1.2.0"} == {Rule.EQUIVALENT_REWRITE}


def test_a_flagged_change_without_a_witness_is_unproven_not_breaking(repo: Path) -> None:
    def split(s: dict[str, Any]) -> None:  # the same language, written so no rule can tell
        _shard(s)["digest"]["pattern"] = "^[0-9a-f]{16}[0-9a-f]{16}$"

    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", split))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert report.exit_code == EXIT_BREAKING and report.verdict == "unproven"
    text = render(report, "text", root=repo)
    assert "UNPROVEN PATTERN_CHANGED" in text and "0 failing, 2 unproven" in text
    assert "accept it in the baseline" in text
    # every format a reviewer reads says so, not only the text one
    annotations = [
        x for x in render(report, "github", root=repo).splitlines() if x.startswith("::error file=")
    ]
    assert len(annotations) == 2 and all("title=UNPROVEN PATTERN_CHANGED" in x for x in annotations)
    assert render(report, "junit", root=repo).count('message="UNPROVEN (no witness): ') == 2


# -- report what this change introduces ----------------------------------------------------------------


def test_an_optional_member_is_reported_once_per_released_version_not_with_history(repo: Path) -> None:
    def optional(s: dict[str, Any]) -> None:
        s["properties"]["publisher_rank"] = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0"}

    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", optional))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert [f.change.pointer for f in report.findings] == ["/properties/publisher_rank"] * 3
    assert report.already_released == 3  # digest (1.1.0) and publisher_step (1.2.0) against 1.0.0, 1.1.0


# -- a major version ----------------------------------------------------------------------------------


def _v2(s: dict[str, Any]) -> None:
    s["required"].append("publisher_step")
    s["properties"]["schema"]["const"] = s["x-wire-id"] = "mx.reshard.shard_table.v2"


def test_a_major_version_is_checked_against_its_own_line(repo: Path) -> None:
    write(repo / "schema/rendezvous/2.0.0.json", candidate("2.0.0", _v2))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert report.exit_code == EXIT_COMPATIBLE
    assert {f.change.rule for f in report.findings} == {Rule.MAJOR_VERSION_BREAK}
    write(
        repo / "schema/rendezvous/2.1.0.json",
        candidate(
            "2.1.0",
            lambda s: (_v2(s), s["properties"].update(rank={"type": "integer", "x-added-in": "2.1.0"})),
        ),
    )
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert [(o.rsplit("/", 1)[-1], n) for o, n in report.comparisons][-1] == (
        "2.0.0.json",
        "schema/rendezvous/2.1.0.json",
    )


def test_the_old_line_is_frozen_after_a_major(repo: Path) -> None:
    write(repo / "schema/rendezvous/2.0.0.json", candidate("2.0.0", _v2))
    _release(repo, "2.0.0")
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0"))
    [finding] = _failing(repo)
    assert finding.change.rule == Rule.VERSION_NOT_NEWER and "line is frozen" in finding.change.detail


# -- releasing ---------------------------------------------------------------------------------------


def _release(repo: Path, version: str, **override: str) -> None:
    for kind in ("rendezvous",):
        data = (repo / f"schema/{kind}/{version}.json").read_bytes()
        index = json.loads((repo / "schema/index.json").read_text())
        entry = {"version": version, "path": f"{kind}/{version}.json", "sha256": hashlib.sha256(data).hexdigest(),
                 "released": "2026-12-01", **override}  # fmt: skip
        index["documents"][kind].append(entry)
        (repo / "schema/index.json").write_text(json.dumps(index, indent=2) + "\n")
    commit(repo, f"release {version}")


def test_a_release_with_a_wrong_sha256_is_caught(repo: Path) -> None:
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0"))
    index = json.loads((repo / "schema/index.json").read_text())
    index["documents"]["rendezvous"].append(
        {"version": "1.3.0", "path": "rendezvous/1.3.0.json", "sha256": "0" * 64}
    )
    (repo / "schema/index.json").write_text(json.dumps(index))
    [finding] = _failing(repo)
    assert finding.change.rule == Rule.RELEASE_ENTRY_MISMATCH and "sha256" in finding.change.detail


def test_stamps_must_agree_with_the_file_name(repo: Path) -> None:
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: s.update({"$id": "urn:refitwire:schema:rendezvous:1.2.0"})),
    )
    [finding] = _failing(repo)
    assert (finding.change.rule, finding.change.pointer) == (Rule.VERSION_STAMP_MISMATCH, "/$id")


@pytest.mark.parametrize("name", ["next.json", "1.3.json", "01.3.0.json"])
def test_a_file_name_that_is_not_a_version_is_a_one_line_error(repo: Path, name: str) -> None:
    write(repo / f"schema/rendezvous/{name}", candidate("1.3.0"))
    with pytest.raises(GateError, match="not a version"):
        run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    done = cli(repo, "gate", "--against", "HEAD", "--matrix", "never")
    assert done.returncode == EXIT_ERROR and len(done.stderr.splitlines()) == 1, done.stderr


def test_a_new_document_folder_is_reported(repo: Path) -> None:
    (repo / "schema/refit-plan").mkdir()
    write(repo / "schema/refit-plan/1.0.0.json", {"type": "object"})
    [finding] = _failing(repo)
    assert finding.change.rule == Rule.DOCUMENT_UNKNOWN and finding.file == "schema/refit-plan/1.0.0.json"


# -- bad input -----------------------------------------------------------------------------------------


def test_json_nested_thousands_deep_is_a_one_line_error(repo: Path) -> None:
    (repo / "schema/rendezvous/1.3.0.json").write_text('{"x": ' * 5000 + "1" + "}" * 5000)
    done = cli(repo, "gate", "--against", "HEAD", "--matrix", "never")
    assert done.returncode == EXIT_ERROR and len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_the_first_commit_as_against_is_a_one_line_error(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("first\n")
    commit(repo, "first")
    first = git(repo, "rev-parse", "HEAD").strip()
    make = make_repo(tmp_path / "second")
    (repo / "schema").mkdir()
    for path in (make / "schema").rglob("*.json"):
        target = repo / path.relative_to(make)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    commit(repo, "schemas")
    done = cli(repo, "gate", "--against", first, "--matrix", "never")
    assert done.returncode == EXIT_ERROR and len(done.stderr.splitlines()) == 1, done.stderr
    assert "no schema index at that ref" in done.stderr


@pytest.mark.parametrize("text", ["{", "[" * 5000, '{"accepted": [{"rule": "X"}]}'])
def test_an_unparsable_baseline_is_a_one_line_error(repo: Path, tmp_path: Path, text: str) -> None:
    (tmp_path / "baseline.json").write_text(text)
    done = cli(
        repo, "gate", "--against", "HEAD", "--matrix", "never", "--baseline", str(tmp_path / "baseline.json")
    )
    assert done.returncode == EXIT_ERROR and len(done.stderr.splitlines()) == 1, done.stderr
