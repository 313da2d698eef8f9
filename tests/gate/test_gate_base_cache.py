"""The key of a base's cached report names everything the report depends on, and nothing else.

A base's report is reused by every pull request of that base (``gate-bases`` in the kit's
cache); a key that missed an input would hand a pull request another run's report to compare
with, and one that held a path of the checkout would never be reused.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from refitwire.gate._base import Base, UnderTest, cache_key, elided, find_base


def _key(root: Path, schemas: Path, commit: str = "a" * 40, seed: int = 5, examples: int = 50,
         testees: tuple[str, ...] = ()) -> str:  # fmt: skip
    under = UnderTest(testees, root / "modelexpress_client/python", root)
    return cache_key(Base("merge-base(HEAD, main)", commit, root), under, seed, examples, None, schemas)


def test_the_key_changes_with_each_input_and_only_with_them(tmp_path: Path) -> None:
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "index.json").write_text("{}")
    one, other = tmp_path / "one", tmp_path / "other"
    key = _key(one, schemas)
    assert key == _key(one, schemas)
    assert key == _key(other, schemas), "the same tree checked out elsewhere is the same base"
    assert key != _key(one, schemas, commit="b" * 40)
    assert key != _key(one, schemas, seed=6)
    assert key != _key(one, schemas, examples=51)
    assert key != _key(one, schemas, testees=("python testee.py",))
    (schemas / "index.json").write_text('{"documents": {}}')
    assert key != _key(one, schemas), "another set of schemas is another base report"


def test_without_git_or_a_main_branch_there_is_no_base_and_it_says_why(tmp_path: Path) -> None:
    outside = tmp_path / "no-git"
    outside.mkdir()
    assert find_base(outside, None) == f"{outside} is not in a git repository"
    if shutil.which("git") is None:
        return
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "feature"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True)
    found = find_base(repo, None)
    assert isinstance(found, str) and "no main branch found" in found
    assert isinstance(find_base(repo, "HEAD"), Base)


def test_a_long_reason_is_elided_in_the_middle_and_says_how_much() -> None:
    text = "start " + "x" * 5000 + " the key line"
    shown = elided(text)
    assert shown.startswith("start ") and shown.endswith(" the key line")
    assert f"({len(text) - 2000} characters left out)" in shown
    assert elided("short reason") == "short reason"
