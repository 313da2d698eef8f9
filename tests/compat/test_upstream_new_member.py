"""A ModelExpress pull request that adds a member, the way docs/upstream-ci.md says, on the released sdist.

The released 0.7.0 sdist is unpacked and patched as a pull request would patch it: the writer
takes a new optional ``digest_algorithm`` and writes it when the caller gives one, the reader
returns it. Declared the documented way (``refitwire schema export``, ``schema new 1.3.0``,
the member added, ``--schema-dir``), the tree declares 1.3.0, is handed the member and reads
it back, and passes. The same member written without a version that declares it fails
``WRITE_KNOWN_MEMBERS``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from refitwire.compat._report import read_report
from refitwire.compat.upstream import envs

pytestmark = [pytest.mark.upstream, pytest.mark.slow, pytest.mark.xdist_group("upstream-source")]

SDIST_VERSION = "0.7.0"
RENDEZVOUS = "modelexpress/refit/reshard/rendezvous.py"
MEMBER = {"type": "string", "pattern": "^[a-z0-9-]{1,32}$", "x-added-in": "1.3.0",
          "description": "The digest function of the shards' digests."}  # fmt: skip


def _patch(default: str) -> list[tuple[str, str]]:
    """(released text, replacement) of the pull request; ``default``: what the writer writes unasked."""
    return [
        ("    publisher_step: int | None = None,\n) -> bytes:",
         f"    publisher_step: int | None = None,\n    digest_algorithm: str | None = {default},\n) -> bytes:"),
        ('        payload["publisher_step"] = int(publisher_step)\n',
         '        payload["publisher_step"] = int(publisher_step)\n    if digest_algorithm is not None:\n'
         '        payload["digest_algorithm"] = str(digest_algorithm)\n'),
        ("    tensor_count: int | None = None\n", "    tensor_count: int | None = None\n    digest_algorithm: str | None = None\n"),
        ("        len(entries),\n    )", '        len(entries),\n        payload.get("digest_algorithm"),\n    )'),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def released_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream environments not built: {missing} (python -m refitwire.compat.upstream.envs)")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "refitwire" / "sdists"
    archive = cache / f"modelexpress-{SDIST_VERSION}.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest",
                        str(cache), f"modelexpress=={SDIST_VERSION}"], capture_output=True, timeout=600, check=True)  # fmt: skip
    into = tmp_path_factory.mktemp("sdist")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"modelexpress-{SDIST_VERSION}"


def _tree(released: Path, where: Path, default: str) -> Path:
    tree = where / "modelexpress-src"
    shutil.copytree(released, tree)
    path = tree / RENDEZVOUS
    text = path.read_text(encoding="utf-8")
    for old, new in _patch(default):
        assert text.count(old) == 1, f"the released {RENDEZVOUS} no longer has {old!r}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return tree


def _refitwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, stdin=subprocess.DEVNULL)  # fmt: skip


def _conformance(tree: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _refitwire("conformance", "--upstream-src", str(tree), "--seed", "5", "--examples", "5",
                      "--no-size-limit", "--output", str(out), *extra, cwd=tree.parent)  # fmt: skip


def test_a_member_added_the_documented_way_is_written_read_back_and_passes(
    released_tree: Path, tmp_path: Path
) -> None:
    tree = _tree(released_tree, tmp_path, "None")  # written when the caller gives one
    assert _refitwire("schema", "export", "wire-schema", cwd=tmp_path).returncode == 0
    assert _refitwire("schema", "new", "1.3.0", "--schema-dir", "wire-schema", cwd=tmp_path).returncode == 0
    schema = tmp_path / "wire-schema" / "rendezvous" / "1.3.0.json"
    document = json.loads(schema.read_text(encoding="utf-8"))
    document["properties"]["digest_algorithm"] = MEMBER
    schema.write_text(json.dumps(document, indent=2), encoding="utf-8")
    done = _conformance(tree, tmp_path / "r.jsonl", "--schema-dir", str(tmp_path / "wire-schema"))
    said = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, said
    report = read_report(tmp_path / "r.jsonl")
    [me] = [p for p in report.header.participants if p["kind"] == "upstream-source"]
    assert me["spec_version"] == "1.3.0" and me["label"].startswith(f"modelexpress@{SDIST_VERSION}+nogit.")
    assert "--member" in me["command"] and ":digest_algorithm" in " ".join(me["command"])
    mine = [r for r in report.results if me["label"] in (r.writer, r.reader) and r.tier == "required"]
    assert mine and not [r for r in mine if r.outcome.value in ("failed", "errored")], said


def test_the_same_member_undeclared_fails_naming_the_rule(released_tree: Path, tmp_path: Path) -> None:
    tree = _tree(released_tree, tmp_path, '"blake2b-128"')  # written on every blob
    done = _conformance(tree, tmp_path / "r.jsonl")
    assert done.returncode == 1, done.stdout[-3000:]
    report = read_report(tmp_path / "r.jsonl")
    failed = [r for r in report.results if r.tier == "required" and r.outcome.value == "failed"]
    assert failed and all(
        "WRITE_KNOWN_MEMBERS" in r.message or "digest_algorithm" in r.message for r in failed
    )
    assert any("--upstream-spec-version" in r.message for r in failed), (
        "the hint names what this route offers"
    )
