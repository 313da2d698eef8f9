"""`refitwire gate --upstream-src .` in a ModelExpress-shaped repository judges only what a pull
request adds against its base (the merge base with main), as a maintainer runs it.

The repository is the released 0.7.0 sdist committed on ``main``; each pull request is a clone
with one patch committed on a branch, so every test shares one base commit (the base's report
is made once, then read from the kit's cache). The tree has failures of long standing
(Recommended ones every release tolerates): an untouched tree must not be charged with them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_upstream_source import PATCHES, RENDEZVOUS, released_tree  # noqa: F401  (the cached sdist fixture)

pytestmark = [pytest.mark.upstream, pytest.mark.slow, pytest.mark.xdist_group("upstream-source")]

SEED, EXAMPLES = "5", "10"
PACKAGE = "modelexpress_client/python"
#: A pull request that writes the step as a string: a released reader refuses its blobs (TYPE).
STRING_STEP = (
    RENDEZVOUS,
    '        payload["publisher_step"] = int(publisher_step)\n',
    '        payload["publisher_step"] = str(int(publisher_step))\n',
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)  # fmt: skip


@pytest.fixture(scope="module")
def origin(released_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    repo = tmp_path_factory.mktemp("modelexpress") / "origin"
    shutil.copytree(released_tree, repo / PACKAGE)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the released 0.7.0")
    return repo


def _pull_request(origin: Path, where: Path, patch: tuple[str, str, str] | None) -> Path:
    repo = where / "pull-request"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    _git(repo, "checkout", "-q", "-b", "pull-request")
    if patch is not None:
        file, old, new = patch
        target = repo / PACKAGE / file
        text = target.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"the released {file} no longer has the patched text"
        target.write_text(text.replace(old, new), encoding="utf-8")
        _git(repo, "commit", "-q", "-am", "the pull request")
    return repo


def _gate(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "refitwire", "gate", "--upstream-src", ".", "--seed", SEED,
            "--examples", EXAMPLES, *extra]  # fmt: skip
    return subprocess.run(
        argv, cwd=repo, capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("patch", [None, "refactor"])
def test_an_untouched_tree_and_a_refactor_are_compatible(
    origin: Path, tmp_path: Path, patch: str | None
) -> None:
    repo = _pull_request(origin, tmp_path, PATCHES[patch] if patch else None)
    done = _gate(repo)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "judged against the base merge-base(HEAD, origin/main)" in done.stdout, said
    assert "the change adds no Required failure" in done.stdout, said
    assert "failure(s) the base has too are not counted" in done.stdout, said


def test_a_step_written_as_a_string_is_breaking_and_named(origin: Path, tmp_path: Path) -> None:
    repo = _pull_request(origin, tmp_path, STRING_STEP)
    done = _gate(
        repo, "--also", f"json={tmp_path / 'gate.jsonl'}", "--also", f"sarif={tmp_path / 'gate.sarif'}"
    )
    said = done.stdout + done.stderr
    assert done.returncode == 100, said
    assert "BREAKING MATRIX_DISAGREES" in done.stdout and "TYPE" in done.stdout, said
    # in plain words: the cell, the direction, and the case to rerun alone
    assert "NEW required x" in done.stdout and "(the change)" in done.stdout, said
    assert f"refitwire matrix --only-under-test --seed {SEED} --examples {EXAMPLES}" in done.stdout, said
    lines = [json.loads(line) for line in (tmp_path / "gate.jsonl").read_text().splitlines()]
    [matrix] = [line for line in lines if line["type"] == "matrix"]
    new = [g for g in matrix["against_base"] if g["kind"] == "new" and g["tier"] == "required"]
    assert new and any("TYPE" in g["cause"] for g in new), matrix["against_base"]
    sarif = json.loads((tmp_path / "gate.sarif").read_text())["runs"][0]
    assert any("TYPE" in g["cause"] for g in sarif["properties"]["againstBase"])
    assert sarif["invocations"][0]["exitCode"] == 100


def test_a_null_step_is_breaking_and_named(origin: Path, tmp_path: Path) -> None:
    repo = _pull_request(origin, tmp_path, PATCHES["null-step"])
    done = _gate(repo)
    said = done.stdout + done.stderr
    assert done.returncode == 100, said
    assert "WRITE_OMIT_ABSENT" in done.stdout, said


def test_without_a_base_it_says_so_and_judges_the_required_tier_only(
    released_tree: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    tree = tmp_path / "no-git"
    shutil.copytree(released_tree, tree / PACKAGE)  # an unpacked tree: no git, so no base
    done = _gate(tree)
    said = done.stdout + done.stderr
    assert "no base to compare with" in done.stdout and "judged on the Required tier only" in done.stdout, (
        said
    )
    assert done.returncode == 0, said  # its Recommended failures are shown, not charged
    assert "not counted: with no base to compare with, only Required failures count" in done.stdout, said


def test_a_tree_its_base_does_not_have_is_judged_on_the_required_tier_only(
    released_tree: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A pull request that adds the tree: the base has nothing to run, so the change's run (made
    beside the base's attempt) is judged alone, on the Required tier, saying why."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("the tree comes in a pull request\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "no tree yet")
    _git(repo, "checkout", "-q", "-b", "pull-request")
    shutil.copytree(released_tree, repo / PACKAGE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the tree")
    argv = [sys.executable, "-m", "refitwire", "gate", "--upstream-src", PACKAGE, "--seed", SEED,
            "--examples", EXAMPLES]  # fmt: skip
    done = subprocess.run(
        argv, cwd=repo, capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL
    )
    said = done.stdout + done.stderr
    assert f"no base to compare with (--upstream-src {PACKAGE} does not exist at the base)" in done.stdout, (
        said
    )
    assert done.returncode == 0, said  # its Recommended failures are shown, not charged
    assert "not counted: with no base to compare with, only Required failures count" in done.stdout, said
