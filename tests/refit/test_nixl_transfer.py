"""Real bytes through real NIXL (UCX, DRAM) between real processes."""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from refitwire.refit._errors import NixlMissing

# NIXL raises a plain ImportError when missing; pytest 9 skips only on ModuleNotFoundError unless told.
_nixl = pytest.importorskip(
    "refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing
)

from refitwire.refit import ReadRun, SourceShard, plan_reads  # noqa: E402

if TYPE_CHECKING:
    from refitwire.refit._nixl import Agent

pytestmark = pytest.mark.nixl

HERE = Path(__file__).parent
MiB = 1 << 20
HELLO_TIMEOUT_S = 60.0
READ_TIMEOUT_S = 30.0


def pattern(nbytes: int, seed: int) -> np.ndarray:
    # Same bytes as _publisher.pattern, recomputed here without importing it.
    return np.random.default_rng(seed).integers(0, 256, size=nbytes, dtype=np.uint8)


@dataclass
class Publisher:
    proc: subprocess.Popen[bytes]
    name: str
    metadata: bytes
    addr: int
    nbytes: int
    seed: int

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)  # in case a test froze it
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(b"stop\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def start_publisher(name: str, nbytes: int, seed: int) -> Publisher:
    read_fd, write_fd = os.pipe()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "_publisher.py"), name, str(nbytes), str(seed), str(write_fd)],
        stdin=subprocess.PIPE,
        pass_fds=[write_fd],
        env=env,
    )
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as hello_pipe:
        ready, _, _ = select.select([hello_pipe], [], [], HELLO_TIMEOUT_S)
        line = hello_pipe.readline() if ready else b""
    if not line:
        proc.kill()
        proc.wait()
        pytest.fail(f"publisher {name!r} sent no hello (exit code {proc.returncode})")
    hello = json.loads(line)
    metadata = base64.b64decode(hello["metadata"])
    return Publisher(proc, hello["name"], metadata, hello["addr"], hello["nbytes"], seed)


@pytest.fixture(scope="module")
def pub_a() -> Iterator[Publisher]:
    pub = start_publisher("pub-a", 4 * MiB, seed=1)
    yield pub
    pub.stop()


@pytest.fixture(scope="module")
def pub_b() -> Iterator[Publisher]:
    pub = start_publisher("pub-b", 1 * MiB, seed=2)
    yield pub
    pub.stop()


@pytest.fixture
def receiver() -> Iterator[Agent]:
    with _nixl.Agent(f"receiver-{time.monotonic_ns()}") as agent:
        yield agent


def test_reads_runs_from_one_publisher(receiver: Agent, pub_a: Publisher) -> None:
    dst = np.full(3 * MiB, 0xAA, dtype=np.uint8)
    (region,) = receiver.register([dst])
    assert (region.addr, region.nbytes, region.mem_type) == (dst.ctypes.data, dst.nbytes, "DRAM")
    assert receiver.add_peer(pub_a.metadata) == pub_a.name
    base, src = dst.ctypes.data, pattern(pub_a.nbytes, pub_a.seed)
    runs = [
        (pub_a.addr, base, 4096),  # head of the region
        (pub_a.addr + 1_234_567, base + 10_001, 2 * MiB),  # middle, odd offsets, large
        (pub_a.addr + pub_a.nbytes - 999, base + 3 * MiB - 999, 999),  # the very tail
        (pub_a.addr + 77, base + 5000, 1),  # a single byte
    ]
    receiver.read(pub_a.name, runs, timeout_s=READ_TIMEOUT_S)

    want = np.full_like(dst, 0xAA)
    for remote, local, n in runs:
        want[local - base : local - base + n] = src[remote - pub_a.addr : remote - pub_a.addr + n]
    assert np.array_equal(dst, want)  # also: nothing outside the runs was touched


