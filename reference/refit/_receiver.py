"""An inference-rank receiver: discover, check, read, verify, then install or leave untouched.

One :meth:`Receiver.refit` is one step:

1. **discover** the quorum: poll the store until ``publishers`` non-empty tables
   decode (an invalid blob is rejected at once, with the spec rule it broke);
2. **check** the tables before any byte moves: one agent per blob and only its
   own shards, consistent geometry across ranks (``MERGE_CONSISTENT``), every
   needed tensor present and as this model expects, shards that neither overlap
   nor leave gaps anywhere in the tensor (``check_coverage``), the agent name
   inside each blob's NIXL metadata equal to the blob's, and every shard to be
   read inside memory its publisher registered (asked of NIXL itself, which
   resolves remote descriptors against the registrations in the metadata);
3. **read** every published shard that touches the needed box *whole* into a
   registered staging buffer: a whole-shard digest can only be checked against
   the whole shard, so this is upstream's full pull; the exact byte runs the
   needed box alone would take (``plan_reads``) are reported beside it;
4. **verify** each shard (recomputed digest vs published, stamp vs step) into a
   :class:`~refitwire.refit._verdict.Verdict`;
5. **install** only if the policy accepts every verdict: new tensors are built
   from staging and swapped in with one assignment. Otherwise, and on any error,
   the installed weights and step stay exactly as they were.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from refitwire import InvalidBlob, PublishedShard, RendezvousPayload, merge_shard_tables, tensor_digest
from refitwire import unwrap_rendezvous_blob as unwrap

from ._errors import DiscoveryTimeout, RefitError, TableRejected, TransferFailed
from ._model import MODELS, Box, Model, truth
from ._plan import PlanError, SourceShard, check_coverage, plan_reads
from ._proc import answer, reply_channel, serve
from ._store import RendezvousStore, open_store
from ._verdict import Policy, ShardVerdict, judge, may_install

__all__ = ["Progress", "Receiver", "StepResult", "main", "same_bytes"]

#: ``progress(done_bytes, total_bytes, elapsed_s)`` while bytes move.
Progress = Callable[[int, int, float], None]

_ALIGN = 256


@dataclass
class StepResult:
    """What one refit step did. ``error`` is set when it stopped before verdicts."""

    step: int
    installed: bool
    weights_step: int | None
    verdicts: list[ShardVerdict] = field(default_factory=list)
    error: RefitError | None = None
    wire_bytes: int = 0
    exact_bytes: int = 0
    exact_runs: int = 0
    transfer_s: float = 0.0
    total_s: float = 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.wire_bytes / self.transfer_s if self.transfer_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "installed": self.installed,
            "weights_step": self.weights_step,
            "error": None if self.error is None else {"rule": self.error.rule, "message": str(self.error)},
            "verdicts": [
                {
                    "tensor": v.tensor,
                    "offset": list(v.offset),
                    "shape": list(v.shape),
                    "agent": v.agent,
                    "publisher_step": v.publisher_step,
                    "published_digest": v.published_digest,
                    "actual_digest": v.actual_digest,
                    "verdict": v.verdict.value,
                }
                for v in self.verdicts
            ],
            "wire_bytes": self.wire_bytes,
            "exact_bytes": self.exact_bytes,
            "exact_runs": self.exact_runs,
            "transfer_s": self.transfer_s,
            "total_s": self.total_s,
            "bytes_per_s": self.bytes_per_s,
        }


@dataclass(frozen=True)
class _Read:
    """One published shard to pull whole."""

    tensor: str
    shard: PublishedShard
    key: str  # the store key of the blob that published it
    publisher_step: int | None
    nbytes: int
    staging_offset: int


class Receiver:
    """Receiver ``rank`` of ``ranks``: holds its boxes of the model, refits them step by step."""

    def __init__(
        self,
        rank: int,
        ranks: int,
        model: Model,
        store: RendezvousStore,
        *,
        publishers: int,
        policy: Policy | None = None,
        agent_name: str | None = None,
        device: str = "cpu",
        discover_timeout_s: float = 30.0,
        read_timeout_s: float = 30.0,
        chunk_bytes: int = 4 << 20,
    ) -> None:
        from ._nixl import Agent

        self.rank, self.ranks, self.model, self.store = rank, ranks, model, store
        self.publishers = publishers
        self.policy = policy or Policy()
        self.device = torch.device(device)
        self.mem_type = "VRAM" if self.device.type == "cuda" else "DRAM"
        self.discover_timeout_s = discover_timeout_s
        self.read_timeout_s = read_timeout_s
        self.chunk_bytes = chunk_bytes
        self.need: dict[str, Box] = model.receiver_boxes(rank, ranks)
        self.weights: dict[str, torch.Tensor] = {}
        self.step: int | None = None
        self.agent = Agent(agent_name or f"refit-recv-{rank}-{os.getpid()}")
        self._peer_meta: dict[str, bytes] = {}

    def close(self) -> None:
        self.agent.close()

    # -- one step ------------------------------------------------------------------------

    def refit(self, step: int, progress: Progress | None = None) -> StepResult:
        """Refit to ``step``; never raises for a refusal, it is in the result."""
        started = time.monotonic()
        result = StepResult(step, installed=False, weights_step=self.step)
        try:
            payloads = self.discover()
            reads = self.check(payloads)
            staging, result.transfer_s = self._pull(reads, progress)
            result.wire_bytes = sum(r.nbytes for r in reads)
            result.verdicts = [self._judge(step, r, staging) for r in reads]
            result.exact_runs, result.exact_bytes = self._exact_plan(reads)
            if may_install(result.verdicts, self.policy):
                fresh = self._assemble(reads, staging)
                self.weights, self.step = fresh, step  # the one switch: all or nothing
                result.installed = True
        except RefitError as exc:
            result.error = exc
        result.weights_step = self.step
        result.total_s = time.monotonic() - started
        return result

    def discover(self) -> list[tuple[str, RendezvousPayload]]:
        """The first ``publishers`` non-empty tables in key order, waiting up to the timeout."""
        deadline = time.monotonic() + self.discover_timeout_s
        while True:
            keys = self.store.keys()
            found: list[tuple[str, RendezvousPayload]] = []
            readable = empty = 0
            for key in keys:
                blob = self.store.read(key)
                if blob is None:
                    continue  # replaced or removed between list and read
                try:
                    payload = unwrap(blob)
                except InvalidBlob as exc:
                    raise TableRejected(exc.rule, key, str(exc)) from None
                readable += 1
                if payload.entry_count() == 0:
                    empty += 1
                else:
                    found.append((key, payload))
            if len(found) >= self.publishers:
                return found[: self.publishers]
            if time.monotonic() >= deadline:
                raise DiscoveryTimeout(self.publishers, len(keys), readable, empty, self.discover_timeout_s)
            time.sleep(0.05)

    def check(self, payloads: list[tuple[str, RendezvousPayload]]) -> list[_Read]:
        """Every check that needs no transfer; returns the whole shards to pull, in plan order."""
        by_agent: dict[str, tuple[str, RendezvousPayload]] = {}
        for key, payload in payloads:
            if payload.agent_name in by_agent:
                raise TableRejected(
                    "DUPLICATE_AGENT",
                    key,
                    f"agent {payload.agent_name!r} also publishes {by_agent[payload.agent_name][0]}",
                )
            by_agent[payload.agent_name] = (key, payload)
            for tensor in payload.tensors:
                for shard in tensor.shards:
                    if shard.agent_name != payload.agent_name:
                        raise TableRejected(
                            "SHARD_AGENT", key,
                            f"a shard of {tensor.name!r} names agent {shard.agent_name!r} "
                            f"in a blob from {payload.agent_name!r}",
                        )  # fmt: skip
        try:
            merged = {t.name: t for t in merge_shard_tables([p.tensors for _, p in payloads])}
        except InvalidBlob as exc:
            raise TableRejected(exc.rule, "", str(exc)) from None

        reads: list[_Read] = []
        offset = 0
        for name, (box_offset, box_shape) in self.need.items():
            spec = self.model[name]
            found = merged.get(name)
            if found is None:
                raise TableRejected("TENSOR_MISSING", "", f"no publisher publishes {name!r}")
            tensor = found
            seen = (tensor.dtype.removeprefix("torch."), tensor.elsize, tuple(tensor.full_shape))
            if seen != (spec.dtype, spec.elsize, spec.full_shape):
                raise TableRejected(
                    "MODEL_MISMATCH", "", f"{name!r} is published as {seen}, this model has "
                    f"{(spec.dtype, spec.elsize, spec.full_shape)}",
                )  # fmt: skip
            sources = [SourceShard.from_published(s) for s in tensor.shards]
            by_box = {(s.shard_offset, s.shape): s for s in tensor.shards}
            try:
                # The whole tensor, not just our box: overlaps and holes anywhere mean a broken table.
                check_coverage(name, spec.full_shape, (0,) * len(spec.full_shape), spec.full_shape, sources)
                hits = check_coverage(name, spec.full_shape, box_offset, box_shape, sources)
            except PlanError as exc:
                raise TableRejected(exc.rule, "", str(exc)) from None
            for source, _part in hits:
                shard = by_box[(source.offset, source.shape)]
                key, payload = by_agent[shard.agent_name]
                nbytes = math.prod(shard.shape) * tensor.elsize
                reads.append(_Read(name, shard, key, payload.publisher_step, nbytes, offset))
                offset += -(-nbytes // _ALIGN) * _ALIGN

        for agent in sorted({r.shard.agent_name for r in reads}):
            self._load_peer(agent, *by_agent[agent], device_id=next(
                r.shard.device_id for r in reads if r.shard.agent_name == agent))  # fmt: skip
        for r in reads:
            try:
                self.agent.check_remote(r.shard.agent_name, [(r.shard.addr, r.nbytes)])
            except ValueError as exc:
                raise TableRejected("ADDR_UNREGISTERED", r.key, f"shard of {r.tensor!r}: {exc}") from None
        return reads

    # -- internals -----------------------------------------------------------------------

    def _load_peer(self, agent: str, key: str, payload: RendezvousPayload, *, device_id: int) -> None:
        if self._peer_meta.get(agent) == payload.agent_metadata:
            return
        if agent in self._peer_meta:
            self.agent.remove_peer(agent)
            del self._peer_meta[agent]
        try:
            loaded = self.agent.add_peer(payload.agent_metadata, mem_type=self.mem_type, device_id=device_id)
        except RuntimeError as exc:
            raise TransferFailed([agent], f"cannot load its NIXL metadata: {exc}") from None
        if loaded != agent:
            self.agent.remove_peer(loaded)
            raise TableRejected(
                "AGENT_MISMATCH",
                key,
                f"the blob's NIXL metadata is for agent {loaded!r}, the blob says {agent!r}",
            )
        self._peer_meta[agent] = payload.agent_metadata

    def _pull(self, reads: list[_Read], progress: Progress | None) -> tuple[torch.Tensor, float]:
        from ._nixl import PeerError, PeerTimeout

        total = sum(r.nbytes for r in reads)
        size = max((r.staging_offset + r.nbytes for r in reads), default=0)
        staging = torch.empty(max(size, 1), dtype=torch.uint8, device=self.device)
        regions = self.agent.register([staging])
        base = staging.data_ptr()
        # Each read is one run (a whole shard); cut runs into pieces so progress can show.
        pieces: dict[str, list[tuple[int, int, int]]] = {}
        for r in reads:
            for start in range(0, r.nbytes, self.chunk_bytes):
                n = min(self.chunk_bytes, r.nbytes - start)
                pieces.setdefault(r.shard.agent_name, []).append(
                    (r.shard.addr + start, base + r.staging_offset + start, n)
                )
        started = time.monotonic()
        done = 0
        try:
            rounds = max((len(p) for p in pieces.values()), default=0)
            for i in range(rounds):  # one piece per peer per round: peers are read concurrently
                batch = {peer: [runs[i]] for peer, runs in pieces.items() if i < len(runs)}
                try:
                    self.agent.read_many(batch, timeout_s=self.read_timeout_s)
                except PeerError as exc:
                    raise TransferFailed([exc.peer], str(exc)) from None
                except PeerTimeout as exc:
                    raise TransferFailed(exc.peers, str(exc)) from None
                done += sum(run[0][2] for run in batch.values())
                if progress is not None:
                    progress(done, total, time.monotonic() - started)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        finally:
            self.agent.deregister(regions)
        return staging, time.monotonic() - started

    def _judge(self, step: int, r: _Read, staging: torch.Tensor) -> ShardVerdict:
        actual = tensor_digest(staging[r.staging_offset : r.staging_offset + r.nbytes])
        verdict = judge(step, r.publisher_step, r.shard.digest, actual)
        return ShardVerdict(
            r.tensor, r.shard.shard_offset, r.shard.shape, r.shard.agent_name,
            r.publisher_step, r.shard.digest, actual, verdict,
        )  # fmt: skip

    def _exact_plan(self, reads: list[_Read]) -> tuple[int, int]:
        """What reading only the needed boxes would have taken (runs, bytes)."""
        runs = 0
        nbytes = 0
        for name, (box_offset, box_shape) in self.need.items():
            spec = self.model[name]
            sources = [SourceShard.from_published(r.shard) for r in reads if r.tensor == name]
            planned = plan_reads(name, spec.full_shape, spec.elsize, box_offset, box_shape, sources)
            runs += len(planned)
            nbytes += sum(p.nbytes for p in planned)
        return runs, nbytes

    def _assemble(self, reads: list[_Read], staging: torch.Tensor) -> dict[str, torch.Tensor]:
        fresh: dict[str, torch.Tensor] = {}
        for name, (box_offset, box_shape) in self.need.items():
            spec = self.model[name]
            out = torch.empty(box_shape, dtype=spec.torch_dtype, device=self.device)
            for r in reads:
                if r.tensor != name:
                    continue
                shard = staging[r.staging_offset : r.staging_offset + r.nbytes]
                shard = shard.view(spec.torch_dtype).view(r.shard.shape)
                src, dst = [], []
                for o, n, bo, bn in zip(r.shard.shard_offset, r.shard.shape, box_offset, box_shape):
                    lo, hi = max(o, bo), min(o + n, bo + bn)
                    src.append(slice(lo - o, hi - o))
                    dst.append(slice(lo - bo, hi - bo))
                out[tuple(dst)] = shard[tuple(src)]
            fresh[name] = out
        return fresh

    def matches_truth(self) -> bool:
        """True when the installed weights are exactly the model's values at the installed step."""
        if self.step is None:
            return not self.weights
        return set(self.weights) == set(self.need) and all(
            same_bytes(self.weights[name], truth(self.model[name], self.step, box, device=self.device))
            for name, box in self.need.items()
        )


