"""What a receiver keeps between steps, and what it does while bytes move (real NIXL, real processes).

The plan, its checks and the exact-runs figures are computed once per table
geometry; staging is registered once; discovery polls with the count-only read
and decodes each blob once; each shard is verified as soon as it lands.
"""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from refitwire.refit._errors import NixlMissing

pytest.importorskip("refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing)
pytest.importorskip("torch")

import refitwire._lazy_table as lazy_table_module
import refitwire.refit._receiver as receiver_module
import refitwire.refit._tables as tables_module
from _fleet import Publishers, make_receiver
from refitwire import InvalidBlob, unwrap_rendezvous_blob
from refitwire.refit import DirectoryStore, DiscoveryTimeout, TableRejected
from refitwire.refit._verifier import StepVerifier

pytestmark = pytest.mark.nixl

_steps = itertools.count(1)


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """Record every call of ``owner.name`` (its arguments), still calling through."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_the_plan_and_the_staging_are_made_once_per_table_geometry(
    pubs: Publishers, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = make_receiver(pubs.store, 0)
    try:
        plans = _count(monkeypatch, receiver_module, "make_plan")
        registered = _count(monkeypatch, r.agent, "register")
        built = _count(monkeypatch, lazy_table_module, "table_models")  # models built from a lazy table
        results, built_per_step = [], []
        for _ in range(3):
            step = next(_steps)
            pubs.publish(step)
            results.append(r.refit(step))
            built_per_step.append(len(built))
            built.clear()
        assert all(res.installed for res in results), [res.error for res in results]
        assert [res.plan_reused for res in results] == [False, True, True]
        assert len(plans) == 1
        # Only the planning step builds models; a warm step reads geometry and digests as checked.
        assert built_per_step[0] > 0 and built_per_step[1:] == [0, 0], built_per_step
        # One staging buffer per slot, registered when first used: never again for the same plan.
        assert len(registered) == 2
        assert len({(res.exact_runs, res.exact_bytes, res.wire_bytes) for res in results}) == 1
        assert results[0].exact_runs > 0 and results[0].exact_bytes > 0

        step = next(_steps)  # a table whose geometry changed: everything is checked again
        pubs.publish(step, "overlap", rank=1)
        hostile = r.refit(step)
        assert isinstance(hostile.error, TableRejected) and not hostile.plan_reused and len(plans) == 2
        step = next(_steps)  # a refused table never replaces the last accepted plan
        pubs.publish(step)
        again = r.refit(step)
        assert again.installed and again.plan_reused and len(plans) == 2 and r.matches_truth()
    finally:
        r.close()


def test_discovery_polls_counts_only_and_decodes_each_blob_once(
    pubs: Publishers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = next(_steps)
    pubs.publish(step)
    source, store = DirectoryStore(pubs.store), DirectoryStore(tmp_path)
    blob0, blob1 = source.read("rank-00000"), source.read("rank-00001")
    assert blob0 is not None and blob1 is not None
    store.publish("rank-00000", blob0)
    decodes = _count(monkeypatch, tables_module, "unwrap_rendezvous_blob")
    r = make_receiver(tmp_path, 0, discover_timeout_s=0.3, poll_s=0.05)
    try:
        waiting = r.refit(step)
        assert isinstance(waiting.error, DiscoveryTimeout)
        # counted once: a table whose bytes did not change is not counted again (KnownTables)
        assert len(decodes) >= 1 and all(kw["with_tensors"] is False for _, kw in decodes)
        decodes.clear()
        store.publish("rank-00001", blob1)
        result = r.refit(step)
        assert result.installed, result.error
        full = [args[0] for args, kw in decodes if kw == {"with_tensors": True, "lazy": True}]
        assert sorted(full) == sorted([blob0, blob1])  # each blob decoded whole exactly once
        assert result.polls == 1 and 0 < result.decode_s <= result.discover_s
        assert result.blobs_fetched == 2 and result.to_json()["blobs_fetched"] == 2  # written just now
    finally:
        r.close()


def test_each_shard_is_verified_as_its_bytes_land(pubs: Publishers, monkeypatch: pytest.MonkeyPatch) -> None:
    r = make_receiver(pubs.store, 1, chunk_bytes=2048)  # many pieces per shard
    try:
        done = [0]
        handed: list[tuple[Any, int]] = []  # (piece, bytes landed when it was handed to the workers)
        digests: list[int] = []
        real_landed, real_digest = StepVerifier.landed, StepVerifier._digest

        def landed(self: StepVerifier, piece: Any) -> None:
            handed.append((piece, done[0]))
            real_landed(self, piece)

        def digest(self: StepVerifier, *args: Any) -> None:
            digests.append(1)
            real_digest(self, *args)

        monkeypatch.setattr(StepVerifier, "landed", landed)
        monkeypatch.setattr(StepVerifier, "_digest", digest)

        def progress(moved: int, total: int, elapsed: float) -> None:
            done[0] = moved

        step = next(_steps)
        pubs.publish(step)
        result = r.refit(step)  # without a progress callback the pull reports nothing
        assert result.installed
        handed.clear()
        digests.clear()
        step = next(_steps)
        pubs.publish(step)
        result = r.refit(step, progress)
        assert result.installed, result.error
        left = [0] * len(result.verdicts)
        for piece, _ in handed:
            for seg in piece.segments:
                left[seg.read] += 1
        finished = []  # when the job that completes each shard was handed on
        for piece, at in handed:
            for seg in piece.segments:
                left[seg.read] -= 1
                if not left[seg.read]:
                    finished.append(at)
        assert len(finished) == len(result.verdicts)
        assert min(finished) < result.wire_bytes  # a whole shard was judged while others still moved
        assert len(digests) > len(result.verdicts)  # shards are digested piece by piece, not whole
        assert result.verify_s >= 0 and result.total_s >= result.transfer_s > 0
    finally:
        r.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_shards_are_dealt_out_to_every_verifier_thread(
    pubs: Publishers, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    used: set[str] = set()
    real = StepVerifier._segments

    def segments(self: StepVerifier, segs: Any) -> None:
        used.add(threading.current_thread().name)
        real(self, segs)

    monkeypatch.setattr(StepVerifier, "_segments", segments)
    r = make_receiver(pubs.store, 0, verify_threads=threads)
    try:
        step = next(_steps)
        pubs.publish(step)
        result = r.refit(step)
        assert result.installed, result.error
        assert {v.verdict.value for v in result.verdicts} == {"verified"}
        assert len(used) == threads, used
    finally:
        r.close()


def test_a_box_that_is_one_published_shard_is_installed_in_place(pubs: Publishers) -> None:
    r = make_receiver(pubs.store, 0, ranks=1)  # needs whole tensors; norm.weight is published whole
    try:
        step = next(_steps)
        pubs.publish(step)
        result = r.refit(step)
        assert result.installed and r.matches_truth()
        plan = r._plan
        assert plan is not None and "norm.weight" in plan.whole
        staged = r._live.staging if r._live is not None else None
        assert staged is not None
        norm = r.weights["norm.weight"]
        start = staged.data_ptr()
        assert start <= norm.data_ptr() < start + staged.numel()  # a view of staging, not a copy
    finally:
        r.close()


def test_a_table_past_the_quorum_is_not_decoded(pubs: Publishers, tmp_path: Path) -> None:
    step = next(_steps)
    pubs.publish(step)
    source, store = DirectoryStore(pubs.store), DirectoryStore(tmp_path)
    for key in ("rank-00000", "rank-00001"):
        blob = source.read(key)
        assert blob is not None
        store.publish(key, blob)
    doc = json.loads(source.read("rank-00001") or b"")
    doc["tensors"][0]["dtype"] = "not-a-dtype"  # the envelope and its count hold; the entries do not
    bad = json.dumps(doc).encode()
    with pytest.raises(InvalidBlob):
        unwrap_rendezvous_blob(bad)
    assert unwrap_rendezvous_blob(bad, with_tensors=False).entry_count() > 0
    store.publish("rank-00002", bad)  # a third non-empty table, after the first two in key order
    r = make_receiver(tmp_path, 0)
    try:
        result = r.refit(step)
        assert result.installed and r.matches_truth(), result.error  # the quorum is the first two
    finally:
        r.close()
