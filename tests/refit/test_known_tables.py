"""A receiver reuses a publisher's decoded table only while its blob is unchanged, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from refitwire import PublishedShard, PublishedTensor, wrap_rendezvous_blob
from refitwire.refit import DirectoryStore, KnownTables, RendezvousStore, TableRejected


def blob(step: int, agent: str = "pub-0", tensors: int = 2) -> bytes:
    table = [
        PublishedTensor(name=f"w{i}", dtype="torch.float32", elsize=4, full_shape=(4,),
                        shards=(PublishedShard(agent_name=agent, device_id=0, addr=4096 * (i + 1),
                                               shard_offset=(0,), shape=(4,), digest=f"{step:032x}"),))
        for i in range(tensors)
    ]  # fmt: skip
    return wrap_rendezvous_blob(b"meta", agent, "", table, step)


def test_an_unchanged_table_is_reused_and_a_changed_one_decoded_again(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.publish("rank-0", blob(1))
    store.publish("rank-1", blob(1, "pub-1"))
    tables = KnownTables(store)
    scan = tables.scan()
    assert scan.ready == ["rank-0", "rank-1"]
    first = tables.payload("rank-0")
    assert (tables.reused, tables.decoded) == (0, 1)
    tables.reset_counts()
    tables.scan()
    assert tables.payload("rank-0") is first and (tables.reused, tables.decoded) == (1, 0)
    store.publish("rank-0", blob(2))  # a new step: new stamp and digests, same size
    tables.reset_counts()
    tables.scan()
    again = tables.payload("rank-0")
    assert again is not first and again.publisher_step == 2 and (tables.reused, tables.decoded) == (0, 1)
    assert tables.payload("rank-1").publisher_step == 1  # never decoded before: decoded now


def test_an_empty_or_removed_table_is_not_counted_and_a_refused_one_is_refused_every_time(
    tmp_path: Path,
) -> None:
    store = DirectoryStore(tmp_path)
    store.publish("rank-0", blob(1, tensors=0))
    store.publish("rank-1", blob(1, "pub-1"))
    tables = KnownTables(store)
    scan = tables.scan()
    assert (scan.ready, scan.empty, scan.readable) == (["rank-1"], 1, 2)
    store.remove("rank-1")
    assert tables.scan().ready == []
    broken = blob(1).replace(b'"elsize": 4', b'"elsize": 2', 1)  # ELSIZE_DTYPE: found only by a full read
    store.publish("rank-2", broken)
    for _ in range(2):
        assert tables.scan().ready == ["rank-2"]
        with pytest.raises(TableRejected) as caught:
            tables.payload("rank-2")
        assert caught.value.rule == "ELSIZE_DTYPE"


class CountingStore(DirectoryStore):
    """A directory store that counts the blobs fetched from it."""

    reads = 0

    def read(self, key: str) -> bytes | None:
        self.reads += 1
        return super().read(key)


class UnstampedStore:
    """A store with no stamps (a third party's): only the four calls of the protocol."""

    def __init__(self, inner: CountingStore) -> None:
        self.publish, self.keys, self.read, self.remove = inner.publish, inner.keys, inner.read, inner.remove


def test_a_blob_the_store_vouches_for_is_not_fetched_and_a_replaced_one_is(tmp_path: Path) -> None:
    store = CountingStore(tmp_path, settle_ns=0)
    for rank in range(3):
        store.publish(f"rank-{rank}", blob(1, f"pub-{rank}"))
    tables = KnownTables(store)
    assert len(tables.scan().ready) == 3 and store.reads == 3
    first = tables.payload("rank-0")
    scan = tables.scan()
    assert (scan.ready, scan.readable, scan.vouched, store.reads) == (["rank-0", "rank-1", "rank-2"], 3, 3, 3)
    assert tables.fetched == 3  # all in the first scan
    assert tables.payload("rank-0") is first
    store.publish("rank-0", blob(2))  # renamed into place: another inode, same size
    tables.reset_counts()
    scan = tables.scan()
    assert (scan.vouched, store.reads, tables.fetched) == (2, 4, 1)
    assert tables.payload("rank-0").publisher_step == 2


@pytest.mark.parametrize("kind", ["a store without stamps", "a directory blob not yet settled"])
def test_a_blob_the_store_cannot_vouch_for_is_fetched_every_time_and_compared(
    tmp_path: Path, kind: str
) -> None:
    counting = CountingStore(tmp_path)  # the default settle_ns: blobs written now are not vouched for
    store: RendezvousStore = UnstampedStore(counting) if kind == "a store without stamps" else counting
    store.publish("rank-0", blob(1))
    tables = KnownTables(store)
    for _ in range(3):
        assert tables.scan().vouched == 0
    first = tables.payload("rank-0")
    tables.scan()
    assert tables.payload("rank-0") is first  # the same bytes: reused, not decoded again
    assert counting.reads == 4
