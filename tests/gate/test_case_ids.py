"""Case IDs survive evolution: the contributor's route, in a throwaway copy of the checkout.

Through the documented commands only (docs/wire-model.md, "Adding an optional member"):
``refitwire schema new 1.3.0 --schema-dir schema``, an optional member added at the top level
and one in the shard, ``python tools/regenerate.py``. No case ID that existed before may
change (the vectors' reads, count-only reads and golden writes, the refusals, the merges, the
digests, the size cases, the generated payloads of a seed): every list keyed by them
(``compat/expected-failures/``) stays true, so the copy's own expected-failure tests pass and
``regenerate --check`` passes; and it fails once a list names an ID no case has.

When IDs were hashes of the payload, the same route changed 3,401 of them (2,819 reads, 511
count-only reads, 38 golden writes, all 33 merges), and the frozen generations' listed
failures turned into unlisted ones.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from refitwire.compat.upstream import envs

pytestmark = [pytest.mark.slow, pytest.mark.upstream]

ROOT = Path(__file__).resolve().parents[2]
RANK = {"description": "Rank of the publisher.", "type": "integer", "minimum": 0, "maximum": 2147483647,
        "x-rule": "RANK_RANGE", "x-added-in": "1.3.0"}  # fmt: skip
NUMA = {"description": "NUMA node of the shard's memory.", "type": "integer", "minimum": 0, "maximum": 255,
        "x-rule": "NUMA_RANGE", "x-added-in": "1.3.0"}  # fmt: skip
#: the rules the two members state (a member's keywords past its type name one: docs/wire-model.md)
SPEC_ROWS = (
    "| `RANK_RANGE` | (1.3.0) `publisher_rank`, when present, MUST be an integer in [0, 2^31). | `/publisher_rank` |",
    "| `NUMA_RANGE` | (1.3.0) `numa_node`, when present, MUST be an integer in [0, 255]. | `/tensors/i/shards/j/numa_node` |",
)  # fmt: skip
#: Every case ID of the copy, by kind (read/count/write/refuse/merge/size from the expected-failure
#: index, then the digests and a seed's generated payloads), each with what it says it tests.
IDS = """
import json, sys
sys.path.insert(0, "tools")
import _clone  # noqa: F401  (this copy's packages)
from refitwire import wire
from refitwire.compat.runner import _expected
from refitwire.compat.cases import _cases, _digest
registry = wire.default_registry()
found = {}
for case in _expected.known_cases(registry):
    found.setdefault(case.split(":")[0], []).append(case)
found["digest"] = [f"digest:{d.id}" for d in _digest.digest_cases()]
found["gen"] = list(_cases.generated_payloads(5, 40, registry))
json.dump(found, sys.stdout)
"""


@pytest.fixture(autouse=True)
def _upstream_built() -> None:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream envs {missing} not built under {envs.cache_dir()}")


def _copy_checkout(tmp: Path) -> Path:
    """The checkout's tracked files (what a clone holds), without its git history."""
    repo = tmp / "repo"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    return repo


def _run(repo: Path, *argv: str, timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, envs.ENV_VAR: str(envs.cache_dir())}
    env.pop("REFITWIRE_SCHEMA_DIR", None)  # the copy's own schema/, as the tools read it
    return subprocess.run([sys.executable, *argv], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=timeout)  # fmt: skip


def _ids(repo: Path) -> dict[str, list[str]]:
    done = _run(repo, "-c", IDS)
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def evolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = _copy_checkout(tmp_path_factory.mktemp("ids"))
    before = _ids(repo)
    done = _run(repo, "-m", "refitwire", "schema", "new", "1.3.0", "--schema-dir", "schema")
    assert done.returncode == 0, done.stderr
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        if document == "rendezvous":
            schema["properties"]["publisher_rank"] = RANK
        schema["$defs"]["shard"]["properties"]["numa_node"] = NUMA
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    spec = repo / "schema" / "SPEC.md"
    text = spec.read_text(encoding="utf-8")
    step = next(line for line in text.splitlines() if line.startswith("| `STEP_RANGE` |"))
    spec.write_text(text.replace(step, "\n".join((step, *SPEC_ROWS))), encoding="utf-8")
    done = _run(repo, "tools/regenerate.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"repo": repo, "before": before, "after": _ids(repo)}


def test_adding_members_changes_no_existing_case_id(evolved: dict[str, Any]) -> None:
    before, after = evolved["before"], evolved["after"]
    # a golden write of an older version goes with its blob, which now holds the new member
    # (the 1.2.0 writer no longer writes it): that is a case gone, not renamed; its vector stays
    vectors_after = {case.split(":")[1].split("#")[0] for case in after["read"]}
    assert {case.split(":")[1].split("@")[0] for case in before["write"]} <= vectors_after
    before = {kind: ids for kind, ids in before.items() if kind != "write"}
    changed = {kind: sorted(set(ids) - set(after.get(kind, []))) for kind, ids in before.items()}
    print("case IDs changed by adding two members:", {k: len(v) for k, v in changed.items()})
    assert not any(changed.values()), {k: v[:5] for k, v in changed.items() if v}
    assert {"read", "count", "refuse", "merge", "size", "digest", "gen"} <= set(before)
    assert all(before[kind] for kind in ("read", "refuse", "gen"))
    # the members were seen: the vectors gained cases about them (the route did something)
    vectors = [v for f in ("invalid.json", "legal-forms.json")
               for v in json.loads((evolved["repo"] / "schema" / "vectors" / f).read_text())["vectors"]]  # fmt: skip
    tags = {t for v in vectors for t in v["tags"]}
    assert {"member:/publisher_rank", "member:/tensors/shards/numa_node"} <= tags
    assert len(after["read"]) > len(before["read"])


def test_the_copys_lists_and_checks_still_hold(evolved: dict[str, Any]) -> None:
    repo = evolved["repo"]
    done = _run(repo, "tools/regenerate.py", "--check")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the copy's own tests, importing the copy's packages (tools/_clone.py), as its CI would; in
    # this process (xdist's workers, the default, would import the installed package instead)
    tests = ["tests/compat/test_expected_failures.py", "tests/test_generations.py"]
    # (not test_writer_bytes: it asks a frozen generation to write at the candidate 1.3.0, which
    # none is; the reads are what the listed failures are about)
    argv = [
        *tests,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-m",
        "not slow",
        "-k",
        "not test_writer_bytes",
    ]
    pytest_in_copy = (
        f'import sys; sys.path.insert(0, "tools"); import _clone, pytest; sys.exit(pytest.main({argv!r}))'
    )
    done = _run(repo, "-c", pytest_in_copy, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_check_fails_on_a_stale_entry(evolved: dict[str, Any]) -> None:
    repo = evolved["repo"]
    path = repo / "compat" / "expected-failures" / "generations.json"
    kept = path.read_text(encoding="utf-8")
    data = json.loads(kept)
    data["expected_failures"].append({**data["expected_failures"][0], "case": "read:v-000000000000#rule"})
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    try:
        done = _run(repo, "tools/regenerate.py", "--check")
    finally:
        path.write_text(kept, encoding="utf-8")
    assert done.returncode == 1
    assert "read:v-000000000000#rule (reader): no case has this ID" in done.stderr, done.stderr[-2000:]
