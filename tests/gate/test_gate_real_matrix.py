"""The gate's runtime step with the real compat matrix and the released upstream readers.

Each test is a throwaway clone with a proposed version; the matrix runs every released
participant (the upstream environments must be built, as ``tox -e tests`` does) with few
generated payloads, so the step stays short. One test points REFITWIRE_ENVS at an empty
folder: the released readers are missing and the step must say so. The gate runs in this
process (``run_gate``); its own matrix command is the only process started per run.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import candidate, gate, make_repo, write
from refitwire import wire
from refitwire.compat.upstream import envs
from refitwire.gate import EXIT_BREAKING, EXIT_COMPATIBLE, EXIT_ERROR, run_gate
from refitwire.gate._baseline import Accepted

pytestmark = [pytest.mark.slow, pytest.mark.upstream]

EXAMPLES = 4
NEW_MEMBER = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0", "description": "Rank of the publisher."}


@pytest.fixture(autouse=True)
def _upstream_built() -> None:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(
            f"upstream envs {missing} not built under {envs.cache_dir()} (python -m refitwire.compat.upstream.envs)"
        )


def _gate(repo: Path, **options: Any) -> tuple[int, list[dict[str, Any]]]:
    code, out = gate(repo, fmt="json", matrix="auto", examples=EXAMPLES, seed=3, **options)
    return code, [json.loads(line) for line in out.splitlines()]


@pytest.fixture(autouse=True)
def _envs_of_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clone is its own checkout: point it at the envs this checkout built (as a CI cache would).
    monkeypatch.setenv(envs.ENV_VAR, os.pathsep.join(map(str, envs.cache_dirs())))


def _matrix(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in records if r["type"] == "matrix")


def test_an_optional_member_passes_with_every_released_reader(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: s["properties"].update(publisher_rank=NEW_MEMBER)),
    )
    code, records = _gate(repo)
    matrix = _matrix(records)
    assert (code, matrix["status"]) == (EXIT_COMPATIBLE, "passed"), matrix
    assert {"modelexpress@0.6.0", "modelexpress@0.7.0", "candidate@1.3.0"} <= set(matrix["ran"])
    assert matrix["seed"] == 3


def test_without_the_upstream_envs_the_step_is_incomplete_and_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: s["properties"].update(publisher_rank=NEW_MEMBER)),
    )
    (tmp_path / "no-envs").mkdir()
    monkeypatch.setenv(envs.ENV_VAR, str(tmp_path / "no-envs"))
    code, records = _gate(repo)
    matrix = _matrix(records)
    assert (code, matrix["status"]) == (EXIT_ERROR, "incomplete")
    assert matrix["missing"] == ["modelexpress@0.6.0", "modelexpress@0.7.0"]
    code, records = _gate(repo, allow_missing=True)
    assert (code, _matrix(records)["status"]) == (EXIT_COMPATIBLE, "passed")


def _widen_digest(s: dict[str, Any]) -> None:
    s["$defs"]["shard"]["properties"]["digest"]["pattern"] = "^([0-9a-f]{32}|[0-9a-f]{64})$"


def test_a_loosening_is_shown_to_the_released_readers_and_an_accepted_one_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _widen_digest))
    failing = run_gate(
        repo, "HEAD", registry=wire.default_registry(), matrix="always", examples=EXAMPLES, seed=3
    )
    assert failing.exit_code == EXIT_BREAKING and failing.matrix.status == "failed"
    rejected = [
        cell for cell in failing.matrix.failing if cell.startswith("candidate@1.3.0 -> reference@1.2.0")
    ]
    assert rejected and "DIGEST_FORMAT" in rejected[0]  # the old reader rejects the 64-hex form by its rule
    entries = [Accepted(i, f.change.rule, f.change.pointer, "64-hex digests", "issue-7", datetime.date(2999, 1, 1),
                        change=f.hash) for i, f in enumerate(failing.findings) if f.failing and f.witnesses]  # fmt: skip
    accepted = run_gate(
        repo, "HEAD", registry=wire.default_registry(), baseline=entries, examples=EXAMPLES, seed=3
    )
    assert accepted.exit_code == EXIT_COMPATIBLE, accepted.matrix
    assert accepted.matrix.status == "passed" and accepted.matrix.expected > 0


def test_a_new_major_runs_its_own_line(tmp_path: Path) -> None:
    def v2(s: dict[str, Any]) -> None:  # a break (64-hex digests only) under a new wire id
        s["$defs"]["shard"]["properties"]["digest"]["pattern"] = "^[0-9a-f]{64}$"
        s["properties"]["schema"]["const"] = s["x-wire-id"] = "mx.reshard.shard_table.v2"

    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/2.0.0.json", candidate("2.0.0", v2))
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), examples=EXAMPLES, seed=3)
    assert report.exit_code == EXIT_COMPATIBLE, report.matrix
    assert "candidate@2.0.0" in report.matrix.ran and report.matrix.expected > 0  # the 1.x cells, not counted
