"""Where publishers post their blobs and receivers find them.

:class:`RendezvousStore` is the extension point (a key-value store of whole
blobs, one key per publisher rank). Two are shipped: :class:`DirectoryStore`,
the embedded default on one machine (one file per key, written to a temporary
name, flushed to disk and renamed into place, so a reader sees either the old
blob or the new one, never part of one), and ``RedisStore`` (``_redis_store``)
for receivers on other hosts. ``_open.open_store`` picks one from a spec string:
a ``redis://`` or ``rediss://`` URL, else a directory (a module of its own, above both, so
that the Redis store builds on this one without an import cycle).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ._errors import StoreCorrupt, StoreError, StoreUnavailable

__all__ = [
    "BatchReadStore",
    "DirectoryStore",
    "RendezvousStore",
    "RunStore",
    "SETTLE_NS",
    "StampedStore",
    "fetch_blobs",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "check_key",
]


@runtime_checkable
class RendezvousStore(Protocol):
    """A place where each publisher rank posts one blob under its own key."""

    def publish(self, key: str, blob: bytes) -> None:
        """Replace the blob under ``key`` atomically."""

    def keys(self) -> list[str]:
        """The keys that hold a complete blob, sorted."""

    def read(self, key: str) -> bytes | None:
        """The blob under ``key``, or ``None`` if it is gone."""

    def remove(self, key: str) -> None:
        """Drop ``key``; a missing key is fine."""


@runtime_checkable
class StampedStore(RendezvousStore, Protocol):
    """A store that can vouch, from what it keeps itself, that a blob has not changed."""

    def stamps(self) -> dict[str, Hashable | None]:
        """Every key :meth:`keys` would list, sorted, each with a stamp or ``None``.

        The stamp is taken before any read that follows the call, and a later call gives the
        same stamp for a key only if its blob was not replaced or written in between, by any
        writer. ``None``: the store cannot vouch for that blob now (read it)."""


@runtime_checkable
class BatchReadStore(RendezvousStore, Protocol):
    """A store that reads several blobs in fewer round trips than one each."""

    def read_blobs(self, keys: Sequence[str]) -> list[bytes | None]:
        """The blobs under ``keys``, in order (``None`` for one gone)."""


def fetch_blobs(store: RendezvousStore, keys: Sequence[str]) -> list[bytes | None]:
    """The blobs under ``keys``, in order: in batches where the store offers them, else one by one."""
    if isinstance(store, BatchReadStore):
        return store.read_blobs(keys)
    return [store.read(key) for key in keys]


_SUFFIX = ".blob"

#: A file is vouched for by its identity only once its last change is this much older than the
#: clock. Two writes inside one tick of the file system's timestamps (a jiffy on Linux, 1-2 s on
#: some others) can leave size and times as they were: git's "racy" entries. Until then it is read.
SETTLE_NS = 2_000_000_000


def _key_of(name: str) -> str | None:
    """The key a directory entry holds, or ``None`` for a temporary or a stray file."""
    return name[: -len(_SUFFIX)] if name.endswith(_SUFFIX) and not name.startswith(".") else None


def check_key(key: str) -> str:
    if not key or key.startswith(".") or "/" in key or "\\" in key or "\0" in key:
        raise ValueError(f"{key!r} is not a store key: want a plain name not starting with '.'")
    return key


class DirectoryStore:
    """One file per key in ``root``: ``<key>.blob``; temporaries are dot-files and never listed.

    A blob's stamp is its file's identity: device, inode, size, modification and change times
    (nanoseconds). A publish renames a new file into place, which has another inode than the
    one it replaces; a write in place moves both times. The stamp is ``None`` until the file's
    last change is ``settle_ns`` old (:data:`SETTLE_NS`), so two writes inside one timestamp
    tick are never taken for none. The times are the file system's and the clock is this
    machine's: on a network file system, set ``settle_ns`` above the hosts' clock skew."""

    def __init__(self, root: str | os.PathLike[str], *, settle_ns: int = SETTLE_NS) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.settle_ns = settle_ns

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.root)!r})"

    def publish(self, key: str, blob: bytes) -> None:
        final = self.root / (check_key(key) + _SUFFIX)
        tmp = self.root / f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.root, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        finally:
            os.close(dir_fd)

    def keys(self) -> list[str]:
        return sorted(key for p in self.root.iterdir() if (key := _key_of(p.name)) is not None)

    def stamps(self) -> dict[str, Hashable | None]:
        settled_before = time.time_ns() - self.settle_ns
        found: dict[str, Hashable | None] = {}
        with os.scandir(self.root) as entries:
            for entry in entries:
                key = _key_of(entry.name)
                if key is None:
                    continue
                try:
                    st = entry.stat()
                except FileNotFoundError:  # removed since the listing
                    continue
                identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                found[key] = identity if max(st.st_mtime_ns, st.st_ctime_ns) <= settled_before else None
        return dict(sorted(found.items()))

    def read(self, key: str) -> bytes | None:
        try:
            return (self.root / (check_key(key) + _SUFFIX)).read_bytes()
        except FileNotFoundError:
            return None

    def remove(self, key: str) -> None:
        (self.root / (check_key(key) + _SUFFIX)).unlink(missing_ok=True)


_URL_SCHEMES = ("redis", "rediss")


@dataclass(frozen=True)
class RunStore:
    """The store of one run, as its child processes and its report get it."""

    spec: str  # for child command lines: no secrets
    shown: str  # for reports and logs
    env: dict[str, str] = field(default_factory=dict)  # secrets travel through the environment
    cleanup: Callable[[], None] = lambda: None
