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
def test_many_slices_digested_together_equal_each_digested_alone(seed: int) -> None:
    """The verifier's batch (slice_digests) is tensor_digest per slice: empty, ragged, one row,
    exact rows, words of all ones (negative int32), slices at odd addresses, overlapping ones,
    and runs of one size at one spacing (summed as one strided view), one of them broken by
    another gap, in any order."""
    from refitwire.wire import slice_digests

    rng = np.random.default_rng(seed)
    buffer = rng.integers(0, 256, size=4 << 20, dtype=np.uint8)
    buffer[3 << 20 :] = 255
    slices = [(0, 0), (9, 1), (17, 3), (64, 4), (100, 5), (200, 4095), (8192, 4096), (13_001, 4097)]
    slices += [(o, 8195) for o in range(20_000, 20_000 + 30 * 8195, 8195)]  # back to back
    slices += [(o, 12_296) for o in range(400_000, 400_000 + 20 * 16_384, 16_384)]  # evenly spaced
    slices += [(o, 12_296) for o in range(800_001, 800_001 + 5 * 20_000, 20_000)]  # same size, odd, other gap
    slices += [(o, 55_488) for o in (1 << 20, (1 << 20) + 55_488, (1 << 20) + 3 * 55_488)]  # a gap breaks it
    slices += [((3 << 20) + 7, 4096 * 50 + 6), (40_000, 70_000), (40_001, 9_003)]
    slices += [(int(o), int(n)) for o, n in zip(rng.integers(0, 2 << 20, 40), rng.integers(0, 200_000, 40))]
    rng.shuffle(slices)
    offsets, sizes = [o for o, _ in slices], [n for _, n in slices]
    expected = [tensor_digest(buffer[o : o + n]) for o, n in slices]
    assert slice_digests(buffer, offsets, sizes) == expected
    assert slice_digests(buffer, [], []) == []


def test_a_slice_outside_the_buffer_is_refused() -> None:
    from refitwire.wire import slice_digests

    buffer = np.zeros(100, dtype=np.uint8)
    with pytest.raises(ValueError, match="outside the buffer of 100 bytes"):
        slice_digests(buffer, [0, 90], [10, 11])
    with pytest.raises(ValueError, match="one of each per slice"):
        slice_digests(buffer, [0, 1], [10])
