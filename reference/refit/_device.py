"""Where a refit process keeps its bytes: ``cpu`` (DRAM) or ``cuda[:N]`` (VRAM), checked up front.

The blob has no memory-type member: DRAM or VRAM is configuration on both sides, so
every process of a run gets the same ``--device``. :func:`parse_device` needs no
torch; :func:`check_device` imports torch only for a CUDA device, and says in one
line why that device cannot be used (a CPU build of torch, no device visible, an
index past the last device) before any process starts.
"""

from __future__ import annotations

import re

__all__ = ["check_device", "mem_type", "parse_device"]


def parse_device(spec: str) -> tuple[str, int | None]:
    """``"cpu"`` -> ("cpu", None); ``"cuda"`` -> ("cuda", None); ``"cuda:1"`` -> ("cuda", 1)."""
    m = re.fullmatch(r"(cpu|cuda)(?::(\d+))?", spec)
    if m is None or (m.group(1) == "cpu" and m.group(2) is not None):
        raise ValueError(f"--device {spec!r}: expected cpu, cuda or cuda:N")
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def mem_type(spec: str) -> str:
    """The NIXL memory type of a device: ``DRAM`` or ``VRAM``."""
    return "VRAM" if parse_device(spec)[0] == "cuda" else "DRAM"


def check_device(spec: str) -> None:
    """Raise ValueError (one line) when ``spec`` cannot hold tensors on this machine."""
    kind, index = parse_device(spec)
    if kind == "cpu":
        return
    import torch

    if not torch.backends.cuda.is_built():  # type: ignore[no-untyped-call]
        raise ValueError(
            f"--device {spec}: this torch ({torch.__version__}) is a CPU build; install a CUDA build "
            "of torch (and nixl-cu12) on a machine with a GPU"
        )
    count = torch.cuda.device_count()
    if count == 0:
        raise ValueError(f"--device {spec}: torch sees no CUDA device (CUDA_VISIBLE_DEVICES, driver?)")
    if index is not None and index >= count:
        raise ValueError(f"--device {spec}: only {count} CUDA device(s) visible (cuda:0..cuda:{count - 1})")
