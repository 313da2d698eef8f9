"""The synthetic model: shardings that tile, differ between sides, and a deterministic truth."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import zlib  # noqa: E402

from refitwire.refit._model import MODELS, _model, model_named, shard_box, sized_model, truth  # noqa: E402
from refitwire.refit._receiver import same_bytes  # noqa: E402


@pytest.mark.parametrize("ranks", [1, 2, 3, 5])
def test_split_shards_tile_the_tensor(ranks: int) -> None:
    for spec in MODELS["tiny"]:
        for side in ("publisher", "receiver"):
            dim = getattr(spec, f"{side}_dim")
            boxes = [shard_box(spec.full_shape, dim, r, ranks) for r in range(ranks)]
            volume = sum(math.prod(shape) for _, shape in boxes)
            assert volume == math.prod(spec.full_shape) * (ranks if dim is None else 1)


def test_sides_shard_differently() -> None:
    model = MODELS["tiny"]
    assert model.publisher_boxes(0, 2) != model.receiver_boxes(0, 2)
    dtypes = {spec.dtype for spec in model}
    assert dtypes == {"bfloat16", "float32"}
    assert any(s.publisher_dim is None for s in model) and any(s.receiver_dim is None for s in model)


def test_truth_of_a_box_is_the_box_of_the_truth() -> None:
    spec = MODELS["tiny"]["layers.0.attn.o_proj.weight"]
    full = truth(spec, 3)
    box = ((5, 17), (40, 30))
    assert same_bytes(truth(spec, 3, box), full[5:45, 17:47])


def test_truth_changes_with_step_and_name() -> None:
    a, b = MODELS["tiny"]["embed.weight"], MODELS["tiny"]["layers.0.attn.qkv.weight"]
    assert same_bytes(truth(a, 1), truth(a, 1))
    assert (truth(a, 1) != truth(a, 2)).float().mean() > 0.9
    assert (truth(a, 1)[:32] != truth(b, 1)[:32]).float().mean() > 0.9


def _by_the_formula(
    spec: object, step: int, box: tuple[tuple[int, ...], tuple[int, ...]] | None = None
) -> torch.Tensor:
    """The truth computed the plain way: the int64 row-major index of every element, hashed."""
    assert hasattr(spec, "full_shape")
    full = spec.full_shape
    offset, shape = box if box is not None else ((0,) * len(full), full)
    idx = torch.zeros(shape, dtype=torch.int64)
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        view = [1] * len(shape)
        view[d] = shape[d]
        idx += (torch.arange(offset[d], offset[d] + shape[d]) * stride).view(view)
        stride *= full[d]
    mixed = (idx * 2654435761 + zlib.crc32(spec.name.encode()) + 40503 * step) & 0xFFFFFF  # type: ignore[attr-defined]
    return (mixed.to(torch.float32) / float(1 << 24) - 0.5).to(spec.torch_dtype)  # type: ignore[attr-defined]


@pytest.mark.parametrize("step", [0, 1, 7, 123457])
def test_truth_is_the_formula_bit_for_bit(step: int) -> None:
    for model in (MODELS["tiny"], MODELS["small"]):
        for spec in model:
            assert same_bytes(truth(spec, step), _by_the_formula(spec, step)), (model.name, spec.name)
    spec = MODELS["small"]["layers.0.attn.qkv.weight"]
    box = ((100, 30), (300, 77))
    assert same_bytes(truth(spec, step, box), _by_the_formula(spec, step, box))


def test_a_sized_model_is_the_smallest_of_its_layout_that_holds_the_bytes() -> None:
    for nbytes in (1, 300_000, 50 << 20, 1 << 30):
        model = sized_model(nbytes)
        hidden = model["norm.weight"].full_shape[0]
        assert model.nbytes >= nbytes and hidden % 64 == 0
        assert hidden == 64 or _model("", hidden - 64, 16 * (hidden - 64)).nbytes < nbytes
    assert MODELS["1gib"].nbytes >= 1 << 30
    assert model_named("300000B") == sized_model(300_000) and model_named("tiny") is MODELS["tiny"]
    with pytest.raises(ValueError, match="unknown model 'huge'"):
        model_named("huge")
