"""The whole refit on one machine: N publisher processes, M receiver processes, S steps.

Each step: every live publisher publishes (one of them misbehaving at the
injection step, if asked), then every receiver refits concurrently while their
progress is shown on stderr; afterwards each receiver checks that the weights it
holds are exactly the model's values at the step it holds. Right after each
step each receiver reads the same bytes again as plain NIXL READs, the anchor
that step's throughput is compared with. The harness sends each command to every
child before it waits for any answer, and never imports torch or NIXL itself.
The report is data (:class:`RunReport`); rendering is in ``_report``.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from ._device import check_device, parse_device
from ._layout import resolve_model
from ._open import run_store
from ._options import CLI_INJECTIONS, PROGRESS_MODES, UpstreamWriter
from ._proc import Child, ChildDied
from ._report import summarize

__all__ = ["CLI_INJECTIONS", "RunConfig", "RunReport", "run"]

REPORT_SCHEMA = "refitwire.refit-report.v1"


@dataclass
class RunConfig:
    publishers: int = 2
    receivers: int = 2
    steps: int = 3
    inject: str | None = None
    inject_step: int | None = None  # default: step 2 (step 1 when there is only one)
    inject_rank: int | None = None  # default: the last publisher
    model: str = "default"  # a name of MODELS, or "<N>B" for a model of at least N bytes
    layout: str | None = None  # a layout preset or file instead of the six-tensor model (scaled to "<N>B")
    device: str = "cpu"
    accept_unchecked: bool = False
    discover_timeout_s: float = 30.0
    read_timeout_s: float = 30.0
    start_timeout_s: float = 120.0
    store: str | None = field(default=None, repr=False)  # a directory or redis:// URL (may hold a password)
    upstream: UpstreamWriter | None = None  # publishers write their blobs with released upstream code
    # Run publishers in the first network namespace and receivers in the second
    # (``ip netns exec``), with UCX on TCP only: the cross-host path on one machine.
    netns: tuple[str, str] | None = None
    # How each side's NIXL agents progress (see docs/refit.md for why these defaults).
    publisher_progress: str = "poll"
    receiver_progress: str = "off"
    raw_reps: int = 2  # plain NIXL READs of each step's plan right after the step, the anchor (0: none)

    def __post_init__(self) -> None:
        if self.publishers < 1 or self.receivers < 1 or self.steps < 1:
            raise ValueError("publishers, receivers and steps must each be at least 1")
        if self.inject is not None and self.inject not in CLI_INJECTIONS:
            raise ValueError(f"unknown injection {self.inject!r}; known: {', '.join(CLI_INJECTIONS)}")
        resolve_model(self.model, self.layout)  # raises ValueError naming the known models or the bad layout
        parse_device(self.device)  # the syntax; check_device() (it imports torch for CUDA) when running
        if self.layout is not None and self.inject is not None:
            raise ValueError("--inject works on the synthetic --model, not on a --layout")
        for side in (self.publisher_progress, self.receiver_progress):
            if side not in PROGRESS_MODES:
                raise ValueError(f"unknown progress mode {side!r}; known: {', '.join(PROGRESS_MODES)}")

    @property
    def injection_step(self) -> int:
        return self.inject_step if self.inject_step is not None else min(2, self.steps)

    @property
    def injection_rank(self) -> int:
        return self.inject_rank if self.inject_rank is not None else self.publishers - 1


@dataclass
class RunReport:
    config: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    setup_s: float = 0.0
    model_bytes: int = 0

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(
            r["installed"] and r.get("matches_truth") for s in self.steps for r in s["receivers"]
        )

    def to_json(self) -> dict[str, Any]:
        wire = sum(r.get("wire_bytes", 0) for s in self.steps for r in s["receivers"])
        secs = sum(r.get("transfer_s", 0.0) for s in self.steps for r in s["receivers"])
        return {
            "schema": REPORT_SCHEMA,
            "config": self.config,
            "model_bytes": self.model_bytes,
            "setup_s": self.setup_s,
            "steps": self.steps,
            "totals": {"wire_bytes": wire, "transfer_s": secs, "bytes_per_s": wire / secs if secs else 0.0},
            "summary": summarize({"steps": self.steps}),
            "ok": self.ok,
        }

    def anchor(self) -> None:
        """Put each receiver row's throughput beside the raw NIXL READ measured right after it."""
        for step in self.steps:
            for row in step["receivers"]:
                raw = row.get("raw_nixl") or {}
                rate = raw.get("bytes_per_s") if raw.get("ok") else None
                row["raw_bytes_per_s"] = rate
                row["over_raw"] = (
                    row.get("bytes_per_s", 0.0) / rate if rate and row.get("bytes_per_s") else None
                )
                # The step's floor: its bytes moved or digested, whichever the machine does slower
                # (both measured by the same processes right after the steps).
                digest_rate = raw.get("digest_bytes_per_s") if raw.get("ok") else None
                row["digest_bytes_per_s"] = digest_rate
                if rate and digest_rate and row.get("wire_bytes") and row.get("total_s"):
                    floor_s = max(row["wire_bytes"] / rate, row["wire_bytes"] / digest_rate)
                    row["over_floor"] = row["total_s"] / floor_s
                    # Where the READ's copies are CPU work too (UCX's shared memory), the copies and
                    # the digests share the cores: the step needs at least their CPU over the cores.
                    cpu, digest_cpu, cores = raw.get("cpu_s"), raw.get("digest_cpu_s"), raw.get("cores")
                    if cpu is not None and digest_cpu is not None and cores:
                        row["cpu_floor_s"] = max(floor_s, (cpu + digest_cpu) / cores)
                        row["over_cpu_floor"] = row["total_s"] / row["cpu_floor_s"]
                big = raw.get("contiguous_bytes_per_s") if raw.get("ok") else None
                row["over_contiguous"] = (
                    row.get("bytes_per_s", 0.0) / big if big and row.get("bytes_per_s") else None
                )


