"""The per-shard digest, bit-exact with the released upstream algorithm (SPEC.md, "Digest").

The bytes are read as little-endian int32 words in 4 KiB rows; a handful of int64 sums
(count, row sums, position-weighted row sums, the tail, ragged bytes) are hashed with
BLAKE2b-128. It is a function of the bytes alone: not of shape, dtype label or where the
bytes sit. Reordering words inside one 4 KiB row is not detected (a property of the format).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

ROW_WORDS = 1024
_MASK = (1 << 64) - 1

#: Inputs of at least this many bytes have their row sums split across threads (numpy
#: releases the GIL in the reduction, so the rows are summed on several cores at once).
THREADED_MIN_BYTES = 8 << 20
_WORKERS = max(1, min(4, os.cpu_count() or 1))
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def tensor_digest(data: Any) -> str:
    """Digest of bytes-like data, a numpy array, or a torch tensor (any strides, any device)."""
    raw = _as_uint8(data)
    digest = RowDigest(raw.size)
    body = digest.rows * ROW_BYTES
    if digest.rows:
        digest.add_rows(0, raw[:body])
    return digest.finish(raw[body:])


ROW_BYTES = ROW_WORDS * 4


class RowDigest:
    """:func:`tensor_digest` of ``nbytes`` bytes fed in pieces, so bytes can be digested as they arrive.

    Feed every whole 4 KiB row once, in any order and grouping (:meth:`add_rows`), then
    :meth:`finish` with the bytes after the last whole row. The sums are the same ones
    :func:`tensor_digest` takes (it is this, fed in one piece), added mod 2**64.
    """

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.rows = nbytes // ROW_BYTES
        self._fed = 0
        self._sum = 0
        self._weighted = 0

    def add_rows(self, first: int, data: np.ndarray[Any, np.dtype[np.uint8]]) -> None:
        """Rows ``first, first + 1, ...`` of the input: ``data`` is a whole number of rows."""
        count = data.size // ROW_BYTES
        if data.size != count * ROW_BYTES or not 0 <= first <= self.rows - count:
            raise ValueError(
                f"rows {first}..{first + count} ({data.size} bytes) are not whole rows of the input"
            )
        if not count:
            return
        sums = _row_sums(data.view("<i4").reshape(count, ROW_WORDS))
        weights = np.arange(first + 1, first + count + 1, dtype=np.int64)
        self._sum += int(sums.sum(dtype=np.int64))
        self._weighted += int(np.dot(weights, sums))
        self._fed += count

    def finish(self, rest: np.ndarray[Any, np.dtype[np.uint8]]) -> str:
        """The digest, given the bytes after the last whole row."""
        if self._fed != self.rows or rest.size != self.nbytes - self.rows * ROW_BYTES:
            raise ValueError(f"{self._fed} of {self.rows} rows and {rest.size} trailing bytes fed")
        scalars = [self.nbytes]
        if self.rows:
            scalars += [self._sum, self._weighted]
        whole = rest.size - rest.size % 4
        tail = rest[:whole].view("<i4").astype(np.int64)
        if tail.size:
            scalars += [int(tail.sum()), int(np.dot(np.arange(1, tail.size + 1, dtype=np.int64), tail))]
        if rest.size % 4:
            scalars += [int(rest[whole:].sum(dtype=np.int64)), rest.size % 4]
        h = hashlib.blake2b(digest_size=16)
        for value in scalars:
            h.update((value & _MASK).to_bytes(8, "little"))
        return h.hexdigest()


def tensor_digests(pieces: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]) -> list[str]:
    """:func:`tensor_digest` of each of many contiguous uint8 arrays, in a few numpy calls for all.

    A refit step verifies thousands of small shards; digesting them one by one costs a dozen
    numpy calls each, under the GIL, more than their bytes. Here the whole rows of every
    piece are summed into one array (one numpy call per piece, no copy), the per-piece sums and weighted sums
    taken with ``np.add.reduceat``, and only the tail after the last whole row and the final
    BLAKE2b are per piece. The sums wrap mod 2**64 exactly as :class:`RowDigest`'s do.
    """
    rows = [p.size // ROW_BYTES for p in pieces]
    counts = np.array([n for n in rows if n], dtype=np.int64)
    sums = weighted = np.zeros(0, dtype=np.int64)
    if counts.size:
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        row_sums = np.empty(int(counts.sum()), dtype=np.int64)
        at = 0
        for piece, n in zip(pieces, rows):  # one numpy call per piece, summed in place: no copy
            if n:
                np.sum(piece[: n * ROW_BYTES].view("<i4").reshape(n, ROW_WORDS), axis=1, dtype=np.int64,
                       out=row_sums[at : at + n])  # fmt: skip
                at += n
        weights = np.arange(1, row_sums.size + 1, dtype=np.int64) - np.repeat(starts, counts)
        sums = np.add.reduceat(row_sums, starts)
        weighted = np.add.reduceat(row_sums * weights, starts)
    out, k = [], 0
    for piece, n in zip(pieces, rows):
        digest = RowDigest(piece.size)
        if n:
            digest._sum, digest._weighted, digest._fed = int(sums[k]), int(weighted[k]), n
            k += 1
        out.append(digest.finish(piece[n * ROW_BYTES :]))
    return out


def _row_sums(block: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The exact int64 sum of each row of int32 words, on several threads when it pays."""
    rows = block.shape[0]
    if _WORKERS < 2 or rows * ROW_WORDS * 4 < THREADED_MIN_BYTES:
        sums: np.ndarray[Any, np.dtype[np.int64]] = block.sum(axis=1, dtype=np.int64)
        return sums
    out = np.empty(rows, dtype=np.int64)
    step = -(-rows // _WORKERS)
    jobs = [
        _executor().submit(np.sum, block[i : i + step], axis=1, dtype=np.int64, out=out[i : i + step])
        for i in range(0, rows, step)
    ]
    for job in jobs:
        job.result()
    return out


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="refitwire-digest")
        return _pool


def _as_uint8(data: Any) -> np.ndarray[Any, np.dtype[np.uint8]]:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    if type(data).__module__.startswith("torch"):
        flat = data.detach().reshape(-1).contiguous()
        if flat.device.type != "cpu":
            flat = flat.cpu()
        return flat.view(_torch_uint8()).numpy()  # type: ignore[no-any-return]
    raise TypeError(f"cannot digest {type(data).__name__}: expected bytes, a numpy array or a torch tensor")


def _torch_uint8() -> Any:
    # Imported on first use only: the codec and the conformance kit do not need torch.
    return importlib.import_module("torch").uint8
