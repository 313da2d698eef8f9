"""Hypothesis strategies for well-formed payloads (valid geometry, every optional member)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from refitwire import PublishedShard, PublishedTensor

DTYPES = [
    ("torch.bfloat16", 2),
    ("torch.float32", 4),
    ("torch.int8", 1),
    ("float64", 8),
    ("torch.float8_e4m3fn", 1),
]
names = st.text(min_size=0, max_size=12)
digests = st.none() | st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)


@st.composite
def tensors(draw: Any) -> PublishedTensor:
    dtype, elsize = draw(st.sampled_from(DTYPES))
    full_shape = draw(st.lists(st.integers(0, 6), min_size=0, max_size=3))
    shards = []
    for _ in range(draw(st.integers(0, 3))):
        offset = [draw(st.integers(0, size)) for size in full_shape]
        shape = [draw(st.integers(0, size - start)) for size, start in zip(full_shape, offset)]
        nbytes = elsize
        for extent in shape:
            nbytes *= extent
        shards.append(PublishedShard(
            agent_name=draw(names),
            device_id=draw(st.integers(0, 2**31 - 1)),
            addr=draw(st.integers(0, 2**64 - 1 - nbytes)),
            shard_offset=tuple(offset),
            shape=tuple(shape),
            digest=draw(digests),
        ))  # fmt: skip
    return PublishedTensor(
        name=draw(names), dtype=dtype, elsize=elsize, full_shape=tuple(full_shape), shards=shards
    )


payloads = st.fixed_dictionaries({
    "agent_metadata": st.binary(max_size=64),
    "agent_name": names,
    "metadata_endpoint": names,
    "tensors": st.lists(tensors(), max_size=4),
    "publisher_step": st.none() | st.integers(0, 2**63 - 1),
})  # fmt: skip
