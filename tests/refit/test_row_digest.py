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
