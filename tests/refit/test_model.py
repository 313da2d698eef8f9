"""The synthetic model: shardings that tile, differ between sides, and a deterministic truth."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from refitwire.refit._model import MODELS, shard_box, truth  # noqa: E402
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
