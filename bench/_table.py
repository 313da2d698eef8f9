"""A seeded, realistic shard table: the shape of what one MoE trainer rank publishes.

Names follow a Qwen3-MoE-like checkpoint (attention, norms, router, then per-expert
``gate_proj``/``up_proj``/``down_proj``), dtypes mix bf16 (weights) and fp32 (norms,
router), each tensor has one or two shards (a dim-0 split across two ranks for about
half of them), every shard carries a digest, and the blob carries a step stamp.
4922 entries make a blob of about 2.6 MB, the size upstream quotes for Qwen3-30B-A3B.

The neutral form (:func:`neutral`) is plain JSON data, so the released upstream writer
can be fed exactly the same table in its own environment.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from refitwire import PublishedShard, PublishedTensor

__all__ = ["ENTRIES", "make_table", "table_inputs"]

#: The entry count upstream quotes for Qwen3-30B-A3B.
ENTRIES = 4922

_HIDDEN, _EXPERT_FFN, _EXPERTS, _HEADS, _KV_HEADS, _HEAD_DIM = 2048, 768, 128, 32, 4, 128
_BASE = 0x7F3A_0000_0000


def _names() -> Iterator[tuple[str, str, tuple[int, ...]]]:
    """(name, dtype, full_shape) in checkpoint order, for as many layers as asked."""
    yield "model.embed_tokens.weight", "torch.bfloat16", (151936, _HIDDEN)
    layer = 0
    while True:
        at = f"model.layers.{layer}"
        yield f"{at}.input_layernorm.weight", "torch.float32", (_HIDDEN,)
        yield f"{at}.self_attn.q_proj.weight", "torch.bfloat16", (_HEADS * _HEAD_DIM, _HIDDEN)
        yield f"{at}.self_attn.k_proj.weight", "torch.bfloat16", (_KV_HEADS * _HEAD_DIM, _HIDDEN)
        yield f"{at}.self_attn.v_proj.weight", "torch.bfloat16", (_KV_HEADS * _HEAD_DIM, _HIDDEN)
        yield f"{at}.self_attn.o_proj.weight", "torch.bfloat16", (_HIDDEN, _HEADS * _HEAD_DIM)
        yield f"{at}.self_attn.q_norm.weight", "torch.float32", (_HEAD_DIM,)
        yield f"{at}.self_attn.k_norm.weight", "torch.float32", (_HEAD_DIM,)
        yield f"{at}.post_attention_layernorm.weight", "torch.float32", (_HIDDEN,)
        yield f"{at}.mlp.gate.weight", "torch.float32", (_EXPERTS, _HIDDEN)
        for e in range(_EXPERTS):
            yield f"{at}.mlp.experts.{e}.gate_proj.weight", "torch.bfloat16", (_EXPERT_FFN, _HIDDEN)
            yield f"{at}.mlp.experts.{e}.up_proj.weight", "torch.bfloat16", (_EXPERT_FFN, _HIDDEN)
            yield f"{at}.mlp.experts.{e}.down_proj.weight", "torch.bfloat16", (_HIDDEN, _EXPERT_FFN)
        layer += 1


def _agent(rank: int) -> str:
    return f"qwen3-30b-a3b-trainer-rank{rank:02d}-dp00-pp00-tp{rank:02d}-ep00"


def make_table(entries: int = ENTRIES, *, seed: int = 0, rank: int = 3) -> list[PublishedTensor]:
    """``entries`` tensors as one trainer rank would publish them (deterministic in ``seed``)."""
    rng = random.Random(seed)
    addr = _BASE + rank * (1 << 36)
    me, peer = _agent(rank), _agent(rank ^ 1)
    tensors = []
    for (name, dtype, full_shape), _ in zip(_names(), range(entries)):
        elsize = 2 if dtype == "torch.bfloat16" else 4
        split = len(full_shape) == 2 and full_shape[0] % 2 == 0 and rng.random() < 0.9
        if split:
            half = full_shape[0] // 2
            boxes: list[tuple[tuple[int, ...], tuple[int, ...]]]
            boxes = [((0, 0), (half, full_shape[1])), ((half, 0), (half, full_shape[1]))]
            owners = [me, peer] if rng.random() < 0.5 else [peer, me]
        else:
            boxes = [(tuple(0 for _ in full_shape), full_shape)]
            owners = [me]
        shards = []
        for (offset, shape), agent in zip(boxes, owners):
            nbytes = elsize
            for extent in shape:
                nbytes *= extent
            shards.append(
                PublishedShard(
                    agent_name=agent,
                    device_id=rank if agent == me else rank ^ 1,
                    addr=addr,
                    shard_offset=offset,
                    shape=shape,
                    digest=f"{rng.getrandbits(128):032x}",
                )
            )
            addr += (nbytes + 511) // 512 * 512
        tensors.append(
            PublishedTensor(
                name=name, dtype=dtype, elsize=elsize, full_shape=full_shape, shards=tuple(shards)
            )
        )
    return tensors


def table_inputs(entries: int = ENTRIES, *, seed: int = 0) -> dict[str, Any]:
    """Everything a writer takes, as keyword arguments (agent metadata is 453 seeded bytes)."""
    rng = random.Random(seed ^ 0x5EED)
    return {
        "agent_metadata": bytes(rng.getrandbits(8) for _ in range(453)),
        "agent_name": _agent(3),
        "metadata_endpoint": "10.0.0.3:5558",
        "tensors": make_table(entries, seed=seed),
        "publisher_step": 1200,
    }