def same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Byte-for-byte equality (``torch.equal`` would call 0.0 and -0.0 equal)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return torch.equal(a.contiguous().view(-1).view(torch.uint8), b.contiguous().view(-1).view(torch.uint8))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m refitwire.refit._receiver")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--publishers", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--model", default="default", choices=sorted(MODELS))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--accept-unchecked", action="store_true")
    parser.add_argument("--discover-timeout", type=float, default=30.0)
    parser.add_argument("--read-timeout", type=float, default=30.0)
    parser.add_argument("--fd", type=int, required=True, help="answer pipe (NIXL logs to stdout)")
    args = parser.parse_args(argv)
    out = reply_channel(args.fd)
    recv = Receiver(
        args.rank, args.ranks, MODELS[args.model], open_store(args.store),
        publishers=args.publishers, policy=Policy(accept_unchecked=args.accept_unchecked),
        device=args.device, discover_timeout_s=args.discover_timeout, read_timeout_s=args.read_timeout,
    )  # fmt: skip
    answer(out, {"hello": recv.agent.name, "pid": os.getpid()})
    last = [0.0]

    def progress(done: int, total: int, elapsed: float) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 0.2:
            last[0] = now
            answer(out, {"event": "progress", "done": done, "total": total, "elapsed": elapsed})

    def dump(msg: dict[str, Any]) -> dict[str, Any]:
        torch.save({"step": recv.step, "boxes": recv.need, "weights": recv.weights}, msg["path"])
        return {"ok": True, "step": recv.step}

    try:
        serve(out, {
            "refit": lambda msg: {"event": "result", **recv.refit(int(msg["step"]), progress).to_json()},
            "check": lambda _msg: {"ok": True, "step": recv.step, "matches_truth": recv.matches_truth()},
            "dump": dump,
        })  # fmt: skip
    finally:
        recv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
