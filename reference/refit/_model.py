"""The synthetic model every refit process agrees on, and its ground truth.

Each tensor's value is a pure function of ``(name, step, element index)``, so any
process can compute what any box should hold at any step without talking to
anyone: publishers fill their shards with it, receivers and tests check against
it. Publishers and receivers shard the same tensors along different dimensions
(or replicate them), so a receiver's box generally spans several published shards.

Pure numpy: a process that only describes or plans a refit never imports torch.
:func:`truth` hands out torch tensors (it imports torch on first use);
:func:`fill_truth` writes the raw bytes into any buffer.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from refitwire import wire
from refitwire.wire import dtype_sizes

if TYPE_CHECKING:
    import torch

__all__ = [
    "MODELS",
    "Box",
    "Model",
    "TensorSpec",
    "Split",
    "dtype_of",
    "element_size",
    "expert_owner",
    "fill_truth",
    "model_named",
    "shard_box",
    "sized_model",
    "truth",
]

Box = tuple[tuple[int, ...], tuple[int, ...]]  # (offset, shape)

#: How one side splits a tensor: along a dimension, not at all (every rank holds a
#: replica), or ``"expert"``: whole, on the one rank that owns its expert (``TensorSpec.expert``).
Split = int | Literal["expert"] | None


@cache
def element_size(dtype: str) -> int:
    """The element size of ``dtype`` (``"bfloat16"``) by the package's own SPEC.md (section 4): the
    refit writes its blobs at the package's released versions, never a candidate's, and a
    command line that only plans a run must not import torch to size it."""
    return dtype_sizes(wire.registry_at(wire.package_root()))[dtype.removeprefix("torch.")]


@cache
def dtype_of(label: str) -> torch.dtype:
    """``torch.bfloat16`` for ``"bfloat16"`` or ``"torch.bfloat16"`` (imports torch)."""
    import torch

    dtype: torch.dtype = getattr(torch, label.removeprefix("torch."))
    return dtype


@dataclass(frozen=True)
class TensorSpec:
    """One tensor: publishers split it along ``publisher_dim``, receivers along ``receiver_dim``.

    ``None`` means every rank of that side holds the whole tensor (a replica);
    ``"expert"`` means the rank owning expert ``expert[0]`` of ``expert[1]`` holds all of it
    (experts are dealt to ranks in contiguous blocks, :func:`expert_owner`).
    """

    name: str
    dtype: str
    full_shape: tuple[int, ...]
    publisher_dim: Split
    receiver_dim: Split
    expert: tuple[int, int] | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        return dtype_of(self.dtype)

    @cached_property
    def elsize(self) -> int:
        # read once per spec: a publisher asks for it for every tensor of every step's table
        return element_size(self.dtype)

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
        return self._by_name[name]

    @cached_property
    def _by_name(self) -> dict[str, TensorSpec]:  # a real layout has ~19,000 tensors: no linear scan
        return {spec.name: spec for spec in self.tensors}

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
            if dim == "expert":
                if spec.expert is None or expert_owner(*spec.expert, ranks) != rank:
                    continue
                dim = None
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


def sized_model(nbytes: int) -> Model:
    """The smallest model of the default layout (vocab 16 x hidden, hidden a multiple of 64)
    holding at least ``nbytes``; its name is ``"<nbytes>B"``."""
    if nbytes <= 0:
        raise ValueError(f"model bytes must be positive, not {nbytes}")
    hidden = 64
    while _model("", hidden, 16 * hidden).nbytes < nbytes:
        hidden += 64
    return _model(f"{nbytes}B", hidden, 16 * hidden)


#: ``tiny`` for tests (about 100 KiB), ``default`` for the CLI (about 46 MiB), ``1gib``
#: (just over 1 GiB) for the link-speed measurement.
MODELS = {
    "tiny": _model("tiny", 64, 96),
    "small": _model("small", 256, 2048),
    "default": _model("default", 1024, 16384),
    "256mib": sized_model(256 << 20),
    "1gib": sized_model(1 << 30),
}


def model_named(name: str) -> Model:
    """A model of :data:`MODELS`, or ``"<N>B"`` for :func:`sized_model` of N bytes."""
    if name in MODELS:
        return MODELS[name]
    if name.endswith("B") and name[:-1].isdigit():
        return sized_model(int(name[:-1]))
    raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)} or <bytes>B")


def expert_owner(expert: int, experts: int, ranks: int) -> int:
    """The rank holding ``expert`` when ``experts`` are dealt to ``ranks`` in contiguous blocks.

    Rank r holds experts ``[experts * r // ranks, experts * (r + 1) // ranks)``.
    """
    if not 0 <= expert < experts:
        raise ValueError(f"expert {expert} is not in [0, {experts})")
    return ((expert + 1) * ranks - 1) // experts


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


# The value of element i (its row-major index in the full tensor) at a step:
#     ((i * _MULT + seed) mod 2**24) / 2**24 - 0.5, rounded to the tensor's dtype.
# Everything mod 2**24 splits into one small term per dimension, so a box is a
# broadcast sum of per-dimension int32 vectors, filled a block of rows at a time.
_MULT = 2654435761
_LOW24 = (1 << 24) - 1
_BLOCK_ELEMS = 1 << 22  # bounds the temporaries of one block


def _seed(spec: TensorSpec, step: int) -> int:
    return (zlib.crc32(spec.name.encode()) + 40503 * step) & _LOW24


def _dim_terms(spec: TensorSpec, box: Box) -> list[np.ndarray[Any, np.dtype[np.int32]]]:
    offset, shape = box
    terms = []
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        index = np.arange(offset[d], offset[d] + shape[d], dtype=np.int64)
        terms.append(((index * ((stride * _MULT) & _LOW24)) & _LOW24).astype(np.int32))
        stride *= spec.full_shape[d]
    return terms[::-1]


def _to_bfloat16_bits(values: np.ndarray[Any, np.dtype[np.float32]]) -> np.ndarray[Any, Any]:
    # Round to nearest even on the upper 16 bits, as torch converts finite floats.
    bits = values.view(np.uint32)
    return ((bits + (0x7FFF + ((bits >> 16) & 1))) >> 16).astype(np.uint16)


_STORED: dict[str, type[np.generic]] = {"bfloat16": np.uint16, "float16": np.float16, "float32": np.float32}


def _as_stored(dtype: str, values: np.ndarray[Any, np.dtype[np.float32]]) -> np.ndarray[Any, Any]:
    if dtype == "bfloat16":
        return _to_bfloat16_bits(values)
    return values.astype(np.float16) if dtype == "float16" else values


def fill_truth(spec: TensorSpec, step: int, box: Box, out: np.ndarray[Any, Any]) -> None:
    """Write the bytes of ``box`` of ``spec`` at ``step`` into ``out`` (C-contiguous, box-sized)."""
    shape = box[1]
    if out.nbytes != math.prod(shape) * spec.elsize or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous buffer of {math.prod(shape) * spec.elsize} bytes")
    if math.prod(shape) == 0:
        return
    typed = out.reshape(-1).view(_STORED[spec.dtype]).reshape(shape)
    first, *rest = _dim_terms(spec, box) if shape else [np.zeros(1, dtype=np.int32)]
    inner: Any = np.int32(_seed(spec, step))
    for d, term in enumerate(rest, start=1):
        inner = inner + term.reshape((-1,) + (1,) * (len(shape) - 1 - d))
    per_row = math.prod(shape[1:])
    rows = max(1, _BLOCK_ELEMS // max(per_row, 1))
    lead = (-1,) + (1,) * (len(shape) - 1)
    for r0 in range(0, len(first), rows):
        mixed = first[r0 : r0 + rows].reshape(lead) + inner
        np.bitwise_and(mixed, _LOW24, out=mixed)
        values = mixed.astype(np.float32)
        values *= np.float32(1.0 / (1 << 24))
        values -= np.float32(0.5)
        if shape:
            typed[r0 : r0 + rows] = _as_stored(spec.dtype, values)
        else:
            typed[...] = _as_stored(spec.dtype, values).reshape(())


def truth(spec: TensorSpec, step: int, box: Box | None = None, *, device: Any = "cpu") -> torch.Tensor:
    """The values of ``box`` (default: the whole tensor) of ``spec`` at ``step``, as a torch tensor."""
    import torch

    box = box if box is not None else ((0,) * len(spec.full_shape), spec.full_shape)
    raw = np.empty(math.prod(box[1]) * spec.elsize, dtype=np.uint8)
    fill_truth(spec, step, box, raw)
    tensor = torch.from_numpy(raw).view(spec.torch_dtype).view(box[1])
    return tensor if torch.device(device).type == "cpu" else tensor.to(device)
