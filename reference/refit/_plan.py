"""Read planning: which bytes to pull from which published shard for one wanted box.

Pure Python, no NIXL. A shard holds its box of the full tensor row-major and
contiguous from ``addr`` (wire format §1.4). The destination is the wanted box
laid out row-major and contiguous, so ``dst_offset`` is relative to its start.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._errors import PlanError, fmt_box

__all__ = [
    "PlanError",
    "ReadRun",
    "SourceShard",
    "check_coverage",
    "dedup_replicas",
    "plan_reads",
]

Box = tuple[tuple[int, ...], tuple[int, ...]]  # (offset, shape)

PLAN_COVERAGE_GAP = "PLAN_COVERAGE_GAP"
PLAN_SHARD_OVERLAP = "PLAN_SHARD_OVERLAP"
PLAN_RANK_MISMATCH = "PLAN_RANK_MISMATCH"
PLAN_BOX_OUT_OF_BOUNDS = "PLAN_BOX_OUT_OF_BOUNDS"


def _ints(values: Iterable[Any]) -> tuple[int, ...]:
    # operator.index rejects "4" and 4.0, which the wire reader lets through (§1.4).
    return tuple(operator.index(v) for v in values)


@dataclass(frozen=True)
class SourceShard:
    """One published shard as the planner needs it."""

    offset: tuple[int, ...]
    shape: tuple[int, ...]
    addr: int
    agent_name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "offset", _ints(self.offset))
        object.__setattr__(self, "shape", _ints(self.shape))
        object.__setattr__(self, "addr", operator.index(self.addr))

    @classmethod
    def from_published(cls, shard: Any) -> SourceShard:
        """From any object with the wire's shard fields (e.g. a decoded ``PublishedShard``)."""
        return cls(shard.shard_offset, shard.shape, shard.addr, shard.agent_name)

    def describe(self) -> str:
        return f"{self.agent_name}@{self.addr:#x} {fmt_box(self.offset, self.shape)}"


@dataclass(frozen=True)
class ReadRun:
    """One contiguous byte run: ``nbytes`` from ``src_addr`` on ``agent`` to ``dst_offset``."""

    agent: str
    src_addr: int
    dst_offset: int
    nbytes: int


def dedup_replicas(shards: Iterable[SourceShard]) -> list[SourceShard]:
    """Drop replicas: of shards with identical boxes the first one wins.

    Input order decides, so the choice is deterministic (same as upstream §4.2).
    """
    seen: set[Box] = set()
    kept: list[SourceShard] = []
    for shard in shards:
        key = (shard.offset, shard.shape)
        if key not in seen:
            seen.add(key)
            kept.append(shard)
    return kept


def _intersect(a: Box, b: Box) -> Box | None:
    lo = tuple(max(ao, bo) for ao, bo in zip(a[0], b[0], strict=True))
    hi = tuple(min(ao + an, bo + bn) for ao, an, bo, bn in zip(*a, *b, strict=True))
    if any(h <= low for low, h in zip(lo, hi, strict=True)):
        return None
    return lo, tuple(h - low for low, h in zip(lo, hi, strict=True))


def _validate(tensor: str, full_shape: tuple[int, ...], box: Box, shards: Sequence[SourceShard]) -> None:
    rank = len(full_shape)
    if any(d < 0 for d in full_shape):
        raise PlanError(PLAN_BOX_OUT_OF_BOUNDS, tensor, box, f"full_shape {full_shape} is negative")
    if len(box[0]) != rank or len(box[1]) != rank:
        raise PlanError(
            PLAN_RANK_MISMATCH,
            tensor,
            box,
            f"wanted offset {box[0]} / shape {box[1]} do not match full_shape {full_shape}",
        )
    for shard in shards:
        if len(shard.offset) != rank or len(shard.shape) != rank:
            raise PlanError(
                PLAN_RANK_MISMATCH,
                tensor,
                box,
                f"shard offset {shard.offset} / shape {shard.shape} from {shard.agent_name!r} "
                f"do not match full_shape {full_shape}",
            )
    for what, (off, shp) in [("wanted box", box)] + [
        (f"shard from {s.agent_name!r}", (s.offset, s.shape)) for s in shards
    ]:
        if any(o < 0 or n < 0 or o + n > f for o, n, f in zip(off, shp, full_shape, strict=True)):
            raise PlanError(
                PLAN_BOX_OUT_OF_BOUNDS,
                tensor,
                box,
                f"{what} {fmt_box(off, shp)} lies outside full_shape {full_shape}",
            )


