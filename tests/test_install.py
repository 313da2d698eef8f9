"""What `pip install refitwire` brings, and what a verb says when an extra is missing.

Runs in the full test environment (a missing kit is simulated by blocking its imports, the
way Python reports a module that is not installed) and in `tox -e bare`, where the kit is
really absent. Also checks that the dependency floors `tox -e floors` tests are the floors
pyproject.toml declares.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from refitwire.cli import install_hint, installed_from

ROOT = Path(__file__).resolve().parent.parent
KIT = ("hypothesis", "hypothesis_jsonschema", "jsonschema")
HEAVY = (*KIT, "torch", "nixl", "nixl_cu12", "redis")
BLOCK_KIT = f"import sys; sys.modules.update(dict.fromkeys({KIT!r})); "


def python(
    code: str, *args: str, cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd, input=stdin
    )


def refitwire_without_kit(
    *args: str, cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    code = BLOCK_KIT + "from refitwire.cli import main; sys.exit(main(sys.argv[1:]))"
    return python(code, *args, cwd=cwd, stdin=stdin)


def test_importing_the_package_and_the_command_pulls_no_extra() -> None:
    done = python(
        "import sys, refitwire, refitwire.cli; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


#: A valid blob with one tensor, so that each verb below does its whole job (exit 0).
BLOB = json.dumps({
    "schema": "mx.reshard.shard_table.v1", "agent_name": "a", "agent_meta_b64": "",
    "tensors": [{"name": "w", "dtype": "float32", "elsize": 4, "full_shape": [2], "shards": [
        {"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [2]},
    ]}],
})  # fmt: skip


@pytest.mark.parametrize(
    "verb",
    [["validate", "BLOB"], ["validate", "-"], ["decode", "-"], ["digest", "BLOB"], ["schema", "list"]],
    ids=lambda args: " ".join(args),
)
def test_the_codec_verbs_run_without_the_kit(verb: list[str], tmp_path: Path) -> None:
    (tmp_path / "BLOB").write_text(BLOB)
    done = refitwire_without_kit(*verb, cwd=tmp_path, stdin=BLOB)
    assert "Traceback" not in done.stderr and "refitwire[kit]" not in done.stderr, done.stderr
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.strip()


def breaking_schema_pair(tmp_path: Path) -> list[str]:
    """Two documents whose witness needs hypothesis (a string that matches one pattern only)."""
    old = json.loads((ROOT / "schema" / "rendezvous" / "1.2.0.json").read_text())
    new = copy.deepcopy(old)
    new["$defs"]["shard"]["properties"]["digest"]["pattern"] = "^[0-9a-f]{16}$"
    for name, document in (("old.json", old), ("new.json", new)):
        (tmp_path / name).write_text(json.dumps(document))
    return [str(tmp_path / "old.json"), str(tmp_path / "new.json")]


@pytest.mark.parametrize("verb", ["matrix", "conformance", "diff"])
def test_a_kit_verb_names_the_kit_extra_in_one_line(verb: str, tmp_path: Path) -> None:
    args = {"matrix": ["--no-upstream"], "conformance": ["--testee", "true"]}.get(verb)
    done = refitwire_without_kit(verb, *(args or breaking_schema_pair(tmp_path)), cwd=ROOT)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"refitwire {verb}: needs "), last
    assert last.endswith(install_hint("kit", installed_from())), last


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is new in Python 3.11")
def test_the_floors_tox_tests_are_the_declared_floors() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    declared += [r for extra in ("kit", "test") for r in project["optional-dependencies"][extra]]
    floors = {}
    for requirement in declared:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)(,[^;]*)?(;.*)?", requirement)
        assert match, f"{requirement!r} has no floor (>=)"
        floors[match[1].lower()] = _padded(match[2])
    pinned = {}
    for line in (ROOT / ".ci" / "floors.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pinned[name.strip().lower()] = _padded(version.strip())
    assert pinned == floors


def _padded(version: str) -> tuple[int, ...]:
    """2.6 and 2.6.0 are the same floor."""
    parts = [int(p) for p in version.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


@pytest.mark.parametrize("missing", ["tomllib", "msgspec", "referencing", "refitwire._gone"])
def test_a_missing_module_no_extra_brings_is_not_blamed_on_an_extra(missing: str) -> None:
    from refitwire.cli import _extra_for

    assert _extra_for("matrix", ImportError(name="hypothesis")).endswith(
        install_hint("kit", installed_from())
    )
    assert _extra_for("refit", ImportError("libcuda.so.1: cannot open")).endswith(
        install_hint("refit", installed_from())
    )
    with pytest.raises(ImportError):  # a broken install or a bug, shown as such
        _extra_for("matrix", ImportError(name=missing))


@pytest.mark.parametrize(
    ("origin", "hint"),
    [
        (
            {"url": "https://example.org/refitwire", "vcs_info": {"vcs": "git", "commit_id": "0a1b2c"}},
            "pip install 'refitwire[kit] @ git+https://example.org/refitwire@0a1b2c'",
        ),
        (
            {"url": "file:///src/refitwire", "dir_info": {"editable": True}},
            "pip install -e '/src/refitwire[kit]'",
        ),
        (
            {"url": "file:///gone/refitwire-0.1.0-py3-none-any.whl", "archive_info": {}},
            "install refitwire again with its kit extra (README.md, Install)",
        ),
        ({}, "install refitwire again with its kit extra (README.md, Install)"),
    ],
    ids=["pinned commit", "editable checkout", "wheel since removed", "no record"],
)
def test_the_missing_extra_is_added_from_where_refitwire_came_from(
    origin: dict[str, object], hint: str
) -> None:
    """No package index holds a release of refitwire: the hint never says ``pip install 'refitwire[kit]'``."""
    assert install_hint("kit", origin) == hint


def test_a_wheel_still_there_is_named_by_its_url(tmp_path: Path) -> None:
    wheel = tmp_path / "refitwire-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    assert install_hint("refit", {"url": wheel.as_uri(), "archive_info": {}}) == (
        f"pip install 'refitwire[refit] @ {wheel.as_uri()}'"
    )
