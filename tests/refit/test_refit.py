"""End to end: real publisher processes, real NIXL reads, real verdicts.

Two publisher processes (the ``tiny`` model) serve every test in this module;
receivers run in the test process with their own NIXL agents and a sharding
different from the publishers'. Each test publishes its own steps.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refitwire.refit._errors import NixlMissing

# NIXL raises a plain ImportError when missing; pytest 9 skips only on ModuleNotFoundError unless told.
_nixl = pytest.importorskip(
    "refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing
)
torch = pytest.importorskip("torch")

from _fleet import MODEL, PUBLISHERS, Publishers, make_receiver  # noqa: E402
from refitwire import wrap_rendezvous_blob  # noqa: E402
from refitwire.refit import (  # noqa: E402
    DirectoryStore,
    DiscoveryTimeout,
    Policy,
    TableRejected,
    TransferFailed,
    Verdict,
)
from refitwire.refit._model import truth  # noqa: E402
from refitwire.refit._publisher import HOSTILE  # noqa: E402
from refitwire.refit._receiver import Receiver, StepResult, same_bytes  # noqa: E402

pytestmark = pytest.mark.nixl

_steps = itertools.count(1)


@pytest.fixture(scope="module")
def receivers(pubs: Publishers) -> Iterator[list[Receiver]]:
    rs = [make_receiver(pubs.store, r) for r in range(2)]
    yield rs
    for r in rs:
        r.close()


def installed(pubs: Publishers, receivers: list[Receiver]) -> int:
    """Publish a clean step and install it everywhere; return the step."""
    step = next(_steps)
    pubs.publish(step)
    for r in receivers:
        result = r.refit(step)
        assert result.installed, result.error or result.verdicts
    return step


def snapshot(r: Receiver) -> tuple[int | None, dict[str, torch.Tensor]]:
    return r.step, {k: v.clone() for k, v in r.weights.items()}


def untouched(r: Receiver, before: tuple[int | None, dict[str, torch.Tensor]]) -> bool:
    step, weights = before
    return (
        r.step == step
        and r.weights.keys() == weights.keys()
        and all(same_bytes(r.weights[k], weights[k]) for k in weights)
    )


def test_two_receivers_with_different_shardings_reconstruct_every_tensor(
    pubs: Publishers, receivers: list[Receiver]
) -> None:
    step = installed(pubs, receivers)
    for spec in MODEL:
        full = torch.zeros(spec.full_shape, dtype=spec.torch_dtype)
        covered = torch.zeros(spec.full_shape, dtype=torch.bool)
        for r in receivers:
            (offset, shape) = r.need[spec.name]
            where = tuple(slice(o, o + n) for o, n in zip(offset, shape, strict=True))
            full[where] = r.weights[spec.name]
            covered[where] = True
        assert bool(covered.all()), spec.name
        assert same_bytes(full, truth(spec, step)), spec.name
    # ... from boxes that are not the publishers' boxes.
    assert receivers[0].need != MODEL.publisher_boxes(0, PUBLISHERS)


def test_a_receiver_reports_its_bytes_and_the_exact_plan(pubs: Publishers, receivers: list[Receiver]) -> None:
    step = next(_steps)
    pubs.publish(step)
    result = receivers[0].refit(step)
    assert result.installed and {v.verdict for v in result.verdicts} == {Verdict.VERIFIED}
    # Whole shards are pulled to verify them: at least what the box needs, and counted exactly.
    need = sum(math.prod(shape) * MODEL[n].elsize for n, (_, shape) in receivers[0].need.items())
    assert result.exact_bytes == need
    assert result.wire_bytes >= need and result.wire_bytes == sum(
        math.prod(v.shape) * MODEL[v.tensor].elsize for v in result.verdicts
    )
    assert result.transfer_s > 0 and result.bytes_per_s > 0


EXPECTED = {
    "stale": Verdict.STALE,
    "corrupt": Verdict.CORRUPT,
    "no-digest": Verdict.UNCHECKED,
    "no-stamp": Verdict.UNKNOWN_STEP,
}


@pytest.mark.parametrize("inject", list(EXPECTED))
def test_each_injection_gets_its_verdict_and_installs_nothing(
    pubs: Publishers, receivers: list[Receiver], inject: str
) -> None:
    installed(pubs, receivers)
    before = [snapshot(r) for r in receivers]
    step = next(_steps)
    pubs.publish(step, inject, rank=1)
    for r, prior in zip(receivers, before, strict=True):
        result = r.refit(step)
        assert result.error is None and not result.installed
        assert result.weights_step == prior[0]
        bad = [v for v in result.verdicts if v.verdict is not Verdict.VERIFIED]
        assert bad and {v.verdict for v in bad} == {EXPECTED[inject]}
        assert {v.agent for v in bad} == {pubs.agents[1]}  # only the misbehaving rank
        if inject == "corrupt":  # one flipped byte in one shard
            assert [v.tensor for v in bad] == ["lm_head.bias"]
            assert bad[0].actual_digest != bad[0].published_digest
        assert untouched(r, prior)
        assert r.matches_truth()


def test_unchecked_installs_when_the_policy_accepts_it(pubs: Publishers) -> None:
    r = make_receiver(pubs.store, 0, policy=Policy(accept_unchecked=True))
    try:
        step = next(_steps)
        pubs.publish(step, "no-digest")
        result = r.refit(step)
        assert result.installed and Verdict.UNCHECKED in {v.verdict for v in result.verdicts}
        assert r.step == step and r.matches_truth()
    finally:
        r.close()


HOSTILE_RULES = {
    "overlap": "PLAN_SHARD_OVERLAP",
    "out-of-bounds": "BOX_IN_BOUNDS",
    "rank-mismatch": "RANK_AGREEMENT",
    "gap": "PLAN_COVERAGE_GAP",
    "disagree": "MERGE_CONSISTENT",
    "foreign-agent": "SHARD_AGENT",
    "unregistered-addr": "ADDR_UNREGISTERED",
}


def no_reads(r: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a read was posted for a table that should have been rejected")

    for entry in ("read_many", "post_read", "repost"):  # every way a read gets posted
        monkeypatch.setattr(r.agent, entry, refuse)


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_tables_are_rejected_before_any_transfer(
    pubs: Publishers, receivers: list[Receiver], kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert set(HOSTILE_RULES) == set(HOSTILE)
    installed(pubs, receivers)
    before = snapshot(receivers[0])
    step = next(_steps)
    pubs.publish(step, kind, rank=1)
    no_reads(receivers[0], monkeypatch)
    result = receivers[0].refit(step)
    assert isinstance(result.error, TableRejected), result.error
    assert result.error.rule == HOSTILE_RULES[kind]
    assert result.wire_bytes == 0 and result.verdicts == [] and not result.installed
    assert untouched(receivers[0], before)


def _edit(store: Path, key: str, edit: Any) -> None:
    path = store / f"{key}.blob"
    doc = json.loads(path.read_bytes())
    edit(doc)
    DirectoryStore(store).publish(key, json.dumps(doc).encode())


def test_a_blob_whose_metadata_names_another_agent_is_rejected(
    pubs: Publishers, receivers: list[Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    step = next(_steps)
    pubs.publish(step)
    with _nixl.Agent("impostor") as impostor:  # alive: NIXL connects to it when loading
        impostor_meta = base64.b64encode(impostor.metadata()).decode("ascii")
        _edit(pubs.store, "rank-00001", lambda d: d.update(agent_meta_b64=impostor_meta))
        r = make_receiver(pubs.store, 0)  # a fresh receiver: it must load rank 1's metadata
        try:
            no_reads(r, monkeypatch)
            result = r.refit(step)
            assert isinstance(result.error, TableRejected) and result.error.rule == "AGENT_MISMATCH"
            assert "'impostor'" in str(result.error) and result.error.source == "rank-00001"
            assert r.step is None and r.weights == {}
        finally:
            r.close()


def _copy_rank_zero(pubs: Publishers, tmp_path: Path) -> tuple[int, DirectoryStore, bytes]:
    """A fresh step published, and a store of our own holding only rank 0's blob."""
    step = next(_steps)
    pubs.publish(step)
    store = DirectoryStore(tmp_path)
    blob = DirectoryStore(pubs.store).read("rank-00000")
    assert blob is not None
    store.publish("rank-00000", blob)
    return step, store, blob


