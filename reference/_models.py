"""Typed, immutable views of the wire objects.

Field constraints mirror the schema of the latest spec version; a property test
(tests/test_models.py) proves the two agree in both directions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, Strict, StringConstraints, ValidationError
from refitwire._errors import InvalidBlob, Violation, pointer
from refitwire._registry import cached_schema
from refitwire._spec import LATEST

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


M = TypeVar("M", PublishedShard, PublishedTensor)


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


def as_model(model: type[M], obj: Any, at: tuple[str | int, ...]) -> M:
    """``obj`` as exactly a ``model`` (PublishedTensor or PublishedShard): a mapping with its
    fields, or an instance of it or of a subclass (read by field name, extras left behind).

    What does not convert raises InvalidBlob, never pydantic's ValidationError: each
    problem becomes a violation at ``at`` + its place in ``obj``, named by the rule the
    schema gives that member (REQUIRED, TYPE, INTEGER_LITERAL, WRITE_KNOWN_MEMBERS, or
    the member's range or pattern rule).
    """
    if type(obj) is model:
        return obj
    try:
        return model.model_validate(obj, from_attributes=True)
    except ValidationError as exc:
        level = "tensor" if model is PublishedTensor else "shard"
        found = []
        for e in exc.errors():
            place = e["loc"][:-1] if e["type"] == "missing" else e["loc"]  # REQUIRED names the object
            found.append(Violation(_rule_of(e, level), pointer(*at, *place), e.get("input"), e["msg"]))
        raise InvalidBlob(found) from None


def _rule_of(error: Any, level: str) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "missing":
        return "REQUIRED"
    if kind == "extra_forbidden":
        return "WRITE_KNOWN_MEMBERS"
    if kind == "int_type" and type(value) is float and value.is_integer():
        return "INTEGER_LITERAL"
    if kind.endswith("_type") or kind in ("is_instance_of", "model_attributes_type"):
        return "TYPE"
    root = cached_schema("rendezvous", LATEST)
    node: Any = root["$defs"][level]
    for part in error["loc"]:
        node = node.get("properties", {}).get(part, {}) if isinstance(part, str) else node.get("items", {})
        if "$ref" in node:
            node = root["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return str(node.get("x-rule", "TYPE"))
