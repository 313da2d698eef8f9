"""docs/upstream-ci/modelexpress-wire.yml: valid against the GitHub workflow schema, and its steps,
run here on a ModelExpress-shaped repository made from the released sdist, judge a pull request
against its base branch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _support import check_workflow_schema
from test_upstream_source import PATCHES, released_tree  # noqa: F401  (the cached sdist fixture)

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs/upstream-ci/modelexpress-wire.yml"
STEPS_RUN_HERE = ("The pull request against its base",)


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["wire"][
        "steps"
    ]
    return steps


def test_the_workflow_passes_the_workflow_schema() -> None:
    check_workflow_schema(WORKFLOW)


def test_it_fails_only_on_what_the_pull_request_adds() -> None:
    text = "\n".join(str(s.get("run", "")) for s in _steps())
    # the gate against the merge base: it makes (and caches) the base's report itself
    assert '"$KIT/bin/refitwire" gate --upstream-src . --against "$base"' in text
    assert 'base=$(git merge-base HEAD "origin/$BASE_REF")' in text
    assert "--baseline-report" not in text and "worktree" not in text
    assert '"$KIT/bin/python" -m refitwire.compat.upstream.envs' in text
    cached = [
        str(s.get("with", {}).get("path"))
        for s in _steps()
        if str(s.get("uses", "")).startswith("actions/cache")
    ]
    assert "~/.cache/refitwire/gate-bases" in cached
    [verdict] = [s for s in _steps() if s.get("name") == "Verdict"]
    assert verdict["if"] == "always()"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)  # fmt: skip


@pytest.mark.upstream
@pytest.mark.slow
def test_its_steps_judge_a_pull_request_here(released_tree: Path, tmp_path: Path) -> None:  # noqa: F811
    origin = tmp_path / "origin"
    shutil.copytree(released_tree, origin / "modelexpress_client/python")
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "base")
    repo = tmp_path / "pull-request"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    file, old, new = PATCHES["null-step"]
    target = repo / "modelexpress_client/python" / file
    target.write_text(target.read_text().replace(old, new))
    _git(repo, "commit", "-q", "-am", "write a null step")
    outputs = tmp_path / "github-output"
    env = {**os.environ, "KIT": sys.prefix, "BASE_REF": "main", "SEED": "1", "EXAMPLES": "5",
           "GITHUB_OUTPUT": str(outputs)}  # fmt: skip
    for step in (s for s in _steps() if s.get("name") in STEPS_RUN_HERE):
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, (step["name"], done.stdout[-3000:], done.stderr[-3000:])
    said = (repo / "reports/gate.txt").read_text()
    assert outputs.read_text().strip() == "code=100", said
    assert "BREAKING MATRIX_DISAGREES" in said and "wrote a blob breaking WRITE_OMIT_ABSENT" in said
    assert "modelexpress@0.7.0+g" in said  # labelled by the pull request's commit
    assert '"type": "footer"' in (repo / "reports/gate.jsonl").read_text().splitlines()[-1]
    assert (
        json.loads((repo / "reports/gate.sarif").read_text())["runs"][0]["invocations"][0]["exitCode"] == 100
    )
