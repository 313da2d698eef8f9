"""The refit over a real redis-server: publishers in their own processes, real NIXL reads.

Each fault gives a clear verdict or an error naming the store, and the
receiver's weights stay exactly as they were: the server restarting between
discovery polls or down for a whole step, a connection refused at start, a key
holding garbage, a blob from another namespace, a stale blob from an earlier step.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refitwire.refit._errors import NixlMissing

pytest.importorskip("refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing)
torch = pytest.importorskip("torch")

from _redis import RedisServer, free_port, served  # noqa: E402
from refitwire import wrap_rendezvous_blob  # noqa: E402
from refitwire.refit import (  # noqa: E402
    DiscoveryTimeout,
    RedisStore,
    StoreCorrupt,
    StoreUnavailable,
    TableRejected,
    Verdict,
)
from refitwire.refit._model import MODELS  # noqa: E402
from refitwire.refit._proc import Child  # noqa: E402
from refitwire.refit._receiver import Receiver  # noqa: E402
from test_refit import snapshot, untouched  # noqa: E402  (the directory-store refit's helpers)

pytestmark = [pytest.mark.nixl, pytest.mark.redis]

MODEL = MODELS["tiny"]
PUBLISHERS = 2
NAMESPACE = "pubs"
PASSWORD = "pw-Zq81-never-shown"
_steps = itertools.count(1)


class Publishers:
    """Two publisher processes posting to one Redis namespace."""

    def __init__(self, url: str) -> None:
        self.children = [
            Child(f"publisher {r}", "refitwire.refit._publisher",
                  ["--rank", str(r), "--ranks", str(PUBLISHERS), "--store", url, "--model", "tiny"])
            for r in range(PUBLISHERS)
        ]  # fmt: skip
        self.agents = [c.recv(120)["hello"] for c in self.children]

    def publish(self, step: int) -> None:
        for child in self.children:
            got = child.call({"cmd": "publish", "step": step, "inject": None}, 60)
            assert got["ok"], got

    def stop(self) -> None:
        for child in self.children:
            child.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from served(tmp_path_factory.mktemp("redis"))


@pytest.fixture(scope="module")
def pubs(server: RedisServer) -> Iterator[Publishers]:
    p = Publishers(server.url(NAMESPACE))
    yield p
    p.stop()


def make_receiver(url: str, rank: int = 0, **kw: Any) -> Receiver:
    kw.setdefault("discover_timeout_s", 10.0)
    kw.setdefault("read_timeout_s", 10.0)
    return Receiver(rank, 2, MODEL, RedisStore(url), publishers=PUBLISHERS, **kw)


@pytest.fixture(scope="module")
def receiver(server: RedisServer, pubs: Publishers) -> Iterator[Receiver]:
    r = make_receiver(server.url(NAMESPACE))
    yield r
    r.close()


def installed(pubs: Publishers, receiver: Receiver) -> int:
    step = next(_steps)
    pubs.publish(step)
    result = receiver.refit(step)
    assert result.installed, result.error or result.verdicts
    return step


def test_two_receivers_refit_over_redis(server: RedisServer, pubs: Publishers, receiver: Receiver) -> None:
    other = make_receiver(server.url(NAMESPACE), rank=1)
    try:
        step = next(_steps)
        pubs.publish(step)
        for r in (receiver, other):
            result = r.refit(step)
            assert result.installed and {v.verdict for v in result.verdicts} == {Verdict.VERIFIED}
            assert r.step == step and r.matches_truth()
    finally:
        other.close()


def test_a_stale_blob_from_an_earlier_step_is_stale_and_installs_nothing(
    pubs: Publishers, receiver: Receiver
) -> None:
    installed(pubs, receiver)
    before = snapshot(receiver)
    result = receiver.refit(next(_steps))  # nobody published this step: the blobs are the last step's
    assert result.error is None and not result.installed
    assert {v.verdict for v in result.verdicts} == {Verdict.STALE}
    assert untouched(receiver, before) and receiver.matches_truth()


def _own_namespace(server: RedisServer, pubs: Publishers, name: str) -> tuple[int, RedisStore]:
    """A fresh step published, and a namespace of our own holding only rank 0's blob."""
    step = next(_steps)
    pubs.publish(step)
    blob = RedisStore(server.url(NAMESPACE)).read("rank-00000")
    assert blob is not None
    store = RedisStore(server.url(name))
    store.publish("rank-00000", blob)
    return step, store


def test_discovery_times_out_with_counts_over_redis(server: RedisServer, pubs: Publishers) -> None:
    step, store = _own_namespace(server, pubs, "counts")
    store.publish("rank-00001", wrap_rendezvous_blob(b"meta", "empty-rank", "", [], step))
    r = make_receiver(server.url("counts"), discover_timeout_s=0.5)
    try:
        err = r.refit(step).error
        assert isinstance(err, DiscoveryTimeout)
        assert (err.expected, err.seen, err.readable, err.empty) == (2, 2, 2, 1)
        assert str(err) == (
            f"RedisStore('{server.url('counts')}'): "
            "1 of 2 non-empty table(s) after 0.5 s: 2 seen, 2 readable, 1 empty [DISCOVERY_TIMEOUT]"
        )
    finally:
        r.close()


def test_a_blob_from_another_namespace_is_never_seen(server: RedisServer, pubs: Publishers) -> None:
    step = next(_steps)
    pubs.publish(step)  # into "pubs"
    r = make_receiver(server.url("another-run"), discover_timeout_s=0.5)
    try:
        result = r.refit(step)
        assert isinstance(result.error, DiscoveryTimeout)
        assert (result.error.seen, result.error.readable) == (0, 0)
        assert r.step is None and r.weights == {}
    finally:
        r.close()


