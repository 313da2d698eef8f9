"""The same refit between two network namespaces: UCX over TCP across a veth link.

What runs across hosts, shown on one machine: publishers in one namespace,
receivers in another, ``UCX_TLS=tcp``, and the only path between them a veth
pair with private test addresses. Needs root (``ip netns``); skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from refitwire.refit._errors import NixlMissing

# NIXL raises a plain ImportError when missing; pytest 9 skips only on ModuleNotFoundError unless told.
pytest.importorskip("refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing)

from refitwire.refit._run import RunConfig, run

pytestmark = [pytest.mark.nixl, pytest.mark.slow]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def namespaces() -> Iterator[tuple[str, str]]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create network namespaces")
    tag = f"rw{os.getpid() % 100000}"
    a, b = f"{tag}a", f"{tag}b"
    try:
        _ip("netns", "add", a)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot create a network namespace here: {exc.stderr.decode().strip()}")
    try:
        _ip("netns", "add", b)
        _ip("link", "add", f"{tag}va", "type", "veth", "peer", "name", f"{tag}vb")
        for ns, dev, addr in ((a, f"{tag}va", "10.199.0.1/24"), (b, f"{tag}vb", "10.199.0.2/24")):
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", addr, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield a, b
    finally:
        for ns in (a, b):  # deleting a namespace deletes its end of the veth pair
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)


def rx_bytes(ns: str, dev: str) -> int:
    out = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/statistics/rx_bytes"],
                         check=True, capture_output=True, text=True, timeout=30)  # fmt: skip
    return int(out.stdout)


def test_refit_across_network_namespaces_over_tcp(namespaces: tuple[str, str], tmp_path: Path) -> None:
    recv_ns = namespaces[1]
    dev = recv_ns[:-1] + "vb"
    before = rx_bytes(recv_ns, dev)
    config = RunConfig(publishers=2, receivers=1, steps=1, model="tiny", netns=namespaces,
                       store=str(tmp_path), discover_timeout_s=20, read_timeout_s=20)  # fmt: skip
    report = run(config).to_json()
    assert report["ok"], report
    wire = report["totals"]["wire_bytes"]
    assert wire > 0
    # Every byte the receiver read came in over the veth link.
    assert rx_bytes(recv_ns, dev) - before >= wire
