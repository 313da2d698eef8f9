"""Typed, immutable views of the wire objects.

Field constraints mirror the schema of the latest spec version; a property test
(tests/test_models.py) proves the two agree in both directions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, Strict, StringConstraints

# Scalars are strict (no "12", no 1.0, no True); sequences accept lists or tuples.
U64 = Annotated[int, Strict(), Field(ge=0, le=2**64 - 1)]
Extent = Annotated[int, Strict(), Field(ge=0, le=2**63 - 1)]
Text = Annotated[str, Strict()]
Digest = Annotated[str, Strict(), StringConstraints(pattern=r"^[0-9a-f]{32}$")]
DtypeLabel = Annotated[str, Strict(), StringConstraints(pattern=r"^(torch\.)?[a-z][a-z0-9_]*$")]


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PublishedShard(_Wire):
    """One box of a tensor: ``shape`` elements from ``shard_offset``, row-major at ``addr``."""

    agent_name: Text
    device_id: Annotated[int, Strict(), Field(ge=0, le=2**31 - 1)]
    addr: U64
    shard_offset: tuple[Extent, ...]
    shape: tuple[Extent, ...]
    digest: Digest | None = None  # added in 1.1.0


class PublishedTensor(_Wire):
    """One source tensor and the shards of it that a publisher holds."""

    name: Text
    dtype: DtypeLabel
    elsize: Annotated[int, Strict(), Field(ge=1, le=64)]
    full_shape: tuple[Extent, ...]
    shards: tuple[PublishedShard, ...]


class RendezvousPayload(NamedTuple):
    """What ``unwrap_rendezvous_blob`` returns. Positions 0-3 never move; new fields are appended."""

    agent_metadata: bytes
    agent_name: str
    metadata_endpoint: str
    tensors: Sequence[PublishedTensor]  # a list, or a LazyTable with unwrap(..., lazy=True)
    publisher_step: int | None = None  # None means unknown, never step 0
    tensor_count: int | None = None  # set when the table was counted, not decoded

    def entry_count(self) -> int:
        return len(self.tensors) if self.tensor_count is None else self.tensor_count
