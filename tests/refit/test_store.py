"""The directory store: atomic replace, one key per rank, partial files never listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from refitwire.refit import DirectoryStore, RendezvousStore


def test_publish_read_replace(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path / "rv")
    assert isinstance(store, RendezvousStore)
    assert store.keys() == []
    store.publish("rank-00001", b"one")
    store.publish("rank-00000", b"zero")
    store.publish("rank-00001", b"one, again")
    assert store.keys() == ["rank-00000", "rank-00001"]
    assert store.read("rank-00001") == b"one, again"
    assert store.read("rank-00009") is None
    store.remove("rank-00000")
    store.remove("rank-00000")  # twice is fine
    assert store.keys() == ["rank-00001"]


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


@pytest.mark.parametrize("key", ["", ".hidden", "a/b", "..", "a\0b"])
def test_keys_are_plain_names(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="not a store key"):
        DirectoryStore(tmp_path).publish(key, b"x")