def test_a_key_holding_garbage_is_rejected_naming_it(server: RedisServer, pubs: Publishers) -> None:
    step, store = _own_namespace(server, pubs, "garbage")
    store.publish("rank-00001", b"\x00\xffnot a blob")
    r = make_receiver(server.url("garbage"))
    try:
        result = r.refit(step)
        assert isinstance(result.error, TableRejected), result.error
        assert result.error.source == "rank-00001" and str(result.error).startswith("rank-00001: ")
        assert str(result.error).startswith(f"rank-00001: in RedisStore('{server.url('garbage')}'): ")
        assert result.wire_bytes == 0 and not result.installed and r.weights == {}
    finally:
        r.close()


def test_a_namespace_holding_garbage_fails_the_step_naming_the_store(
    server: RedisServer, pubs: Publishers
) -> None:
    RedisStore(server.url()).client.set("refitwire:rendezvous:not-a-hash", b"garbage")
    r = make_receiver(server.url("not-a-hash"))
    try:
        result = r.refit(next(_steps))
        assert isinstance(result.error, StoreCorrupt)
        assert str(result.error).startswith(f"redis://127.0.0.1:{server.port}/0?namespace=not-a-hash: ")
        assert result.to_json()["error"]["rule"] == "STORE_CORRUPT"
        assert not result.installed and r.weights == {}
    finally:
        r.close()


def test_a_server_restart_between_discovery_polls_is_ridden_over(
    server: RedisServer, pubs: Publishers, receiver: Receiver
) -> None:
    installed(pubs, receiver)
    store = RedisStore(server.url(NAMESPACE))
    published = store.keys()
    for key in published:
        store.remove(key)  # the receiver now polls an empty namespace
    step = next(_steps)
    results: list[Any] = []
    polling = threading.Thread(target=lambda: results.append(receiver.refit(step)))
    polling.start()
    try:
        time.sleep(0.3)
        server.restart()  # killed and started again on the same port, between polls
        time.sleep(0.3)
        pubs.publish(step)  # the publishers' pooled connections were killed too
    finally:
        polling.join()
    assert results[0].installed, results[0].error
    assert receiver.step == step and receiver.matches_truth()


def test_a_server_down_for_the_step_fails_it_naming_the_store_and_installs_nothing(
    server: RedisServer, pubs: Publishers, receiver: Receiver
) -> None:
    installed(pubs, receiver)
    before = snapshot(receiver)
    server.stop()
    try:
        result = receiver.refit(next(_steps))
    finally:
        server.start()
    assert isinstance(result.error, StoreUnavailable)
    assert str(result.error).startswith(
        f"redis://127.0.0.1:{server.port}/0?namespace={NAMESPACE}: cannot list"
    )
    assert "Connection refused" in str(result.error) and result.error.rule == "STORE_UNAVAILABLE"
    assert not result.installed and untouched(receiver, before)
    installed(pubs, receiver)  # back: the next step installs


# -- the whole run through the CLI --------------------------------------------------------


@pytest.mark.slow
def test_the_cli_refits_over_a_password_redis_and_never_shows_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from refitwire.cli import main

    server = RedisServer(tmp_path / "redis", password=PASSWORD)
    try:
        report_path = tmp_path / "report.json"
        argv = ["refit", "--model", "tiny", "--publishers", "2", "--receivers", "1", "--steps", "2",
                "--store", server.url(), "--json", str(report_path)]  # fmt: skip
        assert main(argv) == 0
        out, err = capsys.readouterr()
        report = report_path.read_text()
        assert out.splitlines()[-1] == "result: every step verified and installed"
        shown = json.loads(report)["config"]["store"]
        assert shown.startswith(f"redis://:***@127.0.0.1:{server.port}/0?namespace=refit-")
        assert f"store: {shown}" in err
        for text in (out, err, report):
            assert PASSWORD not in text
        assert RedisStore(server.url()).client.dbsize() == 0  # the run dropped the namespace it made
    finally:
        server.stop()


@pytest.mark.slow
def test_the_cli_with_redis_refusing_connections_fails_every_step_naming_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from refitwire.cli import main

    port = free_port()
    argv = ["refit", "--model", "tiny", "--publishers", "1", "--receivers", "1", "--steps", "1",
            "--store", f"redis://:{PASSWORD}@127.0.0.1:{port}/0?namespace=job&retries=0",
            "--json", str(tmp_path / "r.json")]  # fmt: skip
    assert main(argv) == 1
    out, err = capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text())
    (step,) = report["steps"]
    assert "cannot publish after 1 tries" in step["publishers"][0]["error"]
    (row,) = step["receivers"]
    assert row["error"]["rule"] == "STORE_UNAVAILABLE" and not row["installed"]
    assert row["error"]["message"] == (
        f"redis://:***@127.0.0.1:{port}/0?namespace=job: cannot list after 1 tries: "
        f"Error 111 connecting to 127.0.0.1:{port}. Connection refused. [STORE_UNAVAILABLE]"
    )
    assert "failed: STORE_UNAVAILABLE" in out and row["error"]["message"] in out
    for text in (out, err, json.dumps(report)):
        assert PASSWORD not in text


def test_a_run_config_never_shows_the_password() -> None:
    from refitwire.refit._run import RunConfig

    assert PASSWORD not in repr(RunConfig(store=f"redis://:{PASSWORD}@h:1/0"))
