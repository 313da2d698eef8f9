"""Real layouts: presets shaped like public configurations, files read by header, scaling, engine sharding."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from refitwire.refit._layout import (
    PRESETS,
    LayoutError,
    layout_bytes,
    layout_model,
    parse_bytes,
    read_layout,
    resolve_model,
    scale_layout,
    split_of,
)
from refitwire.refit._model import Model, expert_owner, fill_truth


def test_the_presets_have_the_public_configurations_tensor_counts_and_sizes() -> None:
    dense, moe = read_layout("dense-8b"), read_layout("moe-30b-a3b")
    assert len(dense) == 32 * 9 + 3 == 291
    assert len(moe) == 48 * (7 + 128 * 3 + 2) + 3 == 18867
    assert 16.0e9 < layout_bytes(dense) < 16.1e9  # 8.03 B parameters in bfloat16
    assert 61.0e9 < layout_bytes(moe) < 61.1e9  # 30.5 B parameters in bfloat16
    names = {name for name, _, _ in moe}
    assert {"lm_head.weight", "model.embed_tokens.weight"} <= names  # untied: both published
    assert "model.layers.47.mlp.experts.127.down_proj.weight" in names


@pytest.mark.parametrize("budget", [1 << 20, 4 << 20, 1 << 30])
def test_scaling_keeps_the_tensor_count_and_is_the_smallest_that_holds_the_budget(budget: int) -> None:
    entries = read_layout("moe-30b-a3b")
    scaled = scale_layout(entries, budget)
    assert [n for n, _, _ in scaled] == [n for n, _, _ in entries]
    assert layout_bytes(scaled) >= budget
    assert layout_bytes(scaled) < budget * 1.1  # not far above it
    if budget == 1 << 30:  # large enough for the ratios to survive rounding
        shape = dict((n, s) for n, _, s in scaled)
        q, hidden = shape["model.layers.0.self_attn.q_proj.weight"]
        assert q / hidden == pytest.approx(2.0, rel=0.02)
        assert (
            shape["model.layers.0.mlp.experts.0.down_proj.weight"]
            == shape["model.layers.0.mlp.experts.0.up_proj.weight"][::-1]
        )


@pytest.mark.parametrize(
    ("text", "value"),
    [("1GiB", 1 << 30), ("512MiB", 512 << 20), ("2GB", 2 * 10**9), ("1048576", 1 << 20), ("1.5KiB", 1536)],
)
def test_byte_counts_take_suffixes(text: str, value: int) -> None:
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "GiB", "1 parsec", "-3", "0"])
def test_a_bad_byte_count_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="byte count"):
        parse_bytes(text)


def test_a_json_layout_and_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps([{"name": "w", "dtype": "torch.bfloat16", "shape": [8, 4]},
                                {"name": "b", "dtype": "float32", "shape": [8]}]))  # fmt: skip
    assert read_layout(str(path)) == [("w", "bfloat16", (8, 4)), ("b", "float32", (8,))]
    for bad, message in [
        ({"name": "w", "dtype": "int64", "shape": [2]}, "dtype 'int64'"),
        ({"name": "w", "dtype": "float32", "shape": [0]}, "positive integer dims"),
        ({"name": "w", "shape": [2]}, "/0 must be an object with name, dtype and shape"),
    ]:
        path.write_text(json.dumps([bad]))
        with pytest.raises(LayoutError, match=message) as caught:
            read_layout(str(path))
        assert "\n" not in str(caught.value)
    with pytest.raises(LayoutError, match="not a preset"):
        read_layout(str(tmp_path / "missing.json"))


def test_a_safetensors_header_is_read_without_its_data(tmp_path: Path) -> None:
    save_file = pytest.importorskip("safetensors.numpy").save_file

    path = tmp_path / "model.safetensors"
    save_file({"a.weight": np.zeros((6, 4), np.float16), "a.norm": np.ones(4, np.float32)}, str(path))
    assert sorted(read_layout(str(path))) == [("a.norm", "float32", (4,)), ("a.weight", "float16", (6, 4))]
    model = layout_model(str(path))
    assert model.name == "model.safetensors" and model["a.weight"].publisher_dim == 0
    (tmp_path / "broken.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(LayoutError, match="not a safetensors file"):
        read_layout(str(tmp_path / "broken.safetensors"))


@pytest.mark.parametrize(
    ("name", "publisher", "receiver"),
    [
        ("model.embed_tokens.weight", 0, 0),  # vocabulary-parallel
        ("lm_head.weight", 0, 0),
        ("model.layers.3.self_attn.q_proj.weight", 0, 0),  # column-parallel
        ("model.layers.3.self_attn.o_proj.weight", 1, 1),  # row-parallel
        ("model.layers.3.mlp.down_proj.weight", 1, 1),
        ("model.layers.3.input_layernorm.weight", None, None),  # replicated
        ("model.layers.3.self_attn.q_norm.weight", None, None),
        ("model.layers.3.mlp.gate.weight", None, None),  # the router
        ("model.layers.3.mlp.experts.7.up_proj.weight", "expert", 0),  # EP trainers, TP engines
        ("model.layers.3.mlp.experts.7.down_proj.weight", "expert", 1),
    ],
)
def test_tensors_are_split_as_the_engines_split_them(name: str, publisher: object, receiver: object) -> None:
    shape = (8,) if "norm" in name else (8, 8)
    assert split_of(name, shape, publisher=True) == publisher
    assert split_of(name, shape, publisher=False) == receiver


@pytest.mark.parametrize(("experts", "ranks"), [(128, 16), (128, 3), (8, 5), (4, 7)])
def test_experts_are_dealt_in_contiguous_blocks(experts: int, ranks: int) -> None:
    for rank in range(ranks):
        held = [e for e in range(experts) if expert_owner(e, experts, ranks) == rank]
        assert held == list(range(experts * rank // ranks, experts * (rank + 1) // ranks))


def _tiles(model: Model, ranks: int, *, publisher: bool) -> None:
    """Every element of every tensor is held once, or by every rank when replicated."""
    per_rank = [
        (model.publisher_boxes if publisher else model.receiver_boxes)(r, ranks) for r in range(ranks)
    ]
    for spec in model:
        held = [boxes[spec.name] for boxes in per_rank if spec.name in boxes]
        volume = sum(math.prod(shape) for _, shape in held)
        split = spec.publisher_dim if publisher else spec.receiver_dim
        assert volume == math.prod(spec.full_shape) * (ranks if split is None else 1), spec.name


@pytest.mark.parametrize("ranks", [1, 2, 3, 16])
def test_a_scaled_moe_layout_tiles_on_both_sides(ranks: int) -> None:
    model = layout_model("moe-30b-a3b", 2 << 20)
    assert len(model.tensors) == 18867 and model.name == f"moe-30b-a3b@{2 << 20}B"
    _tiles(model, ranks, publisher=True)
    _tiles(model, ranks, publisher=False)
    expert = "model.layers.0.mlp.experts.127.gate_proj.weight"
    assert model[expert].expert == (127, 128)
    holders = [r for r in range(ranks) if expert in model.publisher_boxes(r, ranks)]
    assert holders == [ranks - 1]  # the last expert on the last rank only


def test_publishers_and_receivers_hold_different_boxes() -> None:
    model = layout_model("moe-30b-a3b", 2 << 20)
    pub, recv = model.publisher_boxes(0, 2), model.receiver_boxes(0, 2)
    assert set(recv) - set(pub)  # a receiver needs part of every expert; a publisher holds half of them
    assert any(pub[n] != recv[n] for n in set(pub) & set(recv) if model[n].publisher_dim is not None)


def test_resolve_model_scales_a_layout_only_when_given_a_size() -> None:
    assert resolve_model("tiny", None).name == "tiny"
    assert resolve_model(f"{1 << 20}B", "dense-8b").nbytes >= 1 << 20
    assert resolve_model("default", "dense-8b").nbytes == layout_bytes(PRESETS["dense-8b"]())


def test_float16_truth_is_the_float32_truth_rounded() -> None:
    model = layout_model("moe-30b-a3b", 1 << 20)
    spec = model["model.layers.0.self_attn.q_proj.weight"]
    half = type(spec)(spec.name, "float16", spec.full_shape, 0, 0)
    single = type(spec)(spec.name, "float32", spec.full_shape, 0, 0)
    box = ((0, 0), spec.full_shape)
    a = np.empty(math.prod(spec.full_shape) * 2, np.uint8)
    b = np.empty(math.prod(spec.full_shape) * 4, np.uint8)
    fill_truth(half, 1, box, a)
    fill_truth(single, 1, box, b)
    assert np.array_equal(a.view(np.float16), b.view(np.float32).astype(np.float16))
