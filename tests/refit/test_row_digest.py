"""The digest fed row by row as bytes land equals the digest of the whole shard."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from refitwire import tensor_digest
from refitwire._digest import ROW_BYTES, RowDigest


@pytest.mark.parametrize(
    "nbytes", [0, 3, 4, 4095, ROW_BYTES, ROW_BYTES + 7, 37 * ROW_BYTES + 4094, 300 * ROW_BYTES]
)
def test_rows_in_any_order_and_grouping_give_the_whole_digest(nbytes: int) -> None:
    data = np.random.default_rng(nbytes).integers(0, 256, size=nbytes, dtype=np.uint8)
    digest = RowDigest(nbytes)
    cuts = sorted(
        {0, digest.rows, *random.Random(nbytes).sample(range(digest.rows + 1), min(digest.rows, 9))}
    )
    groups = list(itertools.pairwise(cuts))
    random.Random(1).shuffle(groups)
    for lo, hi in groups:
        digest.add_rows(lo, data[lo * ROW_BYTES : hi * ROW_BYTES])
    assert digest.finish(data[digest.rows * ROW_BYTES :]) == tensor_digest(data)


def test_a_missing_row_or_a_partial_row_is_refused() -> None:
    data = np.zeros(3 * ROW_BYTES, dtype=np.uint8)
    digest = RowDigest(data.size)
    with pytest.raises(ValueError, match="not whole rows"):
        digest.add_rows(0, data[: ROW_BYTES + 1])
    digest.add_rows(0, data[: 2 * ROW_BYTES])
    with pytest.raises(ValueError, match="2 of 3 rows"):
        digest.finish(data[3 * ROW_BYTES :])


@pytest.mark.parametrize("seed", [0, 1])
def test_many_pieces_digested_together_equal_each_digested_alone(seed: int) -> None:
    """The verifier's batch (tensor_digests) is tensor_digest per piece: empty, ragged, one row,
    exact rows, words of all ones (negative int32) and pieces of a shared buffer, one of them
    at an odd address."""
    from refitwire import tensor_digest
    from refitwire.engine import tensor_digests

    rng = np.random.default_rng(seed)
    sizes = [
        0,
        1,
        3,
        4,
        5,
        4095,
        4096,
        4097,
        8195,
        12295,
        393216,
        *rng.integers(0, 200_000, size=40).tolist(),
    ]
    pieces = [rng.integers(0, 256, size=int(n), dtype=np.uint8) for n in sizes]
    pieces.append(np.full(4096 * 50 + 6, 255, dtype=np.uint8))
    shared = rng.integers(0, 256, size=1 << 20, dtype=np.uint8)
    pieces += [
        shared[a : a + n] for a, n in ((0, 8192), (8192, 4096 * 3 + 2), (40_000, 70_000), (40_001, 9_003))
    ]
    assert tensor_digests(pieces) == [tensor_digest(p) for p in pieces]
    assert tensor_digests([]) == []
