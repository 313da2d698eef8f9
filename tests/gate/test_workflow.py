"""The CI workflow: valid against the GitHub workflow schema, and wired the way docs/gate.md says."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from _gate_helpers import ROOT
from _support import check_workflow_schema

WORKFLOW = ROOT / ".github/workflows/wire-gate.yml"


def _workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def test_the_workflow_passes_the_workflow_schema() -> None:
    check_workflow_schema(WORKFLOW)


def test_it_triggers_on_everything_that_can_change_a_verdict() -> None:
    paths = set(_workflow()[True]["pull_request"]["paths"])  # YAML 1.1 reads the key "on" as True
    assert {"schema/**", "reference/**", "compat/**", "gate/**", "cli/**", "pyproject.toml"} <= paths
    assert ".github/workflows/wire-gate.yml" in paths


def test_the_base_branch_gate_judges_with_the_released_readers() -> None:
    steps = _workflow()["jobs"]["gate"]["steps"]
    text = "\n".join(str(s.get("run", "")) for s in steps)
    assert 'git worktree add --detach .gate-base "origin/$BASE_REF"' in text
    # with the kit extra: without it the gate verb exits naming the extra, and a candidate testee cannot start
    assert '"$RUNNER_TEMP/gate/bin/pip" install "./.gate-base[kit]"' in text
    assert '"$RUNNER_TEMP/candidate/bin/pip" install ".[kit]"' in text
    assert '"$RUNNER_TEMP/gate/bin/refitwire" gate' in text and "--testee" in text
    [cache] = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache")]
    assert "hashFiles('.gate-base/compat/upstream/envs.py')" in cache["with"]["key"]
    assert any("refitwire.compat.upstream.envs" in str(s.get("run", "")) for s in steps)


def test_the_verdict_runs_even_when_the_sarif_upload_fails() -> None:
    steps = _workflow()["jobs"]["gate"]["steps"]
    [upload] = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif")]
    assert upload["continue-on-error"] is True
    [verdict] = [s for s in steps if s.get("name") == "Verdict"]
    assert verdict["if"] == "always()" and "exit 100" in verdict["run"]


def test_the_documented_baseline_path_is_the_default() -> None:
    from refitwire.cli.gate import DEFAULT_BASELINE

    assert DEFAULT_BASELINE in WORKFLOW.read_text(encoding="utf-8")
    assert DEFAULT_BASELINE in (ROOT / "docs/gate.md").read_text(encoding="utf-8")


def test_the_pre_commit_hooks_install_the_kit_extra() -> None:
    """pre-commit installs the package without extras; the gate verb needs the kit's modules."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+ (CI runs 3.11)
    kit = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["kit"]
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert {h["id"] for h in hooks} == {"refitwire-gate", "refitwire-gate-static"}
    for hook in hooks:
        assert hook["additional_dependencies"] == kit, hook["id"]
