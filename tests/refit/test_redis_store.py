"""The Redis store on its own: URLs, secrets, TLS, faults of a real server, what it asks of Redis.

Every test that talks to Redis starts its own ``redis-server`` (``_redis.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

redis = pytest.importorskip("redis")

from _redis import RedisServer, free_port  # noqa: E402
from refitwire.refit import KnownTables, RedisStore, StoreCorrupt, StoreUnavailable  # noqa: E402
from refitwire.refit._redis_store import KEY_PREFIX, PASSWORD_ENV, parse_redis_spec, run_redis_store  # noqa: E402

pytestmark = pytest.mark.redis  # most start a server; the URL tests at the top need none

PASSWORD = "pw-Zq81-never-shown"


def never_shows(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text, text


# -- URLs and secrets (no server) ------------------------------------------------------------


def test_the_shown_url_masks_the_password_and_keeps_the_rest() -> None:
    store = RedisStore(f"redis://ops:{PASSWORD}@cache.internal:6380/2?namespace=job-7&ttl=600")
    assert repr(store) == str(store) == "RedisStore('redis://ops:***@cache.internal:6380/2?namespace=job-7')"
    assert store.hash_key == KEY_PREFIX + "job-7" and store.spec.ttl_s == 600
    assert store.spec.password == PASSWORD
    never_shows(PASSWORD, store.spec.client_url, store.spec.shown, repr(store.client))
    query = RedisStore(f"redis://h:1/0?password={PASSWORD}&ssl_password={PASSWORD}x")
    never_shows(PASSWORD, repr(query))
    assert "ssl_password=***" in repr(query)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("namespace=../x", "namespace '../x' is not a plain name"),
        ("ttl=0", "ttl='0' is not a positive integer"),
        ("ttl=soon", "ttl='soon' is not a positive integer"),
        ("retries=-1", "retries='-1' is not a non-negative integer"),
    ],
)
def test_bad_parameters_are_usage_errors_that_hide_the_password(query: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^redis://:\*\*\*@h:1/0: ") as info:
        parse_redis_spec(f"redis://:{PASSWORD}@h:1/0?{query}")
    assert message in str(info.value)
    never_shows(PASSWORD, str(info.value))


def test_the_cli_refuses_a_bad_store_url_without_showing_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from refitwire.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["refit", "--store", f"redis://:{PASSWORD}@h:1/db0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "database 'db0' is not a number" in err
    never_shows(PASSWORD, err)


def test_rediss_builds_a_tls_client() -> None:
    store = RedisStore("rediss://h:6380/0?ssl_cert_reqs=none")
    assert store.client.connection_pool.connection_class is redis.SSLConnection
    assert store.client.connection_pool.connection_kwargs["ssl_cert_reqs"] == "none"
    assert RedisStore("redis://h:6380/0").client.connection_pool.connection_class is redis.Connection


def test_a_run_gets_a_fresh_namespace_and_hands_the_password_to_children_by_environment() -> None:
    run = run_redis_store(f"redis://:{PASSWORD}@h:1/0")
    assert run.env == {PASSWORD_ENV: PASSWORD}
    never_shows(PASSWORD, run.spec, run.shown)
    ns = parse_redis_spec(run.spec).namespace
    assert ns.startswith("refit-") and ns != run_redis_store("redis://h:1/0").spec
    assert run.shown == f"redis://:***@h:1/0?namespace={ns}"
    assert parse_redis_spec(run_redis_store("redis://h:1/0?namespace=job-7").spec).namespace == "job-7"


# -- a real server ---------------------------------------------------------------------------


def test_a_password_server_accepts_the_url_or_the_environment_and_refuses_a_wrong_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RedisServer(tmp_path, password=PASSWORD)
    try:
        store = RedisStore(server.url("job"))
        store.publish("rank-00000", b"blob")
        monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
        assert RedisStore(server.url("job", with_password=False)).read("rank-00000") == b"blob"
        monkeypatch.delenv(PASSWORD_ENV)
        for url in (server.url("job", with_password=False), server.url("job").replace(PASSWORD, "wrong-pw")):
            with pytest.raises(StoreUnavailable, match="authentication failed") as info:
                RedisStore(url).keys()
            assert str(info.value).startswith(f"redis://{':***@' if 'wrong' in url else ''}127.0.0.1:")
            never_shows(PASSWORD, str(info.value))
    finally:
        server.stop()
    never_shows(PASSWORD, repr(store))


def test_connection_refused_at_start_names_the_store(tmp_path: Path) -> None:
    port = free_port()  # nobody listens here
    store = RedisStore(f"redis://:{PASSWORD}@127.0.0.1:{port}/0?namespace=job&retries=2")
    with pytest.raises(StoreUnavailable) as info:
        store.keys()
    assert str(info.value) == (
        f"redis://:***@127.0.0.1:{port}/0?namespace=job: cannot list after 3 tries: "
        f"Error 111 connecting to 127.0.0.1:{port}. Connection refused. [STORE_UNAVAILABLE]"
    )
    with pytest.raises(StoreUnavailable, match="cannot publish"):
        store.publish("rank-00000", b"x")


def test_a_server_restart_between_calls_is_ridden_over(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))
    store.publish("rank-00000", b"before")
    redis_server.restart()  # same port, killed: the pooled connection is dead, the data gone
    assert store.keys() == []
    store.publish("rank-00000", b"after")
    assert store.read("rank-00000") == b"after"


def test_a_call_made_while_the_server_is_down_retries_until_it_is_back(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))  # default: 5 retries, about 2.5 s of backoff
    store.publish("rank-00000", b"x")
    redis_server.stop()
    back = threading.Timer(0.4, redis_server.start)
    back.start()
    try:
        assert store.keys() == []  # waited for the restarted (empty) server
    finally:
        back.join()


def test_a_server_down_longer_than_the_retries_is_unavailable(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job") + "&retries=1")
    store.publish("rank-00000", b"x")
    redis_server.stop()
    with pytest.raises(StoreUnavailable, match=r"cannot read after 2 tries: .*Connection refused"):
        store.read("rank-00000")


def test_a_namespace_key_that_holds_garbage_is_a_corrupt_store(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))
    store.client.set(KEY_PREFIX + "job", b"\x00not a hash")
    for call in (store.keys, lambda: store.read("rank-00000"), lambda: store.publish("rank-00000", b"x")):
        with pytest.raises(StoreCorrupt) as info:
            call()
        assert str(info.value).startswith(f"redis://127.0.0.1:{redis_server.port}/0?namespace=job: cannot ")
        assert "'refitwire:rendezvous:job' is not a rendezvous hash (WRONGTYPE" in str(info.value)
        assert info.value.rule == "STORE_CORRUPT"


def test_a_server_that_refuses_a_write_is_unavailable_naming_why(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))
    store.client.config_set("maxmemory", "1")  # full: every write is refused
    with pytest.raises(
        StoreUnavailable, match="cannot publish: the server refused: command not allowed when used memory"
    ):
        store.publish("rank-00000", b"x")
    assert store.keys() == []  # reads still work


def test_fields_no_store_wrote_are_never_listed(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))
    store.publish("rank-00000", b"x")
    store.client.hset(KEY_PREFIX + "job", mapping={b"\xff\xfe": b"x", b"../etc": b"x", b".hidden": b"x"})
    assert store.keys() == ["rank-00000"]


def test_ttl_expires_the_namespace_and_is_off_by_default(redis_server: RedisServer) -> None:
    plain, timed = RedisStore(redis_server.url("a")), RedisStore(redis_server.url("b") + "&ttl=30")
    plain.publish("rank-00000", b"x")
    timed.publish("rank-00000", b"x")
    assert plain.client.ttl(plain.hash_key) == -1  # no expiry
    assert 0 < timed.client.ttl(timed.hash_key) <= 30
    timed.client.expire(timed.hash_key, 1)
    timed.publish("rank-00001", b"y")  # a publish renews it
    assert timed.client.ttl(timed.hash_key) > 1


def test_it_never_scans_the_database_and_reuses_one_connection(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url("job"))
    store.client.config_resetstat()
    connections = store.client.info("stats")["total_connections_received"]
    for i in range(50):
        store.publish(f"rank-{i % 4:05d}", b"x" * 1000)
        store.keys()
        store.read("rank-00000")
    store.remove("rank-00000")
    stats = store.client.info("commandstats")
    assert {"cmdstat_keys", "cmdstat_scan", "cmdstat_hgetall"}.isdisjoint(stats), sorted(stats)
    assert {"cmdstat_hset", "cmdstat_hkeys", "cmdstat_hget", "cmdstat_hdel"} <= set(stats)
    assert store.client.info("stats")["total_connections_received"] == connections  # the pool's one


@pytest.mark.parametrize(
    "change",
    [
        "a plain client's HSET",
        "removed and written back, the same bytes",
        "the watching connection killed",
        "the server restarted",
    ],
)
def test_stamps_move_on_whatever_changes_the_namespace_or_ends_the_watch(
    redis_server: RedisServer, change: str
) -> None:
    """The stamp comes from the server (a WATCH), so a writer that knows nothing of stamps, a
    write that leaves the same bytes, a dropped connection and a lost dataset all count as
    changes; none leaves a stamp standing."""
    store = RedisStore(redis_server.url("job"))
    store.publish("rank-00000", b"zero")
    before = store.stamps()
    assert store.stamps() == before  # nothing happened
    plain = redis.Redis(host="127.0.0.1", port=redis_server.port)
    if change == "a plain client's HSET":
        plain.hset(KEY_PREFIX + "job", "rank-00000", b"ZERO")
    elif change == "the watching connection killed":
        assert plain.client_kill_filter(_type="normal", skipme=True) >= 1  # every other client
    elif change == "the server restarted":
        redis_server.restart()
        store.publish("rank-00000", b"zero")  # the same bytes again, on a new server
    else:  # what a stamp read from the bytes (a hash, a length) would take for no change
        plain.hdel(KEY_PREFIX + "job", "rank-00000")
        plain.hset(KEY_PREFIX + "job", "rank-00000", b"zero")
    after = store.stamps()
    assert list(after) == ["rank-00000"] and after != before
    assert store.stamps() == after  # and a new watch holds from there
    plain.close()


def test_stamps_of_a_server_down_are_unavailable_and_move_on_once_it_is_back(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url("job") + "&retries=1")
    store.publish("rank-00000", b"zero")
    before = store.stamps()
    redis_server.stop()
    with pytest.raises(StoreUnavailable, match=r"cannot list after 2 tries: .*Connection refused"):
        store.stamps()
    redis_server.start()  # empty: nothing was saved
    store.publish("rank-00000", b"zero")
    after = store.stamps()
    assert list(after) == ["rank-00000"] and after != before


def test_a_write_landing_just_as_one_watch_ends_is_seen_by_the_next(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next WATCH starts before the last one's EXEC: a write right after that EXEC is inside it."""
    store = RedisStore(redis_server.url("job"))
    store.publish("rank-00000", b"zero")
    store.stamps()
    plain = redis.Redis(host="127.0.0.1", port=redis_server.port)
    execute = redis.client.Pipeline.execute

    def execute_then_write(self: redis.client.Pipeline, raise_on_error: bool = True) -> list[object]:
        result = execute(self, raise_on_error)
        plain.hset(KEY_PREFIX + "job", "rank-00000", b"ZERO")
        return result

    monkeypatch.setattr(redis.client.Pipeline, "execute", execute_then_write)
    unchanged = store.stamps()  # the last watch ends unchanged; the write lands just after
    monkeypatch.undo()
    assert store.stamps() != unchanged
    plain.close()