def _first_gap(box: Box, pieces: Sequence[Box]) -> Box:
    # Only on the error path: cut the box along every piece edge and return the
    # first cell no piece covers. Cells are either fully covered or not at all.
    cuts = []
    for d, (o, n) in enumerate(zip(*box, strict=True)):
        edges = {o, o + n}
        for p in pieces:
            edges.update((p[0][d], p[0][d] + p[1][d]))
        cuts.append(sorted(edges))
    for cell in itertools.product(*(list(itertools.pairwise(c)) for c in cuts)):
        lo = tuple(a for a, _ in cell)
        if not any(all(po <= x < po + pn for x, po, pn in zip(lo, *p, strict=True)) for p in pieces):
            return lo, tuple(b - a for a, b in cell)
    raise AssertionError("no gap found although the volumes disagree")


def check_coverage(
    tensor: str,
    full_shape: Sequence[int],
    offset: Sequence[int],
    shape: Sequence[int],
    shards: Sequence[SourceShard],
) -> list[tuple[SourceShard, Box]]:
    """Check that ``shards`` cover every element of the wanted box exactly once.

    Pass replicas through :func:`dedup_replicas` first. Overlaps outside the
    box do not matter for this read. Returns each shard that touches the box
    with its intersection; raises :class:`PlanError` otherwise.
    """
    box: Box = (_ints(offset), _ints(shape))
    full = _ints(full_shape)
    _validate(tensor, full, box, shards)
    hits: list[tuple[SourceShard, Box]] = []
    for shard in shards:
        part = _intersect(box, (shard.offset, shard.shape))
        if part is None:
            continue
        for other, seen in hits:
            both = _intersect(part, seen)
            if both is not None:
                raise PlanError(
                    PLAN_SHARD_OVERLAP,
                    tensor,
                    box,
                    f"{fmt_box(*both)} is covered by both {other.describe()} and {shard.describe()}",
                    both,
                )
        hits.append((shard, part))
    # Pieces are disjoint and inside the box, so equal volume means full cover.
    if sum(math.prod(p[1]) for _, p in hits) != math.prod(box[1]):
        gap = _first_gap(box, [p for _, p in hits])
        raise PlanError(PLAN_COVERAGE_GAP, tensor, box, f"{fmt_box(*gap)} is covered by no shard", gap)
    return hits


def _row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return tuple(strides)


def _runs_for(shard: SourceShard, part: Box, box: Box, elsize: int) -> Iterable[ReadRun]:
    lo, ext = part
    rank = len(ext)
    # Coalesce the largest trailing block of dims that is whole in both the
    # shard and the destination: that block is one contiguous run on both sides.
    k = rank - 1
    while k > 0 and ext[k] == shard.shape[k] == box[1][k]:
        k -= 1
    run_elems = math.prod(ext[max(k, 0) :])
    src_strides = _row_major_strides(shard.shape)
    dst_strides = _row_major_strides(box[1])
    src0 = sum((a - o) * s for a, o, s in zip(lo, shard.offset, src_strides, strict=True))
    dst0 = sum((a - o) * s for a, o, s in zip(lo, box[0], dst_strides, strict=True))
    for idx in itertools.product(*(range(n) for n in ext[:k])):
        src = src0 + sum(i * s for i, s in zip(idx, src_strides[:k], strict=True))
        dst = dst0 + sum(i * s for i, s in zip(idx, dst_strides[:k], strict=True))
        yield ReadRun(shard.agent_name, shard.addr + src * elsize, dst * elsize, run_elems * elsize)


def plan_reads(
    tensor: str,
    full_shape: Sequence[int],
    elsize: int,
    offset: Sequence[int],
    shape: Sequence[int],
    shards: Iterable[SourceShard],
) -> list[ReadRun]:
    """Plan the byte runs that assemble the wanted box ``(offset, shape)`` of ``tensor``.

    Replicas are deduplicated (first wins), coverage is checked, then every
    shard that touches the box contributes its intersection as contiguous runs.
    Runs come out in shard order, then row-major order; ``dst_offset`` is in
    bytes from the start of the row-major destination box.
    """
    elsize = operator.index(elsize)
    if elsize <= 0:
        raise ValueError(f"elsize {elsize} must be positive (tensor {tensor!r})")
    box: Box = (_ints(offset), _ints(shape))
    hits = check_coverage(tensor, full_shape, box[0], box[1], dedup_replicas(shards))
    return [run for shard, part in hits for run in _runs_for(shard, part, box, elsize)]
