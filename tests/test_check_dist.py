"""tools/check_dist.py (``tox -e dist``): the parts that need no build. Every page, workflow and
template installs refitwire from a pinned commit or a built wheel, never from a package index
(none holds a release); README.md marks the blocks the check runs; a wheel that lacks a tracked
file, holds another's bytes or an untracked file is named. The build and the installs themselves
run in ``tox -e dist``."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import tools_module

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def check_dist() -> Iterator[Any]:
    yield from tools_module("check_dist")


def test_no_page_workflow_or_template_installs_refitwire_from_an_index(check_dist: Any) -> None:
    documents = check_dist.install_documents()
    names = {str(path.relative_to(ROOT)) for path in documents}
    assert {"README.md", "docs/upstream-ci.md", "docs/upstream-ci/modelexpress-wire.yml",
            "compat/IMPLEMENTERS.md", "compat/testees/templates/README.md"} <= names  # fmt: skip
    found = {str(path.relative_to(ROOT)): check_dist.index_installs(path.read_text(encoding="utf-8", errors="replace"))
             for path in documents}  # fmt: skip
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize(
    ("line", "named"),
    [
        # the lines the issue found: README.md, docs/upstream-ci.md and the workflow before the fix
        ("pip install 'refitwire[kit]'       # adds matrix", "refitwire[kit]"),
        (
            '          "$KIT/bin/pip" install "refitwire[kit]==$REFITWIRE_VERSION"',
            "refitwire[kit]==$REFITWIRE_VERSION",
        ),
        ("pip install refitwire              # the codec", "refitwire"),
        ("python3 -m pip install tox refitwire==0.1.0", "refitwire==0.1.0"),
        ("`pip install 'refitwire[refit]'`", "refitwire[refit]"),
        ("pipx install refitwire", "refitwire"),
    ],
)
def test_an_install_from_the_index_is_found(check_dist: Any, line: str, named: str) -> None:
    assert check_dist.index_installs(f"text\n{line}\n") == [(2, named)]


@pytest.mark.parametrize(
    "line",
    [
        'pip install "refitwire[kit] @ git+$REFITWIRE_REPO@$REFITWIRE_REF"   # the commit you pin',
        "pip install 'refitwire[kit] @\ngit+URL@COMMIT'",  # a quoted direct reference wrapped in prose
        "pip install dist/refitwire-*.whl",
        'pip install "$(echo dist/refitwire-*.whl)[kit]"',
        '"$KIT/bin/pip" install "./.refitwire-kit[kit]"',
        "pip install -e '.[kit,test]'",
        "python3 -m pip install tox && tox -e matrix",
    ],
)
def test_a_pinned_commit_a_wheel_or_a_path_is_not(check_dist: Any, line: str) -> None:
    assert check_dist.index_installs(line) == []


def test_readme_marks_the_blocks_the_check_runs(check_dist: Any) -> None:
    blocks = check_dist.readme_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(blocks) == {"install", "pinned-commit", "quickstart"}
    assert "python -m build" in blocks["install"] and "dist/refitwire-*.whl" in blocks["install"]
    assert "git+$REFITWIRE_REPO@$REFITWIRE_REF" in blocks["pinned-commit"]
    assert blocks["quickstart"].lstrip().startswith("refitwire ")


def test_the_packaged_files_are_every_tracked_file_of_the_package_folders(check_dist: Any) -> None:
    wanted = check_dist.packaged_files()
    assert wanted["refitwire/schema/SPEC.md"] == ROOT / "schema" / "SPEC.md"
    assert wanted["refitwire/compat/IMPLEMENTERS.md"] == ROOT / "compat" / "IMPLEMENTERS.md"
    assert wanted["refitwire/refit/__init__.py"] == ROOT / "reference" / "refit" / "__init__.py"
    assert any(name.startswith("refitwire/schema/vectors/") for name in wanted)
    assert any(name.startswith("refitwire/compat/testees/templates/rust/") for name in wanted)
    assert not any("__pycache__" in name or name.startswith("tests/") for name in wanted)


def _wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("refitwire-0.1.0.dist-info/RECORD", "")
    return path


def test_a_wheel_is_held_to_the_tracked_files_byte_for_byte(check_dist: Any, tmp_path: Path) -> None:
    spec, index = tmp_path / "SPEC.md", tmp_path / "index.json"
    spec.write_text("spec")
    index.write_text("{}")
    wanted = {"refitwire/schema/SPEC.md": spec, "refitwire/schema/index.json": index}
    whole = _wheel(
        tmp_path / "whole.whl", {"refitwire/schema/SPEC.md": b"spec", "refitwire/schema/index.json": b"{}"}
    )
    assert check_dist.wheel_problems(whole, wanted) == []
    short = _wheel(tmp_path / "short.whl", {"refitwire/schema/SPEC.md": b"spec"})
    assert check_dist.wheel_problems(short, wanted) == ["missing from the wheel: refitwire/schema/index.json"]
    other = _wheel(tmp_path / "other.whl", {"refitwire/schema/SPEC.md": b"old", "refitwire/schema/index.json": b"{}",
                                            "refitwire/stale.py": b""})  # fmt: skip
    assert check_dist.wheel_problems(other, wanted) == [
        "differs from the checkout's file: refitwire/schema/SPEC.md",
        "in the wheel, tracked by no package folder: refitwire/stale.py",
    ]