def test_two_blobs_from_one_agent_are_rejected(pubs: Publishers, tmp_path: Path) -> None:
    step, store, blob = _copy_rank_zero(pubs, tmp_path)
    store.publish("rank-00000-again", blob)
    r = make_receiver(tmp_path, 0)
    try:
        result = r.refit(step)
        assert isinstance(result.error, TableRejected) and result.error.rule == "DUPLICATE_AGENT"
    finally:
        r.close()


def test_discovery_times_out_with_counts(pubs: Publishers, tmp_path: Path) -> None:
    step, store, _ = _copy_rank_zero(pubs, tmp_path)
    store.publish("rank-00001", wrap_rendezvous_blob(b"meta", "empty-rank", "", [], step))
    (tmp_path / ".rank-00002.1.ab.tmp").write_bytes(b"{")  # a writer mid-way: not seen
    r = make_receiver(tmp_path, 0, discover_timeout_s=0.5)
    try:
        started = time.monotonic()
        result = r.refit(step)
        assert time.monotonic() - started < 5
        err = result.error
        assert isinstance(err, DiscoveryTimeout)
        assert (err.expected, err.seen, err.readable, err.empty) == (2, 2, 2, 1)
        assert str(err) == (
            f"{r.store}: 1 of 2 non-empty table(s) after 0.5 s: 2 seen, 2 readable, 1 empty [DISCOVERY_TIMEOUT]"
        )
        assert str(r.store).startswith("DirectoryStore(")
    finally:
        r.close()


