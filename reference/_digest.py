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
        whole = rest.size - rest.size % 4
        tail = rest[:whole].view("<i4").astype(np.int64)
        scalars = (
            self.nbytes, self._sum, self._weighted, int(tail.sum()),
            int(np.dot(np.arange(1, tail.size + 1, dtype=np.int64), tail)),
            int(rest[whole:].sum(dtype=np.int64)), rest.size - whole,
        )  # fmt: skip
        return _hashed(np.array([[v & _MASK for v in scalars]], dtype=np.uint64))[0]


def _hashed(table: np.ndarray[Any, np.dtype[np.uint64]]) -> list[str]:
    """The digest of each row of ``table``: BLAKE2b-128 of the digest's int64 scalars (SPEC.md,
    "Digest"), mod 2**64, little-endian. A row holds, in the order they are hashed: the byte
    count; the sum and weighted sum of the whole rows, hashed when there are any; the sum and
    position-weighted sum of the int32 words after them, when there are any; the sum and count
    of the 1-3 ragged bytes after those, when there are any. Which are hashed follows from the
    byte count, so the rows are hashed in groups of the same columns."""
    nbytes = table[:, 0]
    kinds = (nbytes >= ROW_BYTES) + 2 * (nbytes % ROW_BYTES >= 4) + 4 * (nbytes % 4 > 0)
    out: list[str] = [""] * len(table)
    blake2b = hashlib.blake2b
    for kind in np.unique(kinds).tolist():
        which = np.flatnonzero(kinds == kind)
        columns = [
            0,
            *((1, 2) if kind & 1 else ()),
            *((3, 4) if kind & 2 else ()),
            *((5, 6) if kind & 4 else ()),
        ]
        scalars = memoryview(table[np.ix_(which, columns)].astype("<u8").tobytes())
        width = 8 * len(columns)
        for j, i in enumerate(which.tolist()):
            out[i] = blake2b(scalars[j * width : (j + 1) * width], digest_size=16).hexdigest()
    return out


def slice_digests(
    buffer: np.ndarray[Any, np.dtype[np.uint8]], offsets: Sequence[int], sizes: Sequence[int]
) -> list[str]:
    """:func:`tensor_digest` of ``buffer[o : o + n]`` for each offset ``o`` and size ``n``.

    A refit step verifies thousands of small shards staged in one buffer, most of them of a
    few sizes (an MoE layer's experts) and laid out at even spacing. Slices of one size at one
    spacing are a run: one strided view, whose rows are summed in one numpy call that releases
    the GIL, where one call per slice would hold it (and two verifier threads would hand it
    back and forth more than they sum). Raises ValueError for a slice outside ``buffer``.
    """
    if buffer.ndim != 1 or buffer.dtype != np.uint8 or buffer.strides != (1,):
        raise ValueError("slice_digests reads a one-dimensional contiguous uint8 buffer")
    at, n = np.asarray(offsets, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
    if at.shape != n.shape or at.ndim != 1:
        raise ValueError(f"{at.size} offsets and {n.size} sizes: one of each per slice")
    if at.size and ((at < 0).any() or (n < 0).any() or (at + n > buffer.size).any()):
        raise ValueError(f"a slice lies outside the buffer of {buffer.size} bytes")
    order = np.lexsort((at, n))  # equal sizes together, each size by address
    at, n = at[order], n[order]
    gaps = np.diff(at)
    new_size = np.ones(at.size, dtype=bool)
    new_size[1:] = n[1:] != n[:-1]
    # A slice starts a run where its size is new, or where its gap from the one before is not
    # the gap before that inside the same size (this may split a run in two, never join two).
    starts = new_size.copy()
    starts[2:] |= ~new_size[1:-1] & (gaps[1:] != gaps[:-1])
    first = np.flatnonzero(starts).tolist()
    runs = []
    for a, b in zip(first, [*first[1:], at.size]):
        spacing = int(gaps[a]) if b - a > 1 else 0
        view = buffer[int(at[a]) : int(at[b - 1] + n[a])]
        runs.append(np.lib.stride_tricks.as_strided(view, (b - a, int(n[a])), (spacing, 1), writeable=False))
    digests = _run_digests(runs)
    out = [""] * len(digests)
    for j, i in enumerate(order.tolist()):
        out[i] = digests[j]
    return out


def _run_digests(runs: Sequence[np.ndarray[Any, np.dtype[np.uint8]]]) -> list[str]:
    """The digest of each row of each run: ``runs`` are two-dimensional uint8 arrays whose rows
    are the inputs (any row spacing, each row contiguous), the digests in row order.

    Each of a run's scalars takes one numpy call for all its inputs: the sums of their whole
    4 KiB rows (no copy), the sum and the position-weighted sum (``einsum`` with the positions,
    no product array) of those and of the words after them, the ragged bytes. The scalars of
    every input are laid out as one table, so that each input costs one BLAKE2b of a slice of
    its bytes. The sums wrap mod 2**64 exactly as :class:`RowDigest`'s do.
    """
    count = sum(run.shape[0] for run in runs)
    table = np.zeros((count, 7), dtype=np.int64)  # each input's scalars, as _hashed takes them
    at = 0
    for run in runs:
        (k, size), scalars = run.shape, table[at : at + run.shape[0]]
        at += k
        n, m, r = size // ROW_BYTES, size % ROW_BYTES // 4, size % 4
        scalars[:, 0] = size
        if n:
            sums = run[:, : n * ROW_BYTES].view("<i4").reshape(k, n, ROW_WORDS).sum(axis=2, dtype=np.int64)
            scalars[:, 1] = sums.sum(axis=1)
            scalars[:, 2] = np.einsum("kn,n->k", sums, np.arange(1, n + 1, dtype=np.int64))
        if m:
            words = run[:, n * ROW_BYTES : n * ROW_BYTES + m * 4].view("<i4")
            scalars[:, 3] = words.sum(axis=1, dtype=np.int64)
            scalars[:, 4] = np.einsum("km,m->k", words, np.arange(1, m + 1, dtype=np.int64))
        if r:
            scalars[:, 5], scalars[:, 6] = run[:, size - r :].sum(axis=1, dtype=np.int64), r
    return _hashed(table.view(np.uint64))  # the same bits: two's complement is mod 2**64


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
