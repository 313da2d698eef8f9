"""A registered memory region, and the region a buffer occupies (no NIXL needed)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Region", "region_of"]


@dataclass(frozen=True)
class Region:
    """A registered memory region."""

    addr: int
    nbytes: int
    mem_type: str  # "DRAM" or "VRAM"
    device_id: int

    def holds(self, addr: int, nbytes: int) -> bool:
        return self.addr <= addr and addr + nbytes <= self.addr + self.nbytes


def region_of(buf: Any) -> Region:
    """The region a buffer occupies: a numpy array, a torch tensor or ``(addr, nbytes)`` of DRAM."""
    if isinstance(buf, np.ndarray):
        if not buf.flags.c_contiguous:
            raise ValueError("a numpy buffer must be C-contiguous to register")
        return Region(buf.ctypes.data, buf.nbytes, "DRAM", 0)
    torch = sys.modules.get("torch")  # no torch import unless the caller already has it
    if torch is not None and isinstance(buf, torch.Tensor):
        if not buf.is_contiguous():
            raise ValueError("a tensor must be contiguous to register")
        if buf.device.type == "cuda":
            return Region(buf.data_ptr(), buf.nbytes, "VRAM", buf.device.index or 0)
        if buf.device.type != "cpu":
            raise ValueError(f"cannot register a tensor on {buf.device}")
        return Region(buf.data_ptr(), buf.nbytes, "DRAM", 0)
    if isinstance(buf, tuple) and len(buf) == 2:
        return Region(int(buf[0]), int(buf[1]), "DRAM", 0)
    raise TypeError(f"cannot register {type(buf).__name__}: want ndarray, tensor or (addr, nbytes)")