def copy_rank0(pubs: Publishers, store: Path, step: int) -> None:
    """Post the shared rank-0 publisher's blob for ``step`` into another store."""
    pubs.publish(step)
    blob = DirectoryStore(pubs.store).read("rank-00000")
    assert blob is not None
    DirectoryStore(store).publish("rank-00000", blob)


def test_a_publisher_killed_while_read_gives_a_clear_error_and_untouched_receivers(
    pubs: Publishers, tmp_path: Path
) -> None:
    victim = Publishers(tmp_path, ranks=(1,))  # rank 1 of its own; rank 0 comes from the shared one
    warm = make_receiver(tmp_path, 0, read_timeout_s=5.0, chunk_bytes=2048)  # many rounds of reads
    cold = make_receiver(tmp_path, 1, read_timeout_s=5.0)
    try:
        step = next(_steps)
        copy_rank0(pubs, tmp_path, step)
        victim.publish(step)
        assert warm.refit(step).installed  # has loaded both publishers' metadata
        before = snapshot(warm)
        step = next(_steps)
        copy_rank0(pubs, tmp_path, step)
        victim.publish(step)
        killed_at: list[tuple[int, int]] = []

        def kill_mid_transfer(done: int, total: int, elapsed: float) -> None:
            if not killed_at:
                killed_at.append((done, total))
                victim.children[0].kill()  # its blob stays, its memory is gone

        started = time.monotonic()
        results: list[StepResult] = [warm.refit(step, kill_mid_transfer), cold.refit(step)]
        assert time.monotonic() - started < 30
        assert killed_at and 0 < killed_at[0][0] < killed_at[0][1]  # bytes had moved, not all of them
        for result in results:  # warm: a read fails mid-way; cold: the dead peer cannot be loaded
            assert isinstance(result.error, TransferFailed), result.error
            assert result.error.agents == victim.agents
            assert victim.agents[0] in str(result.error) and "[TRANSFER_FAILED]" in str(result.error)
            assert not result.installed and result.verdicts == []
        assert "cannot load its NIXL metadata" in str(results[1].error)
        assert untouched(warm, before) and warm.matches_truth()
        assert cold.step is None and cold.weights == {}
    finally:
        warm.close()
        cold.close()
        victim.stop()


