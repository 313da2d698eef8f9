"""The spec-first promise end to end: a change to the schema files alone, and nothing else.

Each test is a throwaway checkout of the released schemas (``make_repo``) changed the way a
contributor would change it, then run through the library, ``refitwire validate``, the
matrix (with the released upstream readers) and the gate, with no code edited.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import candidate, make_repo, refitwire, write
from refitwire.compat.upstream import envs
from refitwire.gate import EXIT_COMPATIBLE

pytestmark = [pytest.mark.slow, pytest.mark.upstream]

RANK = {"description": "Rank of the publisher.", "type": "integer", "minimum": 0, "maximum": 2147483647,
        "x-added-in": "1.3.0"}  # fmt: skip
NUMA = {"description": "NUMA node of the shard's memory.", "type": "integer", "minimum": 0, "maximum": 255,
        "x-added-in": "1.3.0"}  # fmt: skip


@pytest.fixture(autouse=True)
def _upstream_built() -> None:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream envs {missing} not built under {envs.cache_dir()}")


def _env(**more: str) -> dict[str, str]:
    return {**os.environ, envs.ENV_VAR: str(envs.cache_dir()), **more}


def _gate(repo: Path) -> tuple[int, list[dict[str, Any]]]:
    argv = [sys.executable, "-m", "refitwire", "gate", "--against", "HEAD", "--format", "json"]
    done = subprocess.run([*argv, "--examples", "4", "--seed", "3"], cwd=repo, capture_output=True, text=True,
                          timeout=600, env=_env())  # fmt: skip
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def _matrix(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in records if r["type"] == "matrix")


def _add_members(repo: Path) -> None:
    """``refitwire schema new 1.3.0``, then an optional top-level integer and an optional shard member."""
    done = refitwire(repo, "schema", "new", "1.3.0")
    assert done.returncode == 0, done.stderr
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        if document == "rendezvous":
            schema["properties"]["publisher_rank"] = RANK
        schema["$defs"]["shard"]["properties"]["numa_node"] = NUMA
        write(path, schema)


LIBRARY = """
import json, sys
from refitwire import InvalidBlob, PublishedShard, PublishedTensor, to_decoded, unwrap_rendezvous_blob, wrap_rendezvous_blob
from refitwire import wire
shard = PublishedShard(agent_name="a", device_id=0, addr=4096, shard_offset=(0,), shape=(2,), numa_node=3)
table = [PublishedTensor(name="t", dtype="torch.float32", elsize=4, full_shape=(2,), shards=(shard,))]
new = wrap_rendezvous_blob(b"m", "a", "h:1", table, 7, spec_version="1.3.0", publisher_rank=5)
old = wrap_rendezvous_blob(b"m", "a", "h:1", table, 7, spec_version="1.2.0", publisher_rank=5)
read = unwrap_rendezvous_blob(new, spec_version="1.3.0")
counted = unwrap_rendezvous_blob(new, spec_version="1.3.0", with_tensors=False)
refused = {}
for bad in ("-1", "2147483648", "3.0", '"5"'):
    blob = new.replace(b'"publisher_rank": 5', b'"publisher_rank": ' + bad.encode())
    for with_tensors in (True, False):
        try:
            unwrap_rendezvous_blob(blob, spec_version="1.3.0", with_tensors=with_tensors)
        except InvalidBlob as exc:
            refused[f"{bad} {with_tensors}"] = [exc.rule, exc.pointer]
try:  # a table member's integer literal, too (the table pass sums every integer member)
    unwrap_rendezvous_blob(new.replace(b'"numa_node": 3', b'"numa_node": 3.0'), spec_version="1.3.0")
except InvalidBlob as exc:
    refused["numa_node 3.0"] = [exc.rule, exc.pointer]
