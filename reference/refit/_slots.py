"""Where a receiver's bytes land: two slots, each a registered staging buffer and a bank.

A step pulls whole shards into the staging buffer of the slot that is not
installed; a tensor whose needed box is exactly one published shard is installed
as a view of its bytes there, the others are assembled into the slot's bank. The
installed weights are the other slot's, so nothing a step does can touch them
until the step is accepted, and installing is one switch. Buffers are allocated
(and every page touched) and registered once, and again only when a plan needs
a bigger staging buffer or a tensor newly needs a bank.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ._check import PlannedRead, ReadPlan
from ._model import Box, Model
from ._prepared import PreparedPull
from ._pull import Piece

__all__ = ["Slot"]


class Slot:
    """One staging buffer registered with ``agent``, and a bank of assembled tensors."""

    def __init__(self, agent: Any, model: Model, need: Mapping[str, Box], device: torch.device) -> None:
        self.agent, self.model, self.need, self.device = agent, model, need, device
        self.staging = torch.empty(0, dtype=torch.uint8, device=device)
        self._regions: list[Any] = []
        self.bank: dict[str, torch.Tensor] = {}
        self._prepared: PreparedPull | None = None
        self._weights: tuple[ReadPlan, dict[str, torch.Tensor]] | None = None
        self._host: np.ndarray[Any, np.dtype[np.uint8]] | None = None

    def requests(self, plan: ReadPlan, pieces: list[Piece]) -> list[Any]:
        """The NIXL requests of ``pieces`` into this slot, prepared once per plan (``_prepared``)."""
        if self._prepared is None or self._prepared.key != plan.signature:
            self.drop_requests()
            self._prepared = PreparedPull(self.agent, plan.signature, pieces, self._regions[0])
        return self._prepared.requests

    def drop_requests(self) -> None:
        """Forget the prepared requests (a new plan, new staging, or a transfer that failed)."""
        if self._prepared is not None:
            self._prepared.drop()
            self._prepared = None

    def fit(self, plan: ReadPlan) -> None:
        """Make room for ``plan``: a big enough registered staging buffer and a bank for the rest."""
        if plan.staging_bytes > self.staging.numel() or not self._regions:
            self.release()
            fresh = torch.empty(max(plan.staging_bytes, 1), dtype=torch.uint8, device=self.device).zero_()
            self._regions = self.agent.register([fresh])
            self.staging = fresh
            self._host = fresh.numpy() if fresh.device.type == "cpu" else None
        for name, (_, shape) in self.need.items():
            if name not in plan.whole and name not in self.bank:
                self.bank[name] = torch.empty(
                    shape, dtype=self.model[name].torch_dtype, device=self.device
                ).zero_()

    def shard(self, r: PlannedRead) -> torch.Tensor:
        """The staged bytes of one read."""
        return self.staging[r.staging_offset : r.staging_offset + r.nbytes]

    def host_slices(
        self, reads: Sequence[PlannedRead]
    ) -> tuple[np.ndarray[Any, np.dtype[np.uint8]], list[int]]:
        """A host buffer holding the staged bytes of every read, and where each read starts in it:
        the staging buffer itself in DRAM (no copy); off a device, the reads gathered there and
        copied once."""
        if self._host is not None:
            return self._host, [r.staging_offset for r in reads]
        gathered = torch.cat([self.shard(r) for r in reads]).cpu().numpy() if reads else np.zeros(0, np.uint8)
        return gathered, list(itertools.accumulate((r.nbytes for r in reads[:-1]), initial=0))

    def host_bytes(self, r: PlannedRead, start: int, end: int) -> np.ndarray[Any, np.dtype[np.uint8]]:
        """Bytes ``start:end`` of one staged read as a host numpy array (copied off a device)."""
        if self._host is not None:  # DRAM: a numpy view, no torch call per shard (thousands a step)
            return self._host[r.staging_offset + start : r.staging_offset + end]
        return self.shard(r)[start:end].cpu().numpy()

    def place(self, plan: ReadPlan, r: PlannedRead, slices: tuple[int, int] | None = None) -> None:
        """Copy the read's part of its needed box into the bank (nothing for a whole-shard tensor).

        ``slices`` limits it to that range of the shard's first dimension (what has landed).
        """
        if r.tensor in plan.whole:
            return
        box_offset, box_shape = self.need[r.tensor]
        src, dst = [], []
        for d, (o, n, bo, bn) in enumerate(zip(r.shard_offset, r.shape, box_offset, box_shape, strict=True)):
            lo, hi = max(o, bo), min(o + n, bo + bn)
            if d == 0 and slices is not None:
                lo, hi = max(lo, o + slices[0]), min(hi, o + slices[1])
            if hi <= lo:
                return  # nothing of the box in this range
            src.append(slice(lo - o, hi - o))
            dst.append(slice(lo - bo, hi - bo))
        staged = self.shard(r).view(self.model[r.tensor].torch_dtype).view(r.shape)
        self.bank[r.tensor][tuple(dst)] = staged[tuple(src)]

    def weights(self, plan: ReadPlan) -> dict[str, torch.Tensor]:
        """The tensors this slot holds once ``plan``'s reads have landed and been placed.

        Views of this slot's buffers: the same for every step of one plan, so made once.
        """
        if self._weights is not None and self._weights[0] is plan:
            return dict(self._weights[1])
        out = {}
        for name, (_, shape) in self.need.items():
            if name in plan.whole:
                out[name] = (
                    self.shard(plan.reads[plan.whole[name]]).view(self.model[name].torch_dtype).view(shape)
                )
            else:
                out[name] = self.bank[name]
        self._weights = (plan, out)
        return dict(out)

    def release(self) -> None:
        self.drop_requests()
        self._weights = None
        if self._regions:
            self.agent.deregister(self._regions)
            self._regions = []
