"""Start-up on a busy machine, where the released envs live, the schema folder of a pip-installed
kit, and the gate run from an implementation's repository (no schema folder of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from refitwire import wire
from refitwire.compat.upstream import _locations, envs
from refitwire.gate import Rule

REFERENCE = f"{sys.executable} -m refitwire.compat.testees.reference"


def _refitwire(*argv: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)  # fmt: skip


def test_envs_default_to_a_per_user_cache_outside_refitwire(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(envs.ENV_VAR, raising=False)
    monkeypatch.setattr(_locations, "_checkout_root", lambda: None)  # installed from a wheel
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = tmp_path / "someone-elses-repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    assert envs.cache_dirs() == [tmp_path / "cache" / "refitwire" / "compat-envs"]


def test_envs_may_be_looked_for_in_several_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(envs.ENV_VAR, f"{tmp_path / 'mine'}:{tmp_path / 'shared'}")
    assert envs.cache_dirs() == [tmp_path / "mine", tmp_path / "shared"]
    assert envs.cache_dir() == tmp_path / "mine"


@pytest.mark.slow
def test_a_slow_start_is_given_its_own_time_and_a_run_that_checked_nothing_says_why() -> None:
    slow = f"sh -c 'sleep 3; exec {REFERENCE}'"
    common = (
        "conformance",
        "--testee",
        slow,
        "--no-upstream",
        "--examples",
        "2",
        "--no-size-limit",
        "--seed",
        "1",
    )
    missed = _refitwire(*common, "--startup-timeout", "1")
    assert missed.returncode == 1, missed.stdout[-2000:] + missed.stderr[-2000:]
    assert "the run checked nothing: " in missed.stderr and "participant(s) did not start" in missed.stderr
    assert "testee: sh: no reply within 1 s" in missed.stderr
    started = _refitwire(*common)  # the default start-up timeout is apart from --timeout's 10 s per request
    assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]


def test_a_pip_installed_kit_exports_its_schema_folder_to_scaffold_in(tmp_path: Path) -> None:
    folder = tmp_path / "schema"
    done = _refitwire("schema", "export", str(folder))
    assert done.returncode == 0, done.stderr
    index = json.loads((folder / "index.json").read_text())
    for entries in index["documents"].values():
        assert all((folder / e["path"]).is_file() for e in entries)
    assert _refitwire("schema", "new", "1.3.0", "--schema-dir", str(folder)).returncode == 0
    assert (folder / "rendezvous" / "1.3.0.json").is_file()
    again = _refitwire("schema", "export", str(folder))
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "not an empty folder" in again.stderr


def test_an_undeclared_member_is_told_to_declare_a_spec_version() -> None:
    from refitwire.compat.runner._checks import written_problem

    blob = json.dumps({
        "schema": "mx.reshard.shard_table.v1", "agent_name": "a", "metadata_endpoint": "h:1",
        "agent_meta_b64": "", "tensors": [], "publisher_step": 1, "generation": 3,
    }).encode()  # fmt: skip
    problem = written_problem(blob, "1.2.0", wire.default_registry(), {})
    assert problem is not None and problem[0] == "wrote a blob breaking WRITE_KNOWN_MEMBERS"
    assert "declare a new spec version" in problem[1] and "refitwire schema new VERSION" in problem[1]


@pytest.mark.upstream
@pytest.mark.slow
def test_the_gate_runs_from_an_implementations_repository(tmp_path: Path) -> None:
    """A repository with no schema folder: the kit's packaged schemas, the implementation under
    test judged in the matrix, a break filed against it (not schema/index.json), and a rerun
    hint that keeps --testee."""
    repo = tmp_path / "implementation"
    repo.mkdir()
    # the implementation's own testee, correct at the base; the pull request makes it write a null step
    faulty = Path(__file__).with_name("faulty_testee.py")
    (repo / "testee.py").write_text(
        "import pathlib, runpy, sys\n"
        f"sys.path.insert(0, {str(faulty.parent)!r})\n"
        f"sys.argv = [{str(faulty)!r}, pathlib.Path(__file__).with_name('mode.txt').read_text().strip()]\n"
        f"runpy.run_path({str(faulty)!r}, run_name='__main__')\n"
    )
    (repo / "mode.txt").write_text("none\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "mode.txt").write_text("writes-null-step\n")
    broken = f"{sys.executable} testee.py"
    done = _refitwire("gate", "--format", "json", "--testee", broken, "--examples", "3", "--seed", "2",
                      "--no-witness", "--allow-missing-readers", cwd=repo)  # fmt: skip
    assert "no schema index" not in done.stderr, done.stderr
    assert done.returncode == 100, done.stdout[-3000:] + done.stderr[-3000:]
    text = done.stdout
    assert Rule.MATRIX_DISAGREES in text and "the schemas did not change" in text, text[-3000:]
    assert "schema/index.json" not in text, text[-3000:]
    assert f"--testee {broken}" in text  # filed against the implementation
    assert "--only-under-test" in text and f"--testee {broken}" in text  # the rerun hint keeps --testee


@pytest.mark.upstream
@pytest.mark.slow
def test_a_testee_that_starts_neither_at_the_base_nor_in_the_change_is_an_error(tmp_path: Path) -> None:
    """Nothing was judged on either side: the gate errs (exit 1) instead of calling the change
    compatible because the base failed the same way."""
    repo = tmp_path / "implementation"
    repo.mkdir()
    (repo / "testee.py").write_text("import sys\nsys.exit(3)\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=repo, check=True)
    done = _refitwire("gate", "--testee", f"{sys.executable} testee.py", "--examples", "2", "--seed", "2",
                      "--no-witness", "--allow-missing-readers", cwd=repo)  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "did not start in the change" in done.stdout, done.stdout[-3000:]
