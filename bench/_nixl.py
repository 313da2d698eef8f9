"""Cross-process NIXL READ throughput (UCX, DRAM) beside a plain memory copy of the same size."""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import subprocess
import sys
from typing import Any

import numpy as np
from refitwire.bench._timing import timed
from refitwire.wire import REPLY_FD, LineProcess, LinesError

__all__ = ["nixl_section"]

KiB, MiB = 1 << 10, 1 << 20
HELLO_TIMEOUT_S = 60.0


def _start_peer(nbytes: int) -> tuple[LineProcess, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    peer = LineProcess(
        [sys.executable, "-m", "refitwire.bench._nixl_peer", str(nbytes), REPLY_FD],
        env=env,
        stdout=subprocess.DEVNULL,  # NIXL logs to stdout
    )
    try:
        line = peer.reply(HELLO_TIMEOUT_S)
    except LinesError:
        peer.kill()
        raise RuntimeError(f"the NIXL publisher sent no hello (exit code {peer.proc.returncode})") from None
    return peer, json.loads(line)


def _stop(peer: LineProcess) -> None:
    peer.stop(b"stop", timeout_s=20)


def nixl_section(sizes: list[int], descriptors: tuple[int, int], reps: int) -> dict[str, Any]:
    """READ ``sizes`` bytes in one descriptor, then ``descriptors`` = (count, each) in one request."""
    from refitwire.refit import NixlMissing

    try:
        from refitwire.refit import Agent
    except NixlMissing as exc:  # NIXL absent; a broken import of ours still fails the bench
        return {"status": "not available", "reason": str(exc)}
    logging.getLogger("nixl").setLevel(logging.WARNING)  # its INFO lines go to stdout
    count, each = descriptors
    span = max(max(sizes), count * each)
    proc, hello = _start_peer(span)
    try:
        local = np.zeros(span, dtype=np.uint8)
        source = np.random.default_rng(2).integers(0, 256, size=span, dtype=np.uint8)
        with Agent(f"bench-reader-{os.getpid()}", progress="off") as agent:
            agent.register([local])
            peer = agent.add_peer(base64.b64decode(hello["metadata"]))
            remote, dst = hello["addr"], local.ctypes.data
            rows = []
            for size in sizes:
                read = timed(functools.partial(agent.read, peer, [(remote, dst, size)], timeout_s=60), reps)
                copy = timed(functools.partial(np.copyto, local[:size], source[:size]), reps)
                rows.append(_row(size, 1, read, copy))
            runs = [(remote + i * each, dst + i * each, each) for i in range(count)]
            read = timed(lambda: agent.read(peer, runs, timeout_s=60), reps)
            copy = timed(lambda: np.copyto(local[: count * each], source[: count * each]), reps)
            many = _row(count * each, count, read, copy)
            expected = np.random.default_rng(1).integers(0, 256, size=span, dtype=np.uint8)
            agent.read(peer, [(remote, dst, span)], timeout_s=60)
            intact = bool(np.array_equal(local, expected))
    finally:
        _stop(proc)
    large = [r for r in rows if r["bytes"] >= 16 * MiB]
    best_large = max((r["ratio_to_memcpy"] for r in large), default=None)
    return {
        "status": "measured",
        "progress_threads": "off (both sides)",
        "transport": "UCX, DRAM to DRAM, two processes",
        "bytes_verified": intact,
        "sizes": rows,
        "descriptors": dict(many, descriptors=count, each_bytes=each),
        "goal": {"what": "large READ >= 0.75 x memcpy", "value": best_large,
                 "met": None if best_large is None else best_large >= 0.75},
    }  # fmt: skip


def _row(nbytes: int, descriptors: int, read: dict[str, Any], copy: dict[str, Any]) -> dict[str, Any]:
    read_gbps = nbytes / read["best_s"] / 1e9
    copy_gbps = nbytes / copy["best_s"] / 1e9
    return {
        "bytes": nbytes,
        "descriptors": descriptors,
        "nixl_read": dict(read, gb_per_s=read_gbps),
        "memcpy": dict(copy, gb_per_s=copy_gbps),
        "ratio_to_memcpy": read_gbps / copy_gbps,
    }