class _Progress:
    """One status line on stderr: rewritten in place on a terminal, at most once a second otherwise."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.tty = out.isatty()
        self.last = 0.0

    def show(self, text: str, *, final: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            self.out.write("\r\033[K" + text + ("\n" if final else ""))
        elif final or now - self.last >= 1.0:
            self.out.write(text + "\n")
        else:
            return
        self.last = now
        self.out.flush()


def _pump(child: Child, events: queue.Queue[tuple[int, dict[str, Any]]], rank: int, timeout_s: float) -> None:
    # One thread per receiver: forward progress events until its result arrives.
    while True:
        try:
            msg = child.recv(timeout_s)
        except ChildDied as exc:
            events.put((rank, {"event": "result", "died": str(exc)}))
            return
        events.put((rank, msg))
        if msg.get("event") == "result":
            return


def run(config: RunConfig, *, err: IO[str] | None = None) -> RunReport:
    """Run every step; a crash of any process is recorded, never raised."""
    err = err or sys.stderr
    check_device(config.device)  # before any process starts: one line, never a child's traceback
    say = _Progress(err)
    store = run_store(config.store)
    report = RunReport(
        config={**asdict(config), "store": store.shown},  # never a password
        model_bytes=resolve_model(config.model, config.layout).nbytes,
    )
    pubs: list[Child] = []
    recvs: list[Child] = []
    started = time.monotonic()
    try:
        say.show(f"store: {store.shown}", final=True)
        common = ["--store", store.spec, "--model", config.model, "--device", config.device]
        if config.layout is not None:
            common += ["--layout", config.layout]
        where: tuple[list[str], list[str]] = ([], [])
        env = dict(store.env)
        if config.netns is not None:
            where = (["ip", "netns", "exec", config.netns[0]], ["ip", "netns", "exec", config.netns[1]])
            env["UCX_TLS"] = "tcp"
        for r in range(config.publishers):
            extra = config.upstream.argv() if config.upstream is not None else []
            args = ["--rank", str(r), "--ranks", str(config.publishers), *common, *extra,
                    "--progress", config.publisher_progress]  # fmt: skip
            pubs.append(Child(f"publisher {r}", "refitwire.refit._publisher", args, env=env, prefix=where[0]))
        for r in range(config.receivers):
            args = ["--rank", str(r), "--ranks", str(config.receivers),
                    "--publishers", str(config.publishers),
                    "--discover-timeout", str(config.discover_timeout_s),
                    "--read-timeout", str(config.read_timeout_s), *common,
                    "--progress", config.receiver_progress]  # fmt: skip
            if config.accept_unchecked:
                args.append("--accept-unchecked")
            recvs.append(Child(f"receiver {r}", "refitwire.refit._receiver", args, env=env, prefix=where[1]))
        for child in pubs + recvs:
            hello = child.recv(config.start_timeout_s)
            say.show(f"{child.name}: agent {hello['hello']} (pid {hello['pid']})", final=True)
        report.setup_s = time.monotonic() - started
        for step in range(1, config.steps + 1):
            report.steps.append(_step(config, step, pubs, recvs, say))
        report.anchor()
    except ChildDied as exc:
        report.config["aborted"] = str(exc)
        say.show(f"aborted: {exc}", final=True)
    finally:
        for child in pubs + recvs:
            child.ask_to_stop()
        for child in pubs + recvs:
            child.stop()
        store.cleanup()
    return report


def _step(
    config: RunConfig, step: int, pubs: list[Child], recvs: list[Child], say: _Progress
) -> dict[str, Any]:
    inject = config.inject if step == config.injection_step else None
    target = config.injection_rank
    record: dict[str, Any] = {"step": step, "inject": inject, "inject_rank": target if inject else None}
    commands = []
    for rank in range(len(pubs)):
        kind = inject if rank == target and inject not in (None, "kill-publisher") else None
        commands.append(
            {"cmd": "publish", "step": step, "inject": "overlap" if kind == "hostile-table" else kind}
        )
    published = [{"rank": rank, **a} for rank, a in enumerate(_call_all(pubs, commands, 120))]
    if inject == "kill-publisher" and pubs[target].alive():
        pubs[target].kill()  # after it published: the blob is there, its memory is gone
        published[target]["killed"] = True
        say.show(f"step {step}: killed publisher {target} (pid {pubs[target].pid})", final=True)
    record["publishers"] = published

    events: queue.Queue[tuple[int, dict[str, Any]]] = queue.Queue()
    threads = []
    results: dict[int, dict[str, Any]] = {}
    for rank, recv in enumerate(recvs):
        try:
            recv.send({"cmd": "refit", "step": step, "raw_reps": config.raw_reps})
        except ChildDied as exc:
            results[rank] = {"died": str(exc)}
            continue
        timeout = config.discover_timeout_s + config.read_timeout_s * 64 + 60
        t = threading.Thread(target=_pump, args=(recv, events, rank, timeout), daemon=True)
        t.start()
        threads.append(t)
    moving: dict[int, tuple[int, int, float]] = {}
    while len(results) < len(recvs):
        rank, msg = events.get()
        if msg.get("event") == "progress":
            moving[rank] = (msg["done"], msg["total"], msg["elapsed"])
            say.show(_progress_line(step, moving))
        elif msg.get("event") == "result":
            results[rank] = msg
    if moving:
        say.show(_progress_line(step, moving), final=True)
    for t in threads:
        t.join()
    live = [recv for rank, recv in enumerate(recvs) if "died" not in results[rank]]
    checks = dict(zip(map(id, live), _call_all(live, {"cmd": "check"}, 120), strict=True))
    rows = []
    for rank, recv in enumerate(recvs):
        row = _receiver_row(rank, results[rank])
        check = checks.get(id(recv))
        if check is not None and check.get("ok"):
            row["holds_step"], row["matches_truth"] = check["step"], check["matches_truth"]
        elif check is not None:
            row["matches_truth"], row["check_error"] = False, check["error"]
        rows.append(row)
    record["receivers"] = rows
    return record


def _call_all(
    children: list[Child], message: dict[str, Any] | list[dict[str, Any]], timeout_s: float
) -> list[dict[str, Any]]:
    """Send each child its command, then collect every answer: the children work at once.

    A child that is not running or dies answers ``{"ok": False, "error": ...}``.
    """
    messages = message if isinstance(message, list) else [message] * len(children)
    sent: list[str | None] = []
    for child, msg in zip(children, messages, strict=True):
        if not child.alive():
            sent.append("not running")
            continue
        try:
            child.send(msg)
            sent.append(None)
        except ChildDied as exc:
            sent.append(str(exc))
    answers = []
    deadline = time.monotonic() + timeout_s
    for child, error in zip(children, sent, strict=True):
        if error is not None:
            answers.append({"ok": False, "error": error})
            continue
        try:
            answers.append(child.recv(max(deadline - time.monotonic(), 0.001)))
        except ChildDied as exc:
            answers.append({"ok": False, "error": str(exc)})
    return answers


def _receiver_row(rank: int, msg: dict[str, Any]) -> dict[str, Any]:
    if "died" in msg:
        return {"rank": rank, "installed": False, "error": {"rule": "RECEIVER_DIED", "message": msg["died"]},
                "verdicts": [], "wire_bytes": 0, "transfer_s": 0.0, "matches_truth": False}  # fmt: skip
    row = {k: v for k, v in msg.items() if k != "event"}
    row["rank"] = rank
    return row


def _progress_line(step: int, moving: dict[int, tuple[int, int, float]]) -> str:
    parts = [f"step {step}"]
    for rank in sorted(moving):
        done, total, elapsed = moving[rank]
        rate = done / elapsed / 2**20 if elapsed > 0 else 0.0
        parts.append(f"receiver {rank} {done / 2**20:7.1f}/{total / 2**20:.1f} MiB {rate:7.1f} MiB/s")
    return "  ".join(parts)
