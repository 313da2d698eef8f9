"""Where publishers post their blobs and receivers find them.

:class:`RendezvousStore` is the extension point (a key-value store of whole
blobs, one key per publisher rank); :class:`DirectoryStore` is the one shipped:
one file per key, written to a temporary name, flushed to disk and renamed into
place, so a reader sees either the old blob or the new one, never part of one.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["DirectoryStore", "RendezvousStore"]


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


_SUFFIX = ".blob"


def _check_key(key: str) -> str:
    if not key or key.startswith(".") or "/" in key or "\\" in key or "\0" in key:
        raise ValueError(f"{key!r} is not a store key: want a plain name not starting with '.'")
    return key


class DirectoryStore:
    """One file per key in ``root``: ``<key>.blob``; temporaries are dot-files and never listed."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.root)!r})"

    def publish(self, key: str, blob: bytes) -> None:
        final = self.root / (_check_key(key) + _SUFFIX)
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
        return sorted(
            p.name[: -len(_SUFFIX)]
            for p in self.root.iterdir()
            if p.name.endswith(_SUFFIX) and not p.name.startswith(".")
        )

    def read(self, key: str) -> bytes | None:
        try:
            return (self.root / (_check_key(key) + _SUFFIX)).read_bytes()
        except FileNotFoundError:
            return None

    def remove(self, key: str) -> None:
        (self.root / (_check_key(key) + _SUFFIX)).unlink(missing_ok=True)