json.dump({
    "new": new.decode(), "old": old.decode(), "rank": read.publisher_rank, "counted_rank": counted.publisher_rank,
    "numa": read.tensors[0].shards[0].numa_node, "decoded": to_decoded(read, "1.3.0"),
    "decoded_old": to_decoded(unwrap_rendezvous_blob(new, spec_version="1.2.0"), "1.2.0"), "refused": refused,
}, sys.stdout)
"""


def test_an_optional_member_is_one_schema_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _add_members(repo)
    schema_env = _env(REFITWIRE_SCHEMA_DIR=str(repo / "schema"))

    # The library writes and reads both members at 1.3.0 and leaves them out at 1.2.0.
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY], capture_output=True, text=True, env=schema_env, check=True
    )
    seen = json.loads(done.stdout)
    assert '"publisher_step": 7, "publisher_rank": 5}' in seen["new"] and '"numa_node": 3}' in seen["new"]
    assert "publisher_rank" not in seen["old"] and "numa_node" not in seen["old"]
    assert (seen["rank"], seen["counted_rank"], seen["numa"]) == (5, 5, 3)
    assert (
        seen["decoded"]["publisher_rank"] == 5
        and seen["decoded"]["tensors"][0]["shards"][0]["numa_node"] == 3
    )
    assert "publisher_rank" not in seen["decoded_old"]
    # Its bounds and INTEGER_LITERAL hold in the full read and in the count-only (quorum) read alike.
    assert len(seen["refused"]) == 9, seen["refused"]
    assert seen["refused"]["numa_node 3.0"] == ["INTEGER_LITERAL", "/tensors/0/shards/0/numa_node"]
    assert seen["refused"]["3.0 False"] == ["INTEGER_LITERAL", "/publisher_rank"]
    assert seen["refused"]['"5" True'] == ["TYPE", "/publisher_rank"]

    # `refitwire validate` knows the candidate version too.
    blob = tmp_path / "blob.json"
    blob.write_text(seen["new"], encoding="utf-8")
    validated = subprocess.run([sys.executable, "-m", "refitwire", "validate", str(blob)], capture_output=True,
                               text=True, env=schema_env)  # fmt: skip
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "conforms to 1.0.0, 1.1.0, 1.2.0, 1.3.0" in validated.stdout

    # The gate: the static check, then the matrix with every released reader, passes.
    code, records = _gate(repo)
    matrix = _matrix(records)
    assert (code, matrix["status"]) == (EXIT_COMPATIBLE, "passed"), matrix
    assert {"modelexpress@0.6.0", "modelexpress@0.7.0", "candidate@1.3.0"} <= set(matrix["ran"])


def test_payloads_carry_a_candidates_new_members(tmp_path: Path) -> None:
    """In-process: the candidate is the default registry with the checkout's new files, passed
    explicitly; nothing is registered, so no other test sees it."""
    from refitwire import wire
    from refitwire.compat.cases import _cases

    repo = make_repo(tmp_path)
    _add_members(repo)
    registry = wire.default_registry().with_candidates(repo / "schema")
    payloads = _cases.generated_payloads(3, 4, wire.default_registry())
    asked = [_cases.conform(p, "1.3.0", n, registry) for n, p in enumerate(payloads.values())]
    ranks = {p.get("publisher_rank") for p in asked}
    nodes = {s.get("numa_node") for p in asked for t in p["tensors"] for s in t["shards"]}
    assert {0, 2147483647, None} <= ranks and {0, 255} <= nodes  # its bounds, and its absence
    assert all(
        _cases.conform(p, "1.2.0", n, wire.default_registry()) is p for n, p in enumerate(payloads.values())
    )
    # ... and a writer of the candidate is asked to refuse each of them out of bounds or mistyped.
    from refitwire.compat.cases._built_cases import refusal_cases

    refusals = {c.description: c.rule for c in refusal_cases("1.3.0", registry)}
    assert refusals["/publisher_rank: -1, below its minimum 0"] == "SCHEMA"  # the schema names no rule for it
    assert refusals['/tensors/0/shards/0/numa_node: a JSON string ("7")'] == "TYPE"
    # each: both bounds, and seven wrong JSON values: five types (a null is an absent member in a
    # payload), a string and a boolean also as their falsy values ("", false)
    assert len(refusal_cases("1.3.0", registry)) == len(refusal_cases("1.2.0", wire.default_registry())) + 18
    assert "1.3.0" not in wire.default_registry().known_versions()  # the default registry is as it was


def test_a_member_made_required_passes_once_its_breaks_are_accepted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: s["required"].append("publisher_step")),
    )
    code, records = _gate(repo)
    assert code != EXIT_COMPATIBLE
    accepted = []
    for r in records:
        entry = (
            {k: r[k] for k in ("rule", "pointer", "change", "file")}
            if r["type"] == "finding" and r["breaking"]
            else None
        )
        if entry and entry not in accepted:
            accepted.append(entry)
    assert accepted
    baseline = {"accepted": [{**e, "reason": "the step becomes required", "link": "https://example.invalid/1",
                              "expires": "2099-01-01"} for e in accepted]}  # fmt: skip
    (repo / "schema" / "gate-baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
    code, records = _gate(repo)
    matrix = _matrix(records)
    # The candidate writes payloads that carry the now-required member; old readers still read them.
    assert (code, matrix["status"]) == (EXIT_COMPATIBLE, "passed"), matrix


@pytest.mark.parametrize("layout", ["moved", "inlined"])
def test_a_validation_equivalent_refactor_passes(tmp_path: Path, layout: str) -> None:
    def refactor(schema: dict[str, Any]) -> None:
        if layout == "moved":
            schema["$defs"]["box"] = schema["$defs"].pop("shard")
            schema["$defs"]["tensor"]["properties"]["shards"]["items"]["$ref"] = "#/$defs/box"
        else:
            tensor = schema["$defs"].pop("tensor")
            tensor["properties"]["shards"]["items"] = schema["$defs"].pop("shard")
            schema["properties"]["tensors"]["items"] = tensor
            del schema["$defs"]

    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", refactor))
    code, records = _gate(repo)
    assert (code, _matrix(records)["status"]) == (EXIT_COMPATIBLE, "passed"), _matrix(records)


def test_releasing_a_version_leaves_the_kit_working(tmp_path: Path) -> None:
    """After ``refitwire schema release``, every part still runs (no traceback), the new version
    is a released participant, and the frozen generation it lacks is said, not silently left out."""
    repo = make_repo(tmp_path)
    _add_members(repo)
    released = refitwire(repo, "schema", "release", "1.3.0")
    assert released.returncode == 0, released.stderr
    report = tmp_path / "matrix.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "refitwire", "matrix", "--no-upstream", "--examples", "3", "--seed", "2",
         "--format", "json", "--output", str(report)],
        capture_output=True, text=True, timeout=600, env=_env(REFITWIRE_SCHEMA_DIR=str(repo / "schema")),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    header = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert "reference@1.3.0" in {p["label"] for p in header["participants"]}
    assert any(line.startswith("generation@1.3.0") for line in header["unavailable"]), header["unavailable"]
