"""The cross-host refit again, with the Redis store: nothing but the network connects the sides.

Redis runs inside the publishers' namespace, bound to that namespace's veth
address only (not loopback);
publishers post to it there, receivers in the other namespace reach it over
the veth link, then read the shards over UCX/TCP on the same link. No directory
is shared. Needs root (``ip netns``) and redis-server; skipped otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from refitwire.refit._errors import NixlMissing

pytest.importorskip("refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing)
pytest.importorskip("redis")

from _redis import RedisServer
from refitwire.refit._run import RunConfig, run
from test_netns import namespaces, rx_bytes

pytestmark = [pytest.mark.nixl, pytest.mark.redis, pytest.mark.slow]
__all__ = ["namespaces"]  # the fixture, from the directory-store test

PUB_ADDR = "10.199.0.1"  # the publishers' end of the veth pair (test_netns.py)
PORT = 6390
PASSWORD = "pw-Zq81-never-shown"


def _connects_from(ns: str, host: str) -> bool:
    probe = f"import socket; socket.create_connection(({host!r}, {PORT}), timeout=2).close()"
    done = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", probe],
                          capture_output=True, timeout=30, check=False)  # fmt: skip
    return done.returncode == 0


def test_refit_across_network_namespaces_with_the_redis_store(
    namespaces: tuple[str, str], tmp_path: Path
) -> None:
    pub_ns, recv_ns = namespaces
    server = RedisServer(tmp_path / "redis", host=PUB_ADDR, port=PORT, password=PASSWORD,
                         prefix=["ip", "netns", "exec", pub_ns])  # fmt: skip
    try:
        # Bound to the veth address alone, not to loopback: reached over the link.
        assert _connects_from(recv_ns, PUB_ADDR) and not _connects_from(pub_ns, "127.0.0.1")
        dev = recv_ns[:-1] + "vb"
        before = rx_bytes(recv_ns, dev)
        config = RunConfig(publishers=2, receivers=2, steps=2, model="tiny", netns=namespaces,
                           store=server.url("netns"), discover_timeout_s=20, read_timeout_s=20)  # fmt: skip
        report = run(config).to_json()
        assert report["ok"], report
        assert report["config"]["store"] == f"redis://:***@{PUB_ADDR}:{PORT}/0?namespace=netns"
        wire = report["totals"]["wire_bytes"]
        assert wire > 0 and rx_bytes(recv_ns, dev) - before >= wire
        assert PASSWORD not in str(report)
    finally:
        server.stop()
