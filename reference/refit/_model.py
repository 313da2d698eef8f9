"""The synthetic model every refit process agrees on, and its ground truth.

Each tensor's value is a pure function of ``(name, step, element index)``, so any
process can compute what any box should hold at any step without talking to
anyone: publishers fill their shards with it, receivers and tests check against
it. Publishers and receivers shard the same tensors along different dimensions
(or replicate them), so a receiver's box generally spans several published shards.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["MODELS", "Box", "Model", "TensorSpec", "dtype_of", "shard_box", "truth"]

Box = tuple[tuple[int, ...], tuple[int, ...]]  # (offset, shape)

_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def dtype_of(label: str) -> torch.dtype:
    """``torch.bfloat16`` for ``"bfloat16"`` or ``"torch.bfloat16"``."""
    return _DTYPES[label.removeprefix("torch.")]


@dataclass(frozen=True)
class TensorSpec:
    """One tensor: publishers split it along ``publisher_dim``, receivers along ``receiver_dim``.

    ``None`` means every rank of that side holds the whole tensor (a replica).
    """

    name: str
    dtype: str
    full_shape: tuple[int, ...]
    publisher_dim: int | None
    receiver_dim: int | None

    @property
    def torch_dtype(self) -> torch.dtype:
        return dtype_of(self.dtype)

    @property
    def elsize(self) -> int:
        return torch.empty((), dtype=self.torch_dtype).element_size()

    @property
    def nbytes(self) -> int:
        return math.prod(self.full_shape) * self.elsize


@dataclass(frozen=True)
class Model:
    name: str
    tensors: tuple[TensorSpec, ...]

    def __iter__(self) -> Iterator[TensorSpec]:
        return iter(self.tensors)

    def __getitem__(self, name: str) -> TensorSpec:
        for spec in self.tensors:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def publisher_boxes(self, rank: int, ranks: int) -> dict[str, Box]:
        """What publisher ``rank`` of ``ranks`` holds (non-empty boxes only)."""
        return self._boxes(rank, ranks, publisher=True)

    def receiver_boxes(self, rank: int, ranks: int) -> dict[str, Box]:
        """What receiver ``rank`` of ``ranks`` needs (non-empty boxes only)."""
        return self._boxes(rank, ranks, publisher=False)

    def _boxes(self, rank: int, ranks: int, *, publisher: bool) -> dict[str, Box]:
        out = {}
        for spec in self.tensors:
            dim = spec.publisher_dim if publisher else spec.receiver_dim
            box = shard_box(spec.full_shape, dim, rank, ranks)
            if math.prod(box[1]) > 0:
                out[spec.name] = box
        return out


def _model(name: str, hidden: int, vocab: int) -> Model:
    h, v = hidden, vocab
    return Model(
        name,
        (
            TensorSpec("embed.weight", "bfloat16", (v, h), 0, 1),
            TensorSpec("layers.0.attn.qkv.weight", "bfloat16", (3 * h, h), 0, 1),
            TensorSpec("layers.0.attn.o_proj.weight", "float32", (h, h), 1, 0),
            TensorSpec("layers.0.mlp.up.weight", "bfloat16", (2 * h, h), 1, None),
            TensorSpec("norm.weight", "float32", (h,), None, 0),
            TensorSpec("lm_head.bias", "float32", (v,), 0, None),
        ),
    )


#: ``tiny`` for tests (about 100 KiB), ``default`` for the CLI (about 50 MiB).
MODELS = {
    "tiny": _model("tiny", 64, 96),
    "small": _model("small", 256, 2048),
    "default": _model("default", 1024, 16384),
}


def shard_box(full_shape: tuple[int, ...], dim: int | None, rank: int, ranks: int) -> Box:
    """Rank ``rank``'s part of ``full_shape`` split as evenly as possible along ``dim``."""
    if not 0 <= rank < ranks:
        raise ValueError(f"rank {rank} is not in [0, {ranks})")
    offset = [0] * len(full_shape)
    shape = list(full_shape)
    if dim is not None:
        n = full_shape[dim]
        start, end = n * rank // ranks, n * (rank + 1) // ranks
        offset[dim], shape[dim] = start, end - start
    return tuple(offset), tuple(shape)


def truth(spec: TensorSpec, step: int, box: Box | None = None, *, device: Any = "cpu") -> torch.Tensor:
    """The values of ``box`` (default: the whole tensor) of ``spec`` at ``step``.

    A hash of the element's row-major index in the full tensor, the tensor's
    name and the step, mapped to [-0.5, 0.5) and rounded to the tensor's dtype.
    """
    offset, shape = box if box is not None else ((0,) * len(spec.full_shape), spec.full_shape)
    idx = torch.zeros(shape, dtype=torch.int64, device=device)
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        view = [1] * len(shape)
        view[d] = shape[d]
        idx += (torch.arange(offset[d], offset[d] + shape[d], device=device) * stride).view(view)
        stride *= spec.full_shape[d]
    seed = zlib.crc32(spec.name.encode()) + 40503 * step
    mixed = (idx * 2654435761 + seed) & 0xFFFFFF
    values = mixed.to(torch.float32) / float(1 << 24) - 0.5
    return values.to(spec.torch_dtype)