def test_a_receiver_fetches_no_blob_while_the_namespace_is_unchanged(redis_server: RedisServer) -> None:
    from test_known_tables import blob  # the same tables as the directory's tests

    store = RedisStore(redis_server.url("job"))
    for rank in range(3):
        store.publish(f"rank-{rank}", blob(1, f"pub-{rank}"))
    tables = KnownTables(store)
    tables.scan()
    first = tables.payload("rank-1")
    store.client.config_resetstat()
    scan = tables.scan()
    assert scan.vouched == 3 and {"cmdstat_hget", "cmdstat_hmget"}.isdisjoint(
        store.client.info("commandstats")
    )
    assert tables.payload("rank-1") is first
    store.client.hset(KEY_PREFIX + "job", "rank-1", blob(2, "pub-1"))  # same size; no store involved
    tables.reset_counts()
    scan = tables.scan()
    assert scan.vouched == 0 and store.client.info("commandstats")["cmdstat_hmget"]["calls"] == 1  # one batch
    assert tables.payload("rank-1").publisher_step == 2 and tables.decoded == 1


def test_a_run_drops_the_namespace_it_made_and_keeps_one_it_was_given(redis_server: RedisServer) -> None:
    made, given = run_redis_store(redis_server.url()), run_redis_store(redis_server.url("job-7"))
    for run in (made, given):
        RedisStore(run.spec).publish("rank-00000", b"x")
    made.cleanup()
    given.cleanup()
    assert RedisStore(made.spec).keys() == [] and RedisStore(given.spec).keys() == ["rank-00000"]


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not on PATH: cannot make a certificate for the TLS server")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    return cert, key


def test_a_real_tls_server_over_rediss(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    try:
        server = RedisServer(tmp_path / "tls", tls=(cert, key), password=PASSWORD)
    except RuntimeError as exc:
        pytest.skip(f"this redis-server cannot serve TLS: {exc}")
    try:
        url = server.url("job")
        assert url.startswith("rediss://")
        store = RedisStore(f"{url}&ssl_ca_certs={cert}")
        store.publish("rank-00000", bytes(range(256)))
        assert store.keys() == ["rank-00000"] and store.read("rank-00000") == bytes(range(256))
        with pytest.raises(StoreUnavailable, match="certificate verify failed"):
            RedisStore(url + "&retries=0").keys()  # not trusting the self-signed certificate
        with pytest.raises(StoreUnavailable):
            RedisStore(url.replace("rediss://", "redis://") + "&retries=0").keys()  # plain text to a TLS port
    finally:
        server.stop()