# -- interop with the released upstream code -----------------------------------------------

HERE = Path(__file__).parent


def upstream_python() -> str:
    from refitwire.compat.upstream.envs import find_env

    python = find_env("0.7.0")
    if python is None:
        pytest.skip("no modelexpress 0.7.0 environment (python -m refitwire.compat.upstream.envs)")
    return str(python)


@pytest.mark.upstream
def test_a_blob_written_by_upstream_0_7_0_verifies_in_our_receiver(pubs: Publishers, tmp_path: Path) -> None:
    from refitwire import unwrap_rendezvous_blob

    python = upstream_python()
    theirs = Publishers(tmp_path, ranks=(1,), upstream_python=python)  # digest + wrap by upstream code
    r = make_receiver(tmp_path, 0)
    try:
        step = next(_steps)
        copy_rank0(pubs, tmp_path, step)  # rank 0 written by our writer: a mixed fleet
        theirs.publish(step)
        blob = DirectoryStore(tmp_path).read("rank-00001")
        assert blob is not None
        payload = unwrap_rendezvous_blob(blob)
        assert payload.agent_name == theirs.agents[0] and payload.publisher_step == step
        # Same input, same bytes: our writer reproduces the upstream blob exactly.
        ours = wrap_rendezvous_blob(payload.agent_metadata, payload.agent_name, payload.metadata_endpoint,
                                    payload.tensors, payload.publisher_step)  # fmt: skip
        assert ours == blob
        result = r.refit(step)
        assert result.installed, result.error or result.verdicts
        from_upstream = [v for v in result.verdicts if v.agent == theirs.agents[0]]
        assert from_upstream and {v.verdict for v in from_upstream} == {Verdict.VERIFIED}
        assert r.matches_truth()
    finally:
        r.close()
        theirs.stop()


@pytest.mark.upstream
def test_our_blob_is_read_by_the_upstream_0_7_0_reader(pubs: Publishers, tmp_path: Path) -> None:
    import subprocess

    from refitwire import to_decoded, unwrap_rendezvous_blob

    python = upstream_python()
    step = next(_steps)
    pubs.publish(step)
    blobs = [DirectoryStore(pubs.store).read(k) for k in ("rank-00000", "rank-00001")]
    request: dict[str, Any] = {"blobs": [], "data": []}
    for i, blob in enumerate(blobs):
        assert blob is not None
        (tmp_path / f"{i}.blob").write_bytes(blob)
        request["blobs"].append(str(tmp_path / f"{i}.blob"))
        for t in unwrap_rendezvous_blob(blob).tensors:
            (shard,) = t.shards
            data = tmp_path / f"{i}-{t.name}.bin"
            data.write_bytes(
                truth(MODEL[t.name], step, (shard.shard_offset, shard.shape))
                .view(-1)
                .view(torch.uint8)
                .numpy()
                .tobytes()
            )
            request["data"].append({"file": str(data), "dtype": t.dtype, "shape": list(shard.shape)})
    done = subprocess.run(
        [python, str(HERE / "_upstream_reader.py")], input=json.dumps(request).encode(),
        capture_output=True, timeout=120, check=False, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    got = json.loads(done.stdout)
    for blob, decoded in zip(blobs, got["payloads"], strict=True):
        assert blob is not None
        mine = to_decoded(unwrap_rendezvous_blob(blob))
        assert decoded == {k: mine[k] for k in decoded}  # upstream sees what we wrote
        assert decoded["publisher_step"] == step
    published = [s["digest"] for d in got["payloads"] for t in d["tensors"] for s in t["shards"]]
    assert got["digests"] == published  # upstream's digest of the true bytes = what we published
    assert got["merged_tensors"] == len(MODEL.tensors)  # upstream merges the two tables
