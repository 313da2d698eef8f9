"""``refitwire cache``: every cache the kit writes is listed with its size, and ``prune`` removes
only what the kit made. Each test points the caches at its own folder (``$XDG_CACHE_HOME``,
``$REFITWIRE_ENVS``): none reads or removes the real ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from refitwire.cli import main
from refitwire.compat import _caches
from refitwire.compat._cache import cache_home
from refitwire.compat.upstream._build_steps import build_lock
from refitwire.compat.upstream._locations import cache_dirs


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache home and an environment folder of this test's own, each holding every kind of entry."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REFITWIRE_ENVS", str(tmp_path / "envs"))
    assert cache_home() == tmp_path / "xdg" / "refitwire"
    assert cache_dirs() == [(tmp_path / "envs").resolve()]
    kit = cache_home()
    _file(kit / "size-cases" / "k1" / "realistic-67108864.json", 300_000)
    _file(kit / "patterns" / "abc.json", 10)
    _file(kit / "hypothesis" / "unicode_data" / "x", 5_000)
    _file(kit / "sdists" / "modelexpress-0.7.0.tar.gz", 20_000)
    _file(kit / "gate-bases" / "0123456789ab-0123456789abcdef.jsonl", 3_000)
    _file(kit / "left-by-an-older-kit" / "x", 100)
    envs = tmp_path / "envs"
    _file(envs / "modelexpress-0.6.0" / "bin" / "python", 400_000)
    _file(envs / "modelexpress-src-0123abcd" / "pyvenv.cfg", 100)
    _file(envs / "modelexpress-0.7.0.failed.log", 100)
    _file(envs / ".modelexpress-0.7.0.tmp-q1w2e3" / "half", 100)
    _file(envs / ".modelexpress-0.6.0.lock", 0)
    _file(envs / "notes.txt", 7)  # the user's own, in a folder $REFITWIRE_ENVS names
    _file(envs / "another-venv" / "pyvenv.cfg", 7)
    return tmp_path


def _file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(os.urandom(size))


def _listed(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["cache", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    return {entry["name"]: entry for entry in shown["caches"]} | {"": {"bytes": shown["bytes"]}}


def _everything(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_every_cache_is_listed_with_its_size_on_disk(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = _listed(capsys)
    assert list(listed) == [
        "size-cases",
        "patterns",
        "hypothesis",
        "sdists",
        "gate-bases",
        "compat-envs",
        "left-by-an-older-kit",
        "",
    ]
    assert listed["compat-envs"]["folders"] == [str((home / "envs").resolve())]
    assert sorted(Path(str(e)).name for e in listed["compat-envs"]["entries"]) == [  # type: ignore[union-attr]
        ".modelexpress-0.7.0.tmp-q1w2e3",
        "modelexpress-0.6.0",
        "modelexpress-0.7.0.failed.log",
        "modelexpress-src-0123abcd",
    ]
    sizes = {name: int(str(entry["bytes"])) for name, entry in listed.items()}
    # allocated blocks, as du counts them: at least the bytes written, never a whole extra MiB
    for name, written in [("size-cases", 300_000), ("compat-envs", 400_300), ("sdists", 20_000),
                          ("gate-bases", 3_000)]:  # fmt: skip
        assert written <= sizes[name] < written + 2**20, name
    assert sizes[""] == sum(size for name, size in sizes.items() if name)
    assert main(["cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "size-cases" and lines[0].split()[2] == "KiB"
    assert str(home / "xdg" / "refitwire" / "size-cases") in lines[0]
    assert lines[-1].startswith("total ")


def test_a_file_linked_twice_is_counted_once(tmp_path: Path) -> None:
    _file(tmp_path / "a", 100_000)
    os.link(tmp_path / "a", tmp_path / "b")
    assert _caches.disk_size([tmp_path / "a"]) == _caches.disk_size([tmp_path / "a", tmp_path / "b"])
    assert _caches.disk_size([tmp_path]) < 2 * 100_000


def test_prune_by_name_removes_that_cache_alone(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _everything(home)
    assert main(["cache", "prune", "size-cases"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("removed 1 entry, ")
    assert _everything(home) == {p for p in before if not p.startswith("xdg/refitwire/size-cases")}


def test_prune_all_removes_only_what_the_kit_made(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "prune", "--all"]) == 0
    assert _everything(home) == {
        "xdg", "xdg/refitwire", "envs", "envs/.modelexpress-0.6.0.lock", "envs/notes.txt",
        "envs/another-venv", "envs/another-venv/pyvenv.cfg",
    }  # fmt: skip
    assert {name: entry["bytes"] for name, entry in _listed(capsys).items()} == dict.fromkeys(
        ["size-cases", "patterns", "hypothesis", "sdists", "gate-bases", "compat-envs", ""], 0
    )


def test_a_dry_run_removes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _everything(home)
    assert main(["cache", "prune", "--all", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert _everything(home) == before
    assert f"would remove {home / 'xdg' / 'refitwire' / 'size-cases'}" in out
    assert out[-1].startswith("would remove 10 entries, ")


def test_an_environment_being_built_is_left_and_said_so(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    envs = (home / "envs").resolve()
    with build_lock(envs, "0.6.0"):  # another builder: flock conflicts across open files
        assert main(["cache", "prune", "compat-envs"]) == 1
    captured = capsys.readouterr()
    assert f"kept {envs / 'modelexpress-0.6.0'}: being built by another process" in captured.err
    assert (envs / "modelexpress-0.6.0" / "bin" / "python").exists()
    assert not (envs / "modelexpress-src-0123abcd").exists()
    assert main(["cache", "prune", "compat-envs"]) == 0  # the lock released: it goes
    assert not (envs / "modelexpress-0.6.0").exists()


def test_a_cache_that_is_a_link_is_removed_as_a_link(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    _file(elsewhere / "keep-me", 10)
    link = cache_home() / "patterns"
    for child in link.iterdir():
        child.unlink()
    link.rmdir()
    link.symlink_to(elsewhere, target_is_directory=True)
    assert main(["cache", "prune", "patterns"]) == 0
    assert not link.is_symlink() and (elsewhere / "keep-me").exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["prune"], "name the caches to remove, or give --all"),
        (["prune", "nothing-such"], "no cache named nothing-such"),
        (["prune", "--all", "patterns"], "give --all or names, not both"),
    ],
)
def test_a_prune_that_names_nothing_known_is_a_usage_error(
    home: Path, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _everything(home)
    with pytest.raises(SystemExit) as exited:
        main(["cache", *argv])
    assert exited.value.code == 2
    assert says in capsys.readouterr().err
    assert _everything(home) == before