def test_reads_two_publishers_at_once(receiver: Agent, pub_a: Publisher, pub_b: Publisher) -> None:
    torch = pytest.importorskip("torch")
    dst = torch.zeros(2 * MiB, dtype=torch.uint8)  # a torch CPU tensor as destination
    receiver.register([dst])
    for pub in (pub_a, pub_b):
        receiver.add_peer(pub.metadata)
    base = dst.data_ptr()
    # Interleave 64 KiB blocks from both publishers into one buffer.
    block = 64 * 1024
    runs: dict[str, list[tuple[int, int, int]]] = {pub_a.name: [], pub_b.name: []}
    for i in range(dst.numel() // block):
        pub = (pub_a, pub_b)[i % 2]
        remote = pub.addr + (i * 4099) % (pub.nbytes - block)
        runs[pub.name].append((remote, base + i * block, block))
    receiver.read_many(runs, timeout_s=READ_TIMEOUT_S)

    got = dst.numpy()
    for pub in (pub_a, pub_b):
        src = pattern(pub.nbytes, pub.seed)
        for remote, local, n in runs[pub.name]:
            off = remote - pub.addr
            assert np.array_equal(got[local - base : local - base + n], src[off : off + n])


def test_planned_refit_of_a_column_sharded_tensor(
    receiver: Agent, pub_a: Publisher, pub_b: Publisher
) -> None:
    # A (64, 96) float32 tensor split into column halves: the left half lives
    # in pub-a at +8192, the right half in pub-b at +4096 (mid-region addrs).
    full_shape, elsize, half = (64, 96), 4, (64, 48)
    nbytes = 64 * 48 * elsize
    left = pattern(pub_a.nbytes, pub_a.seed)[8192 : 8192 + nbytes].view(np.float32).reshape(half)
    right = pattern(pub_b.nbytes, pub_b.seed)[4096 : 4096 + nbytes].view(np.float32).reshape(half)
    full = np.concatenate([left, right], axis=1)
    shards = [
        SourceShard((0, 0), half, pub_a.addr + 8192, pub_a.name),
        SourceShard((0, 48), half, pub_b.addr + 4096, pub_b.name),
        SourceShard((0, 0), half, 0xDEAD, "replica-never-read"),
    ]
    offset, shape = (5, 17), (40, 70)  # straddles both halves
    runs = plan_reads("w", full_shape, elsize, offset, shape, shards)

    dst = np.zeros(shape, dtype=np.float32)
    receiver.register([dst])
    for pub in (pub_a, pub_b):
        receiver.add_peer(pub.metadata)
    receiver.read_many(_by_agent(runs, dst.ctypes.data), timeout_s=READ_TIMEOUT_S)

    want = full[5:45, 17:87]
    assert dst.tobytes() == want.tobytes()


def _by_agent(runs: list[ReadRun], base: int) -> dict[str, list[tuple[int, int, int]]]:
    out: dict[str, list[tuple[int, int, int]]] = {}
    for r in runs:
        out.setdefault(r.agent, []).append((r.src_addr, base + r.dst_offset, r.nbytes))
    return out


def test_bad_ranges_fail_before_or_at_prepare(receiver: Agent, pub_a: Publisher) -> None:
    dst = np.zeros(4096, dtype=np.uint8)
    receiver.register([dst])
    with pytest.raises(KeyError, match="unknown peer"):
        receiver.read("nobody", [(pub_a.addr, dst.ctypes.data, 16)], timeout_s=5)
    receiver.add_peer(pub_a.metadata)
    with pytest.raises(ValueError, match="not inside memory registered"):
        receiver.read(pub_a.name, [(pub_a.addr, dst.ctypes.data + 4000, 200)], timeout_s=5)
    with pytest.raises(RuntimeError, match="NIXL_ERR_NOT_FOUND"):  # beyond the remote region
        past_end = pub_a.addr + pub_a.nbytes - 8
        receiver.read(pub_a.name, [(past_end, dst.ctypes.data, 16)], timeout_s=5)
    receiver.read(pub_a.name, [], timeout_s=5)  # nothing to do is fine


def test_killed_publisher_fails_cleanly(receiver: Agent) -> None:
    pub = start_publisher("pub-killed", 1 * MiB, seed=3)
    dst = np.zeros(4096, dtype=np.uint8)
    receiver.register([dst])
    receiver.add_peer(pub.metadata)
    pub.proc.kill()
    pub.proc.wait()

    started = time.monotonic()
    with pytest.raises((RuntimeError, TimeoutError)):
        receiver.read(pub.name, [(pub.addr, dst.ctypes.data, 4096)], timeout_s=10)
    assert time.monotonic() - started < 15


def test_killed_publisher_before_add_peer_fails_cleanly(receiver: Agent) -> None:
    pub = start_publisher("pub-gone", 1 * MiB, seed=4)
    pub.proc.kill()
    pub.proc.wait()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="add_remote_agent"):
        receiver.add_peer(pub.metadata)
    assert time.monotonic() - started < 15


def test_frozen_publisher_times_out(receiver: Agent) -> None:
    # A publisher that is alive but not progressing never completes a read.
    pub = start_publisher("pub-frozen", 1 * MiB, seed=5)
    try:
        dst = np.zeros(4096, dtype=np.uint8)
        receiver.register([dst])
        receiver.add_peer(pub.metadata)
        os.kill(pub.proc.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="pub-frozen"):
            receiver.read(pub.name, [(pub.addr, dst.ctypes.data, 4096)], timeout_s=1.5)
        assert 1.5 <= time.monotonic() - started < 10
    finally:
        pub.stop()
