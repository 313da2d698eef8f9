"""A ModelExpress source tree as a participant, judged against its base (--upstream-src, --baseline-report).

The tree is the released ``modelexpress`` 0.7.0 sdist, fetched through the package registry
(``pip download --no-binary :all:``) into a per-user cache, unpacked, and patched here the
way a pull request would change ``rendezvous.py`` or ``verify.py``. Each patched copy runs
``refitwire conformance --upstream-src`` beside the released 0.6.0 and 0.7.0 with the
unmodified tree's report as the base, and must be reported as what it is, at its tier.

Needs the released upstream environments (skips, never builds them, when one is missing);
builds the source tree's own environment (about 15 s from a warm pip cache) when missing.
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
from refitwire.compat.report import _delta
from refitwire.compat.report._report import Report, read_report
from refitwire.compat.upstream import envs
from refitwire.compat.upstream.source import locate

pytestmark = [pytest.mark.upstream, pytest.mark.slow, pytest.mark.xdist_group("upstream-source")]

SDIST_VERSION = "0.7.0"
SEED, EXAMPLES = 5, 10
RENDEZVOUS = "modelexpress/refit/reshard/rendezvous.py"
VERIFY = "modelexpress/refit/reshard/verify.py"

#: name -> (file, text in the released file, its replacement): each is one small pull request.
PATCHES = {
    "null-step": (
        RENDEZVOUS,
        '    if publisher_step is not None:\n        payload["publisher_step"] = int(publisher_step)\n',
        '    payload["publisher_step"] = None if publisher_step is None else int(publisher_step)\n',
    ),
    "absent-step-as-zero": (
        RENDEZVOUS,
        '    raw_step = payload.get("publisher_step")\n',
        '    raw_step = payload.get("publisher_step", 0)\n',
    ),
    "new-digest": (
        VERIFY,
        "    h = hashlib.blake2b(digest_size=16)\n",
        '    h = hashlib.blake2b(digest_size=16, person=b"v2")\n',
    ),
    "sorted-keys": (
        RENDEZVOUS,
        '        payload["publisher_step"] = int(publisher_step)\n    return json.dumps(payload).encode("utf-8")\n',
        '        payload["publisher_step"] = int(publisher_step)\n    return json.dumps(payload, sort_keys=True).encode("utf-8")\n',
    ),
    "refactor": (
        RENDEZVOUS,
        '    raw_step = payload.get("publisher_step")\n    publisher_step = None if raw_step is None else int(raw_step)\n',
        '    stamp = payload.get("publisher_step")\n    publisher_step = int(stamp) if stamp is not None else None\n',
    ),
}


def _sdist_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "refitwire" / "sdists"


@pytest.fixture(scope="module")
def released_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream environments not built: {missing} (python -m refitwire.compat.upstream.envs)")
    cache = _sdist_cache()
    archive = cache / f"modelexpress-{SDIST_VERSION}.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest", str(cache),
             f"modelexpress=={SDIST_VERSION}"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0 and archive.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    into = tmp_path_factory.mktemp("sdist")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"modelexpress-{SDIST_VERSION}"


def _copy(tree: Path, where: Path, patch: str | None) -> Path:
    copy = where / "modelexpress-src"
    shutil.copytree(tree, copy)
    if patch is not None:
        file, old, new = PATCHES[patch]
        text = (copy / file).read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{patch}: the released {file} no longer has the patched text"
        (copy / file).write_text(text.replace(old, new), encoding="utf-8")
    return copy


def _conformance(tree: Path, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Report]:
    argv = [sys.executable, "-m", "refitwire", "conformance", "--upstream-src", str(tree), "--seed", str(SEED),
            "--examples", str(EXAMPLES), "--no-size-limit", "--output", str(out), *extra]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return done, read_report(out)


@pytest.fixture(scope="module")
def base(released_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("base")
    done, _ = _conformance(_copy(released_tree, where, None), where / "base.jsonl")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return where / "base.jsonl"


def test_the_tree_runs_as_itself_beside_the_released_versions(released_tree: Path, base: Path) -> None:
    report = read_report(base)
    tree = locate(released_tree, envs.IMPORT_REQUIREMENTS)
    assert tree.version.startswith(f"{SDIST_VERSION}+nogit.") and tree.origin == "no git: content hash"
    who = {p["label"]: p for p in report.header.participants}
    assert who[tree.label]["kind"] == "upstream-source" and who[tree.label]["version"] == tree.version
    assert {"modelexpress@0.6.0", "modelexpress@0.7.0"} <= set(who)
    # The released package's expected failures are not matched by the name the tree gives itself.
    assert not any(r.outcome.value == "xfailed" for r in report.results if tree.label in (r.writer, r.reader))
    digests = [r for r in report.results if r.case.startswith("digest:")]
    assert digests and all(r.outcome.value == "passed" for r in digests)


def test_a_patched_tree_gets_a_label_of_its_own(released_tree: Path, tmp_path: Path) -> None:
    unchanged = locate(released_tree, envs.IMPORT_REQUIREMENTS)
    patched = locate(_copy(released_tree, tmp_path, "refactor"), envs.IMPORT_REQUIREMENTS)
    assert patched.version != unchanged.version and patched.version.startswith(f"{SDIST_VERSION}+nogit.")


@pytest.mark.parametrize(
    ("patch", "required", "recommended"),
    [
        (None, set(), set()),
        ("refactor", set(), set()),
        ("null-step", {"wrote a blob breaking WRITE_OMIT_ABSENT"}, None),
        ("absent-step-as-zero", {"/publisher_step"}, None),
        ("new-digest", {"digest differs"}, None),
        ("sorted-keys", set(), {"bytes differ"}),
    ],
    ids=["unmodified", "refactor", "null-step", "absent-step-as-zero", "new-digest", "sorted-keys"],
)
def test_only_what_the_patch_adds_is_reported_at_its_tier(
    released_tree: Path,
    base: Path,
    tmp_path: Path,
    patch: str | None,
    required: set[str],
    recommended: set[str] | None,
) -> None:
    done, report = _conformance(_copy(released_tree, tmp_path, patch), tmp_path / "head.jsonl",
                                "--baseline-report", str(base))  # fmt: skip
    delta = _delta.compare(report, read_report(base))
    said = done.stdout[-3000:] + done.stderr[-3000:]
    new_required = {r.symptom for r in delta.new_required}
    assert all(any(want in s for s in new_required) for want in required), (new_required, said)
    if not required:
        assert not new_required, (new_required, said)
        assert done.returncode == 0, said
    else:
        assert done.returncode == 1 and "AGAINST BASE FAILED" in done.stdout, said
    new_recommended = {r.symptom for r in delta.new_recommended}
    if recommended is not None:
        assert all(any(want in s for s in new_recommended) for want in recommended), (new_recommended, said)
        if not recommended:
            assert not new_recommended, (new_recommended, said)
    assert delta.known, "the released code's own failures are shown apart, not as new"
    assert json.loads(base.read_text().splitlines()[0])["seed"] == SEED
