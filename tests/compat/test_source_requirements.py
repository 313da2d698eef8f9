"""A source tree's environment holds what the tree adds to its release's dependencies, and no more.

A pull request that makes ``rendezvous.py`` import a new package (``orjson``) declares it; the
tree's environment must hold it, or the testee dies at import and the run checks nothing. The
release's own heavy dependencies (model streamers, cloud SDKs) must stay out. No network: the
trees are written here, and the release's declaration is given, or read from a fake released
environment, with pip standing in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from refitwire.compat.upstream import _dependencies, envs
from refitwire.compat.upstream._dependencies import base_release, released_requires
from refitwire.compat.upstream._errors import DependenciesUnknown
from refitwire.compat.upstream.source import SourceWarning, locate

RELEASED = ("0.6.0", "0.7.0")
#: What modelexpress 0.7.0 declares (its PKG-INFO), extras included.
RELEASE_0_7_0 = (
    "grpcio>=1.66.2",
    "google-crc32c>=1.5.0",
    "huggingface_hub>=0.20.0",
    "numpy>=1.24.0",
    "protobuf<7.0.0,>=5.27.2",
    "pydantic>=2.0.0",
    "torch>=2.6.0",
    'runai-model-streamer[azure,gcs,s3]; sys_platform == "linux"',
    'instanttensor>=0.1.9; sys_platform == "linux"',
    "boto3>=1.35.2",
    "zstandard>=0.22.0",
    "safetensors>=0.8.0",
    "s3transfer>=0.10.0",
    'pytest>=7.0.0; extra == "dev"',
    'cuda-python>=12.4; extra == "vmm"',
)
#: The recipe with the release's own specifiers: what a tree that adds nothing gets.
RECIPE_0_7_0 = ("grpcio>=1.66.2", "protobuf<7.0.0,>=5.27.2", "huggingface_hub>=0.20.0", "numpy>=1.24.0")


def _sdist(where: Path, requires: Sequence[str], version: str = "0.7.0", name: str = "tree") -> Path:
    tree = where / name / f"modelexpress-{version}"
    (tree / "modelexpress/refit/reshard").mkdir(parents=True)
    (tree / "modelexpress/refit/reshard/rendezvous.py").write_text(f"# {name}\n")
    lines = [f"Requires-Dist: {line}" for line in requires]
    (tree / "PKG-INFO").write_text(
        "\n".join(["Metadata-Version: 2.1", "Name: modelexpress", f"Version: {version}", *lines]) + "\n"
    )
    return tree


def _release(asked: list[str]) -> Callable[[str], Sequence[str]]:
    def declared_by(version: str) -> Sequence[str]:
        asked.append(version)
        return {"0.7.0": RELEASE_0_7_0, "0.6.0": RELEASE_0_7_0[:9]}[version]

    return declared_by


def test_what_the_pull_request_adds_is_installed_and_the_releases_own_are_not(tmp_path: Path) -> None:
    asked: list[str] = []
    tree = locate(_sdist(tmp_path, [*RELEASE_0_7_0, "orjson>=3.9"]), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=_release(asked))  # fmt: skip
    assert asked == ["0.7.0"]
    assert tree.added == ("orjson>=3.9",)
    assert tree.requirements == (*RECIPE_0_7_0, "orjson>=3.9")


def test_a_checkout_is_compared_with_the_release_it_descends_from(tmp_path: Path) -> None:
    client = tmp_path / "repo" / "modelexpress_client/python"
    (client / "modelexpress/refit/reshard").mkdir(parents=True)
    (client / "modelexpress/refit/reshard/rendezvous.py").write_text("# the wire\n")
    deps = ", ".join(json.dumps(line) for line in [*RELEASE_0_7_0, "orjson>=3.9"])
    (client / "pyproject.toml").write_text(
        f'[project]\nname = "modelexpress"\nversion = "0.8.0.dev0"\ndependencies = [{deps}]\n'
    )
    asked: list[str] = []
    tree = locate(tmp_path / "repo", envs.IMPORT_REQUIREMENTS, RELEASED, declared_by=_release(asked))
    assert asked == ["0.7.0"] and tree.added == ("orjson>=3.9",)


def test_extras_and_markers_that_do_not_hold_here_add_nothing(tmp_path: Path) -> None:
    pytest.importorskip("packaging.markers")
    adds = [
        'ujson>=5; extra == "fast"',
        'simplejson; python_version < "3"',
        'orjson>=3.9; python_version >= "3"',
    ]
    tree = locate(_sdist(tmp_path, [*RELEASE_0_7_0, *adds]), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=_release([]))  # fmt: skip
    assert tree.added == ("orjson>=3.9",)  # the marker held here: pip is given the plain line


def test_without_packaging_an_extra_is_dropped_and_other_markers_are_left_to_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "packaging.markers", None)  # importing it raises ImportError
    adds = ['ujson>=5; extra == "fast"', 'simplejson; python_version < "3"', "orjson>=3.9"]
    tree = locate(_sdist(tmp_path, [*RELEASE_0_7_0, *adds]), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=_release([]))  # fmt: skip
    assert tree.added == ('simplejson; python_version < "3"', "orjson>=3.9")


def test_the_recipe_and_torch_are_never_added_and_names_are_compared_canonically(tmp_path: Path) -> None:
    declared = ["Huggingface-Hub>=0.30", "torch>=2.7", "Zstandard>=0.23", "orjson>=3.9"]
    tree = locate(_sdist(tmp_path, declared), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=lambda _v: [*RELEASE_0_7_0, "orjson"])  # fmt: skip
    assert tree.added == ()  # the tree's own specifiers: zstandard and orjson are the release's already
    assert tree.requirements == (
        "grpcio>=1.66.2",
        "protobuf>=5.27.2,<7",
        "Huggingface-Hub>=0.30",
        "numpy>=1.24",
    )


def test_a_tree_that_adds_nothing_asks_nothing_and_keeps_its_environment(tmp_path: Path) -> None:
    def never(version: str) -> Sequence[str]:
        raise AssertionError(f"asked what {version} declares")

    bare = locate(
        _sdist(tmp_path, ["grpcio>=1.70", "torch>=2.6"]),
        envs.IMPORT_REQUIREMENTS,
        RELEASED,
        declared_by=never,
    )
    assert bare.added == () and bare.requirements[0] == "grpcio>=1.70"
    same = locate(_sdist(tmp_path, RELEASE_0_7_0, name="same"), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=lambda _v: RELEASE_0_7_0)  # fmt: skip
    assert envs.source_key(same.requirements) == envs.source_key(RECIPE_0_7_0)


def test_the_same_additions_share_an_environment_and_new_ones_get_their_own(tmp_path: Path) -> None:
    def key(name: str, *adds: str) -> str:
        tree = locate(_sdist(tmp_path, [*RELEASE_0_7_0, *adds], name=name), envs.IMPORT_REQUIREMENTS, RELEASED,
                      declared_by=lambda _v: RELEASE_0_7_0)  # fmt: skip
        return envs.source_key(tree.requirements)

    assert key("one", "orjson>=3.9") == key("two", "orjson>=3.9") != key("three") != key("four", "ujson")


def _released_env(envs_dir: Path, version: str, requires: Sequence[str]) -> None:
    info = envs_dir / f"modelexpress-{version}/lib/python3.11/site-packages/modelexpress-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [f"Requires-Dist: {line}" for line in requires]
    (info / "METADATA").write_text(
        "\n".join(["Metadata-Version: 2.1", "Name: modelexpress", f"Version: {version}", *lines]) + "\n"
    )


def _offline(version: str) -> tuple[str, ...]:
    raise DependenciesUnknown(f"no index reachable for modelexpress=={version}")


def test_by_default_the_release_declaration_is_read_from_its_released_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(envs.ENV_VAR, str(tmp_path / "envs"))
    _released_env(tmp_path / "envs", "0.7.0", RELEASE_0_7_0)
    _released_env(tmp_path / "envs", "0.6.0", RELEASE_0_7_0[:9])  # not the base: boto3 would be added
    monkeypatch.setattr(_dependencies, "_from_pip", _offline)
    tree = locate(_sdist(tmp_path, [*RELEASE_0_7_0, "orjson>=3.9"]), envs.IMPORT_REQUIREMENTS, RELEASED)
    assert tree.added == ("orjson>=3.9",)


def test_without_the_releases_declaration_it_says_so_and_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(envs.ENV_VAR, str(tmp_path / "no-envs"))
    monkeypatch.setattr(_dependencies, "_from_pip", _offline)
    said: list[str] = []
    tree = locate(
        _sdist(tmp_path, [*RELEASE_0_7_0, "orjson>=3.9"]), envs.IMPORT_REQUIREMENTS, RELEASED, log=said.append
    )
    assert tree.added == () and tree.requirements == RECIPE_0_7_0
    [line] = said
    assert "release 0.7.0" in line and "no index reachable" in line and str(tmp_path / "no-envs") in line
    assert "python -m refitwire.compat.upstream.envs --versions 0.7.0" in line
    with pytest.warns(SourceWarning, match="recipe alone"):
        locate(_sdist(tmp_path, ["orjson>=3.9"], name="again"), envs.IMPORT_REQUIREMENTS, RELEASED)


def test_a_tree_older_than_every_release_adds_nothing_and_says_why(tmp_path: Path) -> None:
    said: list[str] = []
    tree = locate(_sdist(tmp_path, ["orjson>=3.9"], version="0.5.0"), envs.IMPORT_REQUIREMENTS, RELEASED,
                  declared_by=lambda _v: (), log=said.append)  # fmt: skip
    assert tree.added == () and said and "no release it descends from" in said[0] and "orjson" in said[0]


@pytest.mark.parametrize(
    ("version", "base"),
    [("0.8.0.dev0", "0.7.0"), ("0.7.0", "0.7.0"), ("0.7.0.post1", "0.7.0"), ("0.7.0rc1", "0.6.0"),
     ("0.6.5", "0.6.0"), ("1.0", "0.7.0"), ("0.5.0", None), ("not-a-version", None)],
)  # fmt: skip
def test_the_release_a_version_descends_from(version: str, base: str | None) -> None:
    assert base_release(version, RELEASED) == base


def test_pip_says_what_a_release_declares_when_no_environment_holds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[list[str]] = []
    report = {
        "install": [
            {"metadata": {"name": "modelexpress", "version": "0.7.0", "requires_dist": list(RELEASE_0_7_0)}}
        ]
    }

    def run(argv: list[str], **_kw: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, json.dumps(report), "")

    monkeypatch.setattr(subprocess, "run", run)
    assert released_requires("0.7.0", []) == RELEASE_0_7_0
    assert "--dry-run" in ran[0] and "--no-deps" in ran[0] and ran[0][-1] == "modelexpress==0.7.0"

    def offline(argv: list[str], **_kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(
            argv, 1, "", "WARNING: retrying\nERROR: No matching distribution found\n"
        )

    monkeypatch.setattr(subprocess, "run", offline)
    with pytest.raises(
        DependenciesUnknown, match=r"not installed in no environment folder, .*No matching distribution"
    ):
        released_requires("0.7.0", [])


def test_the_cli_is_told_what_the_environment_adds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def ensure(spec: object, *_a: object, **_kw: object) -> envs.EnvInfo:
        return envs.EnvInfo("src", tmp_path / "python", built=False, seconds=0.0)

    monkeypatch.setattr(envs, "_ensure", ensure)
    said: list[str] = []
    envs.ensure_source_env((*RECIPE_0_7_0, "orjson>=3.9"), tmp_path, log=said.append)
    assert len(said) == 1 and said[0].endswith("what it adds to its release: orjson>=3.9")
    envs.ensure_source_env(RECIPE_0_7_0, tmp_path, log=said.append)
    assert len(said) == 1  # nothing added, nothing said
