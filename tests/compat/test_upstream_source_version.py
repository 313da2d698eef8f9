"""What a ModelExpress source tree is called: its real version, not a pyproject that lags the releases."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from refitwire.compat.upstream.source import CLIENT_ROOT, locate


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A ModelExpress-shaped repository whose client pyproject still says 0.5.0, with v0.7.0 tagged."""
    client = tmp_path / "repo" / CLIENT_ROOT
    (client / "modelexpress/refit/reshard").mkdir(parents=True)
    (client / "modelexpress/refit/reshard/rendezvous.py").write_text("# the wire\n")
    (client / "pyproject.toml").write_text('[project]\nname = "modelexpress"\nversion = "0.5.0"\n')
    repo = tmp_path / "repo"
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "release")
    _git(repo, "tag", "v0.7.0")
    return repo


def test_a_checkout_past_a_release_tag_is_the_next_versions_development(checkout: Path) -> None:
    (checkout / CLIENT_ROOT / "modelexpress/refit/reshard/rendezvous.py").write_text("# the wire, changed\n")
    _git(checkout, "commit", "-qam", "a pull request")
    tree = locate(checkout, ())
    commit = _git(checkout, "rev-parse", "--short=8", "HEAD")
    assert tree.version == f"0.8.0.dev0+g{commit}" and tree.label == f"modelexpress@0.8.0.dev0+g{commit}"


def test_a_checkout_on_its_release_tag_is_that_release(checkout: Path) -> None:
    assert locate(checkout, ()).version.startswith("0.7.0+g")


def test_without_tags_the_released_versions_say_how_far_it_is(checkout: Path) -> None:
    _git(checkout, "tag", "-d", "v0.7.0")
    assert locate(checkout, (), released=("0.6.0", "0.7.0")).version.startswith("0.8.0.dev0+g")
    assert locate(checkout, ()).version.startswith("0.5.0+g")  # nothing says otherwise: as declared


def test_an_unpacked_sdist_is_what_it_declares(tmp_path: Path) -> None:
    tree = tmp_path / "modelexpress-0.7.0"
    (tree / "modelexpress/refit/reshard").mkdir(parents=True)
    (tree / "modelexpress/refit/reshard/rendezvous.py").write_text("# the wire\n")
    (tree / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: modelexpress\nVersion: 0.7.0\n")
    assert locate(tree, (), released=("0.6.0", "0.7.0")).version.startswith("0.7.0+nogit.")
