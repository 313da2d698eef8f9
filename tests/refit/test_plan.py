"""Read planning, checked against numpy slicing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _profiles import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from refitwire.refit import PlanError, ReadRun, SourceShard, check_coverage, plan_reads

EL = 4  # float32-sized elements for the hand-worked cases


def S(offset: tuple[int, ...], shape: tuple[int, ...], addr: int = 0, agent: str = "a") -> SourceShard:
    return SourceShard(offset, shape, addr, agent)


# -- hand-worked cases -------------------------------------------------------


def test_row_block_is_one_run() -> None:
    runs = plan_reads("w", (8, 4), EL, (0, 0), (4, 4), [S((0, 0), (8, 4), 1000)])
    assert runs == [ReadRun("a", 1000, 0, 64)]


def test_column_slice_is_one_run_per_row() -> None:
    runs = plan_reads("w", (4, 8), EL, (0, 0), (4, 4), [S((0, 0), (4, 8))])
    assert [r.src_addr // EL for r in runs] == [0, 8, 16, 24]
    assert [r.dst_offset // EL for r in runs] == [0, 4, 8, 12]
    assert {r.nbytes for r in runs} == {4 * EL}


def test_two_column_halves_fan_in() -> None:
    shards = [S((0, 0), (4, 4), 0, "left"), S((0, 4), (4, 4), 10_000, "right")]
    runs = plan_reads("w", (4, 8), EL, (0, 0), (4, 8), shards)
    assert [r.dst_offset // EL for r in runs if r.agent == "left"] == [0, 8, 16, 24]
    assert [r.dst_offset // EL for r in runs if r.agent == "right"] == [4, 12, 20, 28]


def test_disjoint_shard_is_not_read() -> None:
    shards = [S((0, 0), (4, 4), 0, "top"), S((4, 0), (4, 4), 64, "bottom")]
    runs = plan_reads("w", (8, 4), EL, (0, 0), (4, 4), shards)
    assert {r.agent for r in runs} == {"top"}


def test_middle_of_a_shard_offsets_the_source_address() -> None:
    # Wanted rows 5..6 of a shard holding rows 4..7 at 4096.
    runs = plan_reads("w", (8, 4), EL, (5, 0), (2, 4), [S((4, 0), (4, 4), 4096)])
    assert runs == [ReadRun("a", 4096 + 4 * EL, 0, 8 * EL)]


def test_scalar() -> None:
    assert plan_reads("s", (), 2, (), (), [S((), (), 64)]) == [ReadRun("a", 64, 0, 2)]


def test_empty_box_needs_no_shard() -> None:
    assert plan_reads("w", (4, 4), EL, (2, 0), (0, 4), []) == []


def test_replicas_first_wins() -> None:
    shards = [S((0, 0), (4, 4), 0, "dp0"), S((0, 0), (4, 4), 0, "dp1")]
    runs = plan_reads("w", (4, 4), EL, (0, 0), (4, 4), shards)
    assert [r.agent for r in runs] == ["dp0"]


def test_from_published_reads_wire_field_names() -> None:
    class Published:
        agent_name, addr, shard_offset, shape = "r0", 4096, [0, 0], [2, 2]

    assert SourceShard.from_published(Published()) == S((0, 0), (2, 2), 4096, "r0")


# -- errors ------------------------------------------------------------------


def test_gap_names_tensor_box_and_hole() -> None:
    with pytest.raises(PlanError) as info:
        plan_reads("w0", (8, 4), EL, (0, 0), (8, 4), [S((0, 0), (4, 4))])
    assert info.value.rule == "PLAN_COVERAGE_GAP"
    assert info.value.tensor == "w0"
    assert info.value.box == ((0, 0), (8, 4))
    assert str(info.value) == (
        "[4:8, 0:4] is covered by no shard (tensor 'w0', wanted [0:8, 0:4]) [PLAN_COVERAGE_GAP]"
    )


def test_overlap_names_both_shards() -> None:
    shards = [S((0, 0), (4, 4), 0, "r0"), S((2, 0), (6, 4), 0x100, "r1")]
    with pytest.raises(PlanError) as info:
        plan_reads("w0", (8, 4), EL, (0, 0), (8, 4), shards)
    assert info.value.rule == "PLAN_SHARD_OVERLAP"
    assert str(info.value) == (
        "[2:4, 0:4] is covered by both r0@0x0 [0:4, 0:4] and r1@0x100 [2:8, 0:4] "
        "(tensor 'w0', wanted [0:8, 0:4]) [PLAN_SHARD_OVERLAP]"
    )


def test_overlap_outside_the_wanted_box_is_fine() -> None:
    shards = [S((0, 0), (6, 4), 0, "r0"), S((4, 0), (4, 4), 0x100, "r1")]
    runs = plan_reads("w", (8, 4), EL, (0, 0), (4, 4), shards)
    assert [r.agent for r in runs] == ["r0"]


@pytest.mark.parametrize(
    ("offset", "shape", "shards"),
    [
        ((0,), (4,), [S((0, 0), (8, 4))]),
        ((0, 0), (8, 4), [S((0,), (8,))]),
        ((0, 0), (8, 4), [S((0, 0), (8, 4, 1))]),
    ],
)
def test_rank_mismatch(offset: tuple[int, ...], shape: tuple[int, ...], shards: list[SourceShard]) -> None:
    with pytest.raises(PlanError) as info:
        plan_reads("w", (8, 4), EL, offset, shape, shards)
    assert info.value.rule == "PLAN_RANK_MISMATCH"


@pytest.mark.parametrize(
    ("offset", "shape", "shards"),
    [
        ((4, 0), (5, 4), [S((0, 0), (8, 4))]),
        ((-1, 0), (2, 4), [S((0, 0), (8, 4))]),
        ((0, 0), (8, 4), [S((0, 0), (8, 4)), S((0, 2), (8, 4))]),
        ((0, 0), (2, -1), [S((0, 0), (8, 4))]),
    ],
)
def test_box_out_of_bounds(
    offset: tuple[int, ...], shape: tuple[int, ...], shards: list[SourceShard]
) -> None:
    with pytest.raises(PlanError) as info:
        plan_reads("w", (8, 4), EL, offset, shape, shards)
    assert info.value.rule == "PLAN_BOX_OUT_OF_BOUNDS"


def test_plan_error_is_a_value_error() -> None:
    assert issubclass(PlanError, ValueError)


def test_string_extents_are_rejected() -> None:
    with pytest.raises(TypeError):
        S(("0", "0"), (4, 4))  # type: ignore[arg-type]


# -- properties against numpy ------------------------------------------------

Box = tuple[tuple[int, ...], tuple[int, ...]]


@st.composite
def partitions(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Box]]:
    """A full shape (rank 0-3) and a guillotine partition of it into boxes."""
    full = tuple(draw(st.lists(st.integers(1, 6), max_size=3)))
    boxes: list[Box] = [((0,) * len(full), full)]
    for _ in range(draw(st.integers(0, 6))):
        i = draw(st.integers(0, len(boxes) - 1))
        off, shp = boxes[i]
        dims = [d for d, n in enumerate(shp) if n > 1]
        if not dims:
            continue
        d = draw(st.sampled_from(dims))
        cut = draw(st.integers(1, shp[d] - 1))
        a = (off, (*shp[:d], cut, *shp[d + 1 :]))
        b = ((*off[:d], off[d] + cut, *off[d + 1 :]), (*shp[:d], shp[d] - cut, *shp[d + 1 :]))
        boxes[i : i + 1] = [a, b]
    return full, draw(st.permutations(boxes))


@st.composite
def boxes_in(draw: st.DrawFn, full: tuple[int, ...]) -> Box:
    starts = tuple(draw(st.integers(0, n)) for n in full)
    return starts, tuple(draw(st.integers(0, n - s)) for s, n in zip(starts, full, strict=True))


def _slices(box: Box) -> tuple[slice, ...]:
    return tuple(slice(o, o + n) for o, n in zip(*box, strict=True))


def _publish(
    full_bytes: np.ndarray, boxes: list[Box], replicas: list[bool], agents: int
) -> tuple[dict[str, bytearray], list[SourceShard]]:
    """Lay each box's bytes out in a per-agent 'address space', with gaps.

    A replica repeats the box before it on another agent, filled with 0xEE:
    reading it instead of the first copy would corrupt the result.
    """
    heaps: dict[str, bytearray] = {f"agent{i}": bytearray(b"\x55" * 64) for i in range(agents)}
    shards: list[SourceShard] = []
    for n, (box, replica) in enumerate(zip(boxes, replicas, strict=True)):
        agent = f"agent{n % agents}"
        heap = heaps[agent]
        data = full_bytes[_slices(box)].tobytes()
        if replica:
            shards.append(SourceShard(*box, len(heap) + 0x1000, agent))
            heap += data + b"\x55" * 8
            agent = f"agent{(n + 1) % agents}"
            heap = heaps[agent]
            data = b"\xee" * len(data)
        shards.append(SourceShard(*box, len(heap) + 0x1000, agent))
        heap += data + b"\x55" * 8
    return heaps, shards


def _execute(runs: list[ReadRun], heaps: dict[str, bytearray], nbytes: int) -> bytes:
    out = bytearray(b"\xaa" * nbytes)
    for r in runs:
        src = r.src_addr - 0x1000
        out[r.dst_offset : r.dst_offset + r.nbytes] = heaps[r.agent][src : src + r.nbytes]
    return bytes(out)


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_runs_reproduce_numpy_slicing(data: st.DataObject) -> None:
    full, boxes = data.draw(partitions())
    elsize = data.draw(st.sampled_from([1, 2, 4, 8]))
    replicas = data.draw(st.lists(st.booleans(), min_size=len(boxes), max_size=len(boxes)))
    agents = data.draw(st.integers(1, 3))
    box = data.draw(boxes_in(full))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    full_bytes = rng.integers(0, 256, size=(*full, elsize), dtype=np.uint8)
    heaps, shards = _publish(full_bytes, boxes, replicas, agents)

    runs = plan_reads("w", full, elsize, *box, shards)

    want = full_bytes[_slices(box)].tobytes()
    assert _execute(runs, heaps, len(want)) == want
    # Runs tile the destination exactly: no byte written twice, none skipped.
    assert sum(r.nbytes for r in runs) == len(want)
    assert all(r.nbytes > 0 for r in runs)
    # Deterministic: same input, same plan.
    assert plan_reads("w", full, elsize, *box, shards) == runs


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_runs_are_maximally_coalesced(data: st.DataObject) -> None:
    # One shard covering everything: the run count is the product of the
    # leading dims that cannot merge, never more.
    full = tuple(data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    box = data.draw(boxes_in(full))
    if 0 in box[1]:
        return
    runs = plan_reads("w", full, 1, *box, [SourceShard((0,) * len(full), full, 0, "a")])
    k = len(full) - 1
    while k > 0 and box[1][k] == full[k]:
        k -= 1
    assert len(runs) == math.prod(box[1][:k])


@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_coverage_check_matches_element_counts(data: st.DataObject) -> None:
    full = tuple(data.draw(st.lists(st.integers(1, 5), max_size=3)))
    boxes = data.draw(st.lists(boxes_in(full), max_size=5))
    box = data.draw(boxes_in(full))
    shards = [SourceShard(*b, 0, f"r{i}") for i, b in enumerate(dict.fromkeys(boxes))]
    counts_full = np.zeros(full, dtype=int)
    for s in shards:
        counts_full[_slices((s.offset, s.shape))] += 1
    counts = counts_full[_slices(box)]
    if (counts > 1).any():
        expected: str | None = "PLAN_SHARD_OVERLAP"
    elif (counts == 0).any():
        expected = "PLAN_COVERAGE_GAP"
    else:
        expected = None
    try:
        check_coverage("w", full, *box, shards)
    except PlanError as exc:
        assert exc.rule == expected
        # The reported region is inside the box and really is a hole / a double cover.
        assert exc.region is not None and math.prod(exc.region[1]) > 0
        region = _slices(exc.region)
        if expected == "PLAN_COVERAGE_GAP":
            assert (counts_full[region] == 0).all()
        else:
            assert (counts_full[region] > 1).all()
        inside = np.zeros(full, dtype=bool)
        inside[_slices(box)] = True
        assert inside[region].all()
    else:
        assert expected is None
