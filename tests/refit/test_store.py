"""The store contract, run against both stores: the directory and a real redis-server.

Publish, list, read, replace, remove, atomicity, namespaces, binary safety, key
rules. A ``redis`` case starts its own server (``_redis.py``); the directory's
own details (temporaries, a failed write) follow the contract.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from refitwire.refit import DirectoryStore, RendezvousStore, StampedStore, open_store
from refitwire.refit._store import fetch_blobs

#: ``open(namespace)``: a store of the kind under test; stores opened with one namespace share blobs.
Opener = Callable[[str], RendezvousStore]

CODEC_LIMIT = 64 * 2**20  # the reader's limit per blob (README: "64 MiB per blob")


@pytest.fixture(params=["directory", pytest.param("redis", marks=pytest.mark.redis)])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    if request.param == "directory":
        return lambda namespace: open_store(str(tmp_path / namespace))
    server = request.getfixturevalue("redis_server")
    return lambda namespace: open_store(server.url(namespace))


def test_publish_read_replace_remove(opener: Opener) -> None:
    store = opener("run-1")
    assert isinstance(store, RendezvousStore)
    assert store.keys() == []
    store.publish("rank-00001", b"one")
    store.publish("rank-00000", b"zero")
    store.publish("rank-00001", b"one, again")
    assert store.keys() == ["rank-00000", "rank-00001"]  # sorted, each once
    assert store.read("rank-00001") == b"one, again"
    assert store.read("rank-00009") is None
    store.remove("rank-00000")
    store.remove("rank-00000")  # twice is fine
    assert store.keys() == ["rank-00001"]
    assert store.read("rank-00000") is None


def test_a_restarted_publisher_replaces_its_own_key(opener: Opener) -> None:
    first, reader = opener("run-1"), opener("run-1")
    first.publish("rank-00000", b"before the restart")
    first.publish("rank-00001", b"the neighbour")
    again = opener("run-1")  # a new process: a new store object, a new connection
    again.publish("rank-00000", b"after the restart")
    assert reader.keys() == ["rank-00000", "rank-00001"]
    assert reader.read("rank-00000") == b"after the restart"
    assert reader.read("rank-00001") == b"the neighbour"


def test_namespaces_never_see_each_other(opener: Opener) -> None:
    mine, theirs = opener("run-1"), opener("run-2")
    mine.publish("rank-00000", b"mine")
    theirs.publish("rank-00000", b"theirs")
    theirs.publish("rank-00001", b"theirs too")
    assert mine.keys() == ["rank-00000"] and mine.read("rank-00000") == b"mine"
    assert mine.read("rank-00001") is None
    theirs.remove("rank-00000")
    assert mine.read("rank-00000") == b"mine"


def test_blobs_are_bytes_as_sent_up_to_the_codec_limit(opener: Opener) -> None:
    store = opener("run-1")
    every_byte = bytes(range(256)) * 3 + b"\r\n\0"
    store.publish("rank-00000", every_byte)
    store.publish("rank-00001", b"")
    assert store.read("rank-00000") == every_byte
    assert store.read("rank-00001") == b"" and store.keys() == ["rank-00000", "rank-00001"]
    big = os.urandom(4096) * (CODEC_LIMIT // 4096)
    store.publish("rank-00002", big)
    assert store.read("rank-00002") == big


def test_a_reader_sees_the_old_blob_or_the_new_one_never_a_part(opener: Opener) -> None:
    writer, reader = opener("run-1"), opener("run-1")
    old, new = b"o" * (4 << 20), b"n" * (4 << 20) + b"longer"
    writer.publish("rank-00000", old)
    stop = threading.Event()
    seen: list[bytes | None] = []

    def read_while_written() -> None:
        while not stop.is_set():
            seen.append(reader.read("rank-00000"))

    thread = threading.Thread(target=read_while_written)
    thread.start()
    try:
        for i in range(40):
            writer.publish("rank-00000", new if i % 2 == 0 else old)
    finally:
        stop.set()
        thread.join()
    assert seen
    assert all(s in (old, new) for s in seen), {len(s or b"") for s in seen}


@pytest.mark.parametrize("key", ["", ".hidden", "a/b", "..", "a\0b"])
def test_keys_are_plain_names(opener: Opener, key: str) -> None:
    store = opener("run-1")
    for call in (lambda: store.publish(key, b"x"), lambda: store.read(key), lambda: store.remove(key)):
        with pytest.raises(ValueError, match="not a store key"):
            call()


def test_many_blobs_are_read_in_order_with_none_for_one_gone(opener: Opener) -> None:
    store = opener("run-1")
    keys = [f"rank-{r:05d}" for r in range(40)]  # more than one Redis batch (READ_BATCH)
    for r, key in enumerate(keys):
        store.publish(key, bytes([r]) * (r + 1))
    store.remove("rank-00033")
    got = fetch_blobs(store, [*reversed(keys), "rank-99999"])
    assert got == [None if r == 33 else bytes([r]) * (r + 1) for r in reversed(range(40))] + [None]
    assert fetch_blobs(store, []) == []


# -- stamps: what the store vouches has not changed ------------------------------------------


@pytest.fixture
def stamped(opener: Opener, tmp_path: Path) -> Callable[[str], StampedStore]:
    """Stores that vouch at once: the directory's guard against writes inside one timestamp tick
    (``settle_ns``) is its own detail, tested below."""

    def open_stamped(namespace: str) -> StampedStore:
        store = opener(namespace)
        if isinstance(store, DirectoryStore):
            store = DirectoryStore(store.root, settle_ns=0)
        assert isinstance(store, StampedStore)
        return store

    return open_stamped


def test_stamps_list_the_keys_and_hold_while_nothing_is_written(
    stamped: Callable[[str], StampedStore],
) -> None:
    store = stamped("run-1")
    assert store.stamps() == {}
    store.publish("rank-00001", b"one")
    store.publish("rank-00000", b"zero")
    first = store.stamps()
    assert list(first) == store.keys() == ["rank-00000", "rank-00001"]
    assert None not in first.values()
    assert store.stamps() == first == store.stamps()


@pytest.mark.parametrize("write", ["replace, same size", "remove", "publish another key"])
def test_a_write_by_another_writer_moves_the_stamp(
    stamped: Callable[[str], StampedStore], write: str
) -> None:
    store, other = stamped("run-1"), stamped("run-1")  # two clients of one namespace
    store.publish("rank-00000", b"zero")
    before = store.stamps()
    if write == "replace, same size":
        other.publish("rank-00000", b"ZERO")
    elif write == "remove":
        other.remove("rank-00000")
    else:
        other.publish("rank-00001", b"one")
    after = store.stamps()
    if write == "remove":
        assert after == {}
    elif write == "replace, same size":
        assert after["rank-00000"] != before["rank-00000"]
    else:
        assert list(after) == ["rank-00000", "rank-00001"] and None not in after.values()


def test_a_spec_names_its_store(tmp_path: Path) -> None:
    assert isinstance(open_store(str(tmp_path / "rv")), DirectoryStore)
    with pytest.raises(ValueError, match="unknown store scheme 'etcd://'"):
        open_store("etcd://somewhere/x")


# -- the directory's own details ------------------------------------------------------------


def test_partial_and_foreign_files_are_not_listed(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    (tmp_path / ".rank-00000.123.abcd.tmp").write_bytes(b'{"schema": "mx.resh')  # a writer mid-way
    (tmp_path / "notes.txt").write_text("hi")
    store.publish("rank-00000", b"done")
    assert store.keys() == ["rank-00000"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".rank-00000.123.abcd.tmp",
        "notes.txt",
        "rank-00000.blob",
    ]


def test_a_file_is_vouched_for_only_once_it_has_settled(tmp_path: Path) -> None:
    """Two writes inside one timestamp tick can leave a file's size and times as they were;
    until its last change is ``settle_ns`` old, a file has no stamp and is read."""
    store = DirectoryStore(tmp_path)  # the default: two seconds
    store.publish("rank-00000", b"zero")
    assert store.stamps() == {"rank-00000": None}
    assert DirectoryStore(tmp_path, settle_ns=0).stamps()["rank-00000"] is not None


def test_a_blob_rewritten_in_place_by_a_foreign_writer_moves_the_stamp(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path, settle_ns=0)
    store.publish("rank-00000", b"zero")
    path = tmp_path / "rank-00000.blob"
    before, changed = store.stamps()["rank-00000"], path.stat().st_ctime_ns
    time.sleep(0.05)  # past a timestamp tick (inside one, only settle_ns keeps the stamp off)
    deadline = time.monotonic() + 3.0  # a file system with coarse timestamps ticks up to 2 s
    while path.stat().st_ctime_ns == changed and time.monotonic() < deadline:
        with open(path, "r+b") as fh:  # same inode, same size
            fh.write(b"ZERO")
        time.sleep(0.05)
    assert store.stamps()["rank-00000"] != before


def test_a_failed_write_leaves_the_old_blob_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DirectoryStore(tmp_path)
    store.publish("rank-00000", b"old")

    def boom(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        store.publish("rank-00000", b"new")
    assert store.read("rank-00000") == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["rank-00000.blob"]
