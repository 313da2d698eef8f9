"""What a receiver already knows of each publisher's table: reused while the table is unchanged.

Each poll first asks a :class:`StampedStore` which blobs it can vouch have not changed since
they were read here (from what the store keeps: a file's identity, a Redis ``WATCH``); those
are not fetched at all. Every other blob is read and compared with the bytes kept from its
last read: one ``memcmp``, about 13x faster here than hashing them (BLAKE2b: 36 ms against
2.7 ms for 34 MB), never a parse. Either way an unchanged table's entry count (the quorum
read) and, once decoded, its payload are taken from here instead of being read again. The
bytes kept cost about a quarter of the decoded table's memory (2.6 MB beside 10 MB for
4,922 entries). A changed blob, a new key or a key gone drops what was known; a blob the
codec refuses is never kept, so it is refused again on every read. Pure Python; no NIXL, no
torch.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from refitwire import InvalidBlob, RendezvousPayload, unwrap_rendezvous_blob

from ._errors import TableRejected
from ._store import RendezvousStore, StampedStore, fetch_blobs

__all__ = ["KnownTables", "Scan"]


@dataclass
class _Known:
    blob: bytes  # as last read: the next read of the key is compared with it
    entries: int
    stamp: Hashable | None = None  # the store's, taken before the blob was read
    payload: RendezvousPayload | None = None  # decoded, once it was part of a quorum


@dataclass
class Scan:
    """One poll of the store: the non-empty tables in key order, and what was counted
    (``vouched``: blobs the store's stamps said were unchanged, so not fetched)."""

    ready: list[str] = field(default_factory=list)
    keys: int = 0
    readable: int = 0
    empty: int = 0
    vouched: int = 0


@dataclass
class KnownTables:
    """The tables one receiver has read, by store key. ``reused`` and ``decoded`` count, since
    :meth:`reset_counts`, the tables taken from here and the ones decoded anew; ``fetched``,
    the blobs read from the store."""

    store: RendezvousStore
    _known: dict[str, _Known] = field(default_factory=dict)
    reused: int = 0
    decoded: int = 0
    fetched: int = 0

    def reset_counts(self) -> None:
        self.reused = self.decoded = self.fetched = 0

    def scan(self) -> Scan:
        """Read every blob the store does not vouch for; count the entries only of those that changed."""
        store = self.store
        stamps = store.stamps() if isinstance(store, StampedStore) else dict.fromkeys(store.keys())
        found = Scan(keys=len(stamps))
        for gone in self._known.keys() - stamps.keys():
            del self._known[gone]
        unread = [key for key, stamp in stamps.items() if not self._vouched(key, stamp)]
        fetched = dict(zip(unread, fetch_blobs(store, unread)))
        for key, stamp in stamps.items():
            if key not in fetched:
                known = self._known[key]
                found.vouched += 1
            else:
                blob = fetched[key]
                if blob is None:  # replaced or removed between list and read
                    self._known.pop(key, None)
                    continue
                self.fetched += 1
                last = self._known.get(key)
                if last is None or last.blob != blob:
                    entries = self._unwrap(key, blob, with_tensors=False).entry_count()
                    last = self._known[key] = _Known(blob, entries)
                last.stamp = stamp
                known = last
            found.readable += 1
            if known.entries == 0:
                found.empty += 1
            else:
                found.ready.append(key)
        return found

    def _vouched(self, key: str, stamp: Hashable | None) -> bool:
        known = self._known.get(key)
        return stamp is not None and known is not None and known.stamp == stamp

    def payload(self, key: str) -> RendezvousPayload:
        """The decoded table of ``key`` as the last :meth:`scan` read it."""
        known = self._known[key]
        if known.payload is not None:
            self.reused += 1
            return known.payload
        known.payload = self._unwrap(key, known.blob, with_tensors=True)
        self.decoded += 1
        return known.payload

    def _unwrap(self, key: str, blob: bytes, *, with_tensors: bool) -> RendezvousPayload:
        try:  # lazy: a warm step looks only at geometry and digests, and builds no model
            return unwrap_rendezvous_blob(blob, with_tensors=with_tensors, lazy=True)
        except InvalidBlob as exc:  # the key is the source; the store is named too, as a timeout names it
            self._known.pop(key, None)
            raise TableRejected(exc.rule, key, f"in {self.store}: {exc}") from None
