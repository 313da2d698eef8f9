"""The per-shard digest: known values, what it is sensitive to, and what it ignores."""

from __future__ import annotations

import numpy as np
import pytest
from refitwire import tensor_digest

# Hand-derived from the algorithm (SPEC.md section 4) and confirmed against the released
# upstream `tensor_digest` (tests/test_upstream_digest.py runs it when its env is built).
KNOWN = [
    (np.array([], dtype=np.uint8), "c804ce198ec337e3dc762bdd1a09aece"),
    (np.array([1], dtype=np.int32), "de030c6258866ea0cb5d705b9a4d55bd"),
    (np.array([-1], dtype=np.int32), "98287d641568dbb0c8c18b9f2a5d9294"),
    (np.array([0, 1, 2], dtype=np.int16), "cdf8665184c5e75c9441b7c5038f8454"),
    (np.arange(4096, dtype=np.int32), "b80e42d0aa211223be9669385be8976b"),
]


@pytest.mark.parametrize(("data", "digest"), KNOWN, ids=["empty", "one", "minus-one", "ragged", "four-rows"])
def test_known_values(data: np.ndarray, digest: str) -> None:
    assert tensor_digest(data) == digest
    assert tensor_digest(data.tobytes()) == digest


def test_one_changed_word_changes_the_digest() -> None:
    data = np.arange(5000, dtype=np.int32)
    changed = data.copy()
    changed[4321] += 1
    assert tensor_digest(data) != tensor_digest(changed)


def test_swapping_two_whole_rows_with_equal_sums_is_detected() -> None:
    data = np.arange(4096, dtype=np.int32).reshape(4, 1024)
    swapped = data[[1, 0, 2, 3]]
    assert tensor_digest(data) != tensor_digest(swapped)


def test_a_ragged_tail_is_covered() -> None:
    data = np.arange(1031, dtype=np.int16)
    changed = data.copy()
    changed[-1] += 1
    assert tensor_digest(data) != tensor_digest(changed)


def test_wraparound_matches_int64_arithmetic() -> None:
    # Large positive words make the weighted row sum overflow int64; the digest wraps mod 2^64.
    data = np.full(1024 * 3000, 2**31 - 1, dtype=np.int32)
    rows = 3000
    row_sum = 1024 * (2**31 - 1)
    s2 = sum((r + 1) * row_sum for r in range(rows)) % 2**64
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for v in (data.nbytes, rows * row_sum, s2):
        h.update((v % 2**64).to_bytes(8, "little"))
    assert tensor_digest(data) == h.hexdigest()


def test_rejects_what_it_cannot_read() -> None:
    with pytest.raises(TypeError, match="cannot digest"):
        tensor_digest([1, 2, 3])


torch = pytest.importorskip("torch")


def test_a_strided_view_digests_like_its_contiguous_copy() -> None:
    full = torch.arange(64 * 48, dtype=torch.float32).reshape(64, 48)
    view = full[:, 7:31]
    assert not view.is_contiguous()
    assert tensor_digest(view) == tensor_digest(view.contiguous())


@pytest.mark.parametrize("length", [1409, 17])
def test_an_unaligned_bf16_view_digests_like_its_clone(length: int) -> None:
    parent = torch.randn(2 * length, dtype=torch.float32).to(torch.bfloat16)
    half = parent.narrow(0, length, length)  # odd element offset: not 4-byte aligned
    assert tensor_digest(half) == tensor_digest(half.clone())


def test_torch_and_numpy_agree_on_the_same_bytes() -> None:
    t = torch.randn(3, 1000, dtype=torch.float32)
    assert tensor_digest(t) == tensor_digest(t.numpy()) == tensor_digest(t.numpy().tobytes())
