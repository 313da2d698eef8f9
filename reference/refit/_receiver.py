"""An inference-rank receiver: discover, check, read, verify, then install or leave untouched.

One :meth:`Receiver.refit` is one step:

1. **discover** the quorum: poll the store with the count-only quorum read until
   ``publishers`` tables are non-empty, then decode each of them once (an invalid
   blob is rejected at once, with the spec rule it broke);
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
   :class:`~refitwire.refit._verdict.Verdict`, as soon as its bytes have landed
   and while the other reads go on;
5. **install** only if the policy accepts every verdict. Otherwise, and on any
   error, the installed weights and step stay exactly as they were.

What only changes when a table's shape does is kept between steps: the checks
of step 2 and the read plan (``_check``) are redone only when some table's
geometry, agent or NIXL metadata differs from the last accepted plan. Bytes land
in one of two slots (``_slots``), each allocated and registered once; a step
fills the slot that is not installed, and installing is one switch between
slots. So the weights a step installed stay valid until the step after next;
copy them to keep them longer.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from refitwire import RendezvousPayload
from refitwire.wire import no_gc, slice_digests

from ._check import PeerLoader, ReadPlan, make_plan, table_signature
from ._device import mem_type
from ._errors import DiscoveryTimeout, RefitError
from ._layout import resolve_model
from ._model import Box, Model, truth
from ._open import open_store
from ._options import PROGRESS_MODES
from ._proc import answer, reply_channel, serve
from ._pull import Piece, Progress, cut, pull
from ._result import StepResult
from ._slots import Slot
from ._store import RendezvousStore
from ._tables import KnownTables
from ._verdict import Policy, ShardVerdict, may_install
from ._verifier import StepVerifier, owners

__all__ = ["Progress", "Receiver", "StepResult", "main", "same_bytes"]


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
        chunk_bytes: int = 128 << 20,
        window: int = 2,
        poll_s: float = 0.05,
        progress: str = "off",
        verify_threads: int | None = None,
    ) -> None:
        from ._nixl import Agent

        self.rank, self.ranks, self.model, self.store = rank, ranks, model, store
        self.publishers = publishers
        self.policy = policy or Policy()
        self.device = torch.device(device)
        self.discover_timeout_s = discover_timeout_s
        self.read_timeout_s = read_timeout_s
        self.chunk_bytes, self.window, self.poll_s = chunk_bytes, window, poll_s
        self.need: dict[str, Box] = model.receiver_boxes(rank, ranks)
        self.weights: dict[str, torch.Tensor] = {}
        self.step: int | None = None
        # The receiver drives its own reads, so by default it needs no progress thread.
        self.agent = Agent(agent_name or f"refit-recv-{rank}-{os.getpid()}", progress=progress)
        self._peers = PeerLoader(self.agent, mem_type(device))  # publishers run on the same --device
        self._plan: ReadPlan | None = None
        self._slots = (
            Slot(self.agent, model, self.need, self.device),
            Slot(self.agent, model, self.need, self.device),
        )
        self._live: Slot | None = None
        # Digests run beside the pull, on as many threads as the machine has cores (numpy's sums
        # and BLAKE2b release the GIL); each worker keeps its shards' jobs in order.
        self._verifiers = [
            ThreadPoolExecutor(1, thread_name_prefix=f"refit-verify-{rank}-{k}")
            for k in range(verify_threads or max(2, os.cpu_count() or 2))
        ]
        self._discovery = (0, 0.0)  # polls, decode seconds of the last discover()
        self._tables = KnownTables(store)
        self._cut: tuple[ReadPlan, list[Piece], list[int], list[int]] | None = None

    def close(self) -> None:
        for worker in self._verifiers:
            worker.shutdown(wait=True)
        self.agent.close()

    @property
    def _spare(self) -> Slot:
        """The slot not installed: where a step (or the raw anchor) may write."""
        return self._slots[1] if self._live is self._slots[0] else self._slots[0]

    # -- one step ------------------------------------------------------------------------

    def refit(self, step: int, progress: Progress | None = None) -> StepResult:
        """Refit to ``step``; never raises for a refusal, it is in the result."""
        started = time.monotonic()
        result = StepResult(step, installed=False, weights_step=self.step)
        # a real table is ~20,000 objects a step: no collector passes over them mid-step
        with no_gc():
            try:
                payloads = self.discover()
                result.polls, result.decode_s = self._discovery
                result.tables_reused, result.blobs_fetched = self._tables.reused, self._tables.fetched
                checked = time.monotonic()
                result.discover_s = checked - started
                plan, result.plan_reused = self._plan_for(payloads)
                slot = self._spare
                result.check_s = time.monotonic() - checked
                verdicts, result.transfer_s, result.verify_s = self._pull(
                    step, plan, payloads, slot, progress
                )
                result.verdicts = verdicts
                result.wire_bytes, result.exact_runs, result.exact_bytes = (
                    plan.wire_bytes,
                    plan.exact_runs,
                    plan.exact_bytes,
                )
                switch = time.monotonic()
                if may_install(result.verdicts, self.policy):
                    self.weights, self.step, self._live = slot.weights(plan), step, slot  # the one switch
                    result.installed = True
                result.install_s = time.monotonic() - switch
            except RefitError as exc:
                result.error = exc
        result.weights_step = self.step
        result.total_s = time.monotonic() - started
        return result

    def discover(self) -> list[tuple[str, RendezvousPayload]]:
        """The first ``publishers`` non-empty tables in key order, waiting up to the timeout.

        Each poll reads only the envelopes and entry counts (the quorum read) of the tables
        that changed since this receiver last read them; once enough non-empty tables are
        there, each of them is decoded once, whole, unless it is the table this receiver
        decoded before (``KnownTables``: ``tables_reused`` in the result says how many).
        """
        deadline = time.monotonic() + self.discover_timeout_s
        polls = 0
        self._tables.reset_counts()
        while True:
            polls += 1
            scan = self._tables.scan()
            if len(scan.ready) >= self.publishers:
                decoding = time.monotonic()
                quorum = scan.ready[: self.publishers]  # a table past it is never decoded, so never refused
                found = [(key, self._tables.payload(key)) for key in quorum]
                self._discovery = (polls, time.monotonic() - decoding)
                return found
            if time.monotonic() >= deadline:
                raise DiscoveryTimeout(
                    self.publishers,
                    scan.keys,
                    scan.readable,
                    scan.empty,
                    self.discover_timeout_s,
                    str(self.store),
                )
            time.sleep(self.poll_s)

    def raw_read(self, reps: int = 3) -> dict[str, Any]:
        """The anchors: the last plan's bytes read as plain NIXL READs, no digest: the same
        descriptors (one request per peer), and the same bytes per peer in descriptors of at most
        ``chunk_bytes`` (``contiguous_*``: what the model's layout costs in fragmentation)."""
        if self._plan is None:
            return {"ok": False, "error": "no plan yet"}
        base = self._spare.staging.data_ptr()  # never the installed slot
        runs: dict[str, list[tuple[int, int, int]]] = {}
        spans: dict[str, tuple[int, int]] = {}  # peer -> lowest address read, bytes read
        for r in self._plan.reads:
            runs.setdefault(r.agent, []).append((r.addr, base + r.staging_offset, r.nbytes))
            low, nbytes = spans.get(r.agent, (r.addr, 0))
            spans[r.agent] = (min(low, r.addr), nbytes + r.nbytes)
        big: dict[str, list[tuple[int, int, int]]] = {}
        local = base
        for peer, (low, nbytes) in spans.items():  # inside the peer's arena: its reads span more
            for start in range(0, nbytes, self.chunk_bytes):
                n = min(self.chunk_bytes, nbytes - start)
                big.setdefault(peer, []).append((low + start, local + start, n))
            local += nbytes
        best, cpu = self._best_of(reps, runs)
        contiguous, _ = self._best_of(reps, big)
        digest, digest_cpu = self._digest_best_of(reps) or (None, None)
        wire = self._plan.wire_bytes
        return {"ok": True, "bytes": wire, "best_s": best, "bytes_per_s": wire / best, "cpu_s": cpu,
                "descriptors": len(self._plan.reads), "contiguous_descriptors": sum(map(len, big.values())),
                "contiguous_best_s": contiguous, "contiguous_bytes_per_s": wire / contiguous,
                "digest_best_s": digest, "digest_bytes_per_s": wire / digest if digest else None,
                "digest_cpu_s": digest_cpu, "digest_threads": len(self._verifiers),
                "cores": len(os.sched_getaffinity(0))}  # fmt: skip

    def _digest_best_of(self, reps: int) -> tuple[float, float] | None:
        """The machine's digest throughput here: every shard of the last plan digested again from
        the installed slot, on the verifier threads, as a step verifies them (``_best``)."""
        if self._plan is None or self._live is None:
            return None
        reads, slot, workers = self._plan.reads, self._live, self._verifiers
        owner = self._pieces_of(self._plan)[2]

        # Each thread its own shards (``owners``), 4,096 a batch: a step's pieces hold fewer
        # (about 290 of the MoE's 55 kB shards), which digested at the same rate here.
        def digest_share(k: int) -> None:
            mine = [r for r, o in zip(reads, owner) if o == k]
            for lo in range(0, len(mine), 4096):
                batch = mine[lo : lo + 4096]
                buffer, offsets = slot.host_slices(batch)
                slice_digests(buffer, offsets, [r.nbytes for r in batch])

        def digest_all() -> None:
            for job in [w.submit(digest_share, k) for k, w in enumerate(workers)]:
                job.result()

        return _best(reps, digest_all)

    def _best_of(self, reps: int, runs: dict[str, list[tuple[int, int, int]]]) -> tuple[float, float]:
        return _best(reps, lambda: self.agent.read_many(runs, timeout_s=self.read_timeout_s))

    # -- internals -----------------------------------------------------------------------

    def _plan_for(self, payloads: list[tuple[str, RendezvousPayload]]) -> tuple[ReadPlan, bool]:
        signature = table_signature(payloads)
        if self._plan is not None and self._plan.signature == signature:
            return self._plan, True
        plan = make_plan(payloads, self.need, self.model, self._peers, signature)
        for slot in self._slots:  # both now, so the next step is not the cold one for its slot
            slot.fit(plan)
            slot.weights(plan)  # its views too: made once per plan and slot (77 ms on the MoE layout)
        self._plan = plan
        gc.freeze()  # the plan lives for many steps: keep it out of every later collection
        return plan, False

    def _pull(
        self,
        step: int,
        plan: ReadPlan,
        payloads: Sequence[tuple[str, RendezvousPayload]],
        slot: Slot,
        progress: Progress | None,
    ) -> tuple[list[ShardVerdict], float, float]:
        """Read, and verify and place each shard on the verifier thread as its bytes land."""
        pieces, per_read, owner = self._pieces_of(plan)
        requests = slot.requests(plan, pieces)
        verifier = StepVerifier(self._verifiers, step, plan, slot, plan.digests(payloads), per_read, owner)
        try:
            transfer_s = pull(
                self.agent, pieces, requests, window=self.window, timeout_s=self.read_timeout_s,
                landed=verifier.landed, progress=progress,
            )  # fmt: skip
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        except BaseException:
            slot.drop_requests()  # cancels what still runs; the next step prepares them again
            verifier.wait()
            raise
        tail = time.monotonic()
        return verifier.verdicts(), transfer_s, time.monotonic() - tail

    def _pieces_of(self, plan: ReadPlan) -> tuple[list[Piece], list[int], list[int]]:
        """The plan's requests (cut once per plan), how many segments each read has, and the
        verifier thread of each read (``owners``)."""
        if self._cut is None or self._cut[0] is not plan:
            pieces = cut(plan, self.chunk_bytes)
            per_read = [0] * len(plan.reads)
            for piece in pieces:
                for seg in piece.segments:
                    per_read[seg.read] += 1
            self._cut = (plan, pieces, per_read, owners(plan, len(self._verifiers)))
        return self._cut[1:]

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


def _best(reps: int, run: Callable[[], Any]) -> tuple[float, float]:
    """The fastest of ``reps`` runs: its wall seconds, and the CPU seconds this process (every
    thread) spent in it. On a machine where the copies of a READ are CPU work (UCX's shared
    memory), the CPU says how much of the cores the READ and the digests each take."""
    best = (float("inf"), 0.0)
    for _ in range(max(reps, 1)):
        started, cpu = time.monotonic(), time.process_time()
        run()
        best = min(best, (time.monotonic() - started, time.process_time() - cpu))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m refitwire.refit._receiver")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--publishers", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--model", default="default", help="a model name or <bytes>B")
    parser.add_argument("--layout", default=None, help="a layout preset or file (scaled to --model <bytes>B)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--accept-unchecked", action="store_true")
    parser.add_argument("--discover-timeout", type=float, default=30.0)
    parser.add_argument("--read-timeout", type=float, default=30.0)
    parser.add_argument("--progress", default="off", choices=PROGRESS_MODES, help="how NIXL progresses")
    parser.add_argument("--fd", type=int, required=True, help="answer pipe (NIXL logs to stdout)")
    args = parser.parse_args(argv)
    out = reply_channel(args.fd)
    recv = Receiver(
        args.rank, args.ranks, resolve_model(args.model, args.layout), open_store(args.store),
        publishers=args.publishers, policy=Policy(accept_unchecked=args.accept_unchecked),
        device=args.device, discover_timeout_s=args.discover_timeout, read_timeout_s=args.read_timeout,
        progress=args.progress,
    )  # fmt: skip
    answer(out, {"hello": recv.agent.name, "pid": os.getpid()})
    last = [0.0]

    def progress(done: int, total: int, elapsed: float) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= 0.2:
            last[0] = now
            answer(out, {"event": "progress", "done": done, "total": total, "elapsed": elapsed})

    def dump(msg: dict[str, Any]) -> dict[str, Any]:
        weights = {k: v.clone() for k, v in recv.weights.items()}  # not the whole staging buffer under a view
        torch.save({"step": recv.step, "boxes": recv.need, "weights": weights}, msg["path"])
        return {"ok": True, "step": recv.step}

    def raw_read(reps: int) -> dict[str, Any]:
        try:
            return recv.raw_read(reps)
        except Exception as exc:  # a dead publisher: no anchor for this step
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def refit(msg: dict[str, Any]) -> dict[str, Any]:
        result = {"event": "result", **recv.refit(int(msg["step"]), progress).to_json()}
        if msg.get("raw_reps"):  # the anchor, measured after the step so it costs the step nothing
            result["raw_nixl"] = raw_read(int(msg["raw_reps"]))
        return result

    try:
        serve(out, {
            "refit": refit,
            "check": lambda _msg: {"ok": True, "step": recv.step, "matches_truth": recv.matches_truth()},
            "raw_read": lambda msg: raw_read(int(msg.get("reps", 2))),
            "dump": dump,
        })  # fmt: skip
    finally:
        recv.close()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the agent is closed; skip tearing down the interpreter (torch's part of it is slow)
