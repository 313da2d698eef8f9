"""The checks a receiver makes before any byte moves, and the read plan they produce.

Pure Python over decoded tables, plus the receiver's NIXL agent for the two checks
only NIXL can answer (whose metadata a blob carries, and which remote memory it
registered). A plan depends only on the tables' geometry, agents and NIXL
metadata, never on digests or step stamps, so :func:`table_signature` tells when
a plan can be reused: equal signatures mean every check here would pass again.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from refitwire import InvalidBlob, LazyTable, RendezvousPayload, merge_shard_tables

from ._errors import TableRejected, TransferFailed
from ._model import Box, Model
from ._plan import PlanError, SourceShard, check_coverage, plan_reads

__all__ = ["PeerLoader", "PlannedRead", "ReadPlan", "make_plan", "table_signature"]

_ALIGN = 256

Payloads = Sequence[tuple[str, RendezvousPayload]]


@dataclass(frozen=True)
class PlannedRead:
    """One published shard to pull whole into staging at ``staging_offset``."""

    tensor: str
    key: str  # the store key of the blob that published it
    agent: str
    addr: int
    shard_offset: tuple[int, ...]
    shape: tuple[int, ...]
    nbytes: int
    staging_offset: int

    @property
    def box(self) -> Box:
        return self.shard_offset, self.shape


@dataclass(frozen=True)
class ReadPlan:
    """Every read of one step, and what reading only the needed boxes would take."""

    signature: Hashable
    reads: tuple[PlannedRead, ...]
    staging_bytes: int
    exact_runs: int
    exact_bytes: int
    #: Tensors whose needed box is exactly one published shard: read index (no assembly needed).
    whole: Mapping[str, int]
    #: Where each read's shard is in the tables: (payload, tensor, shard) indices. Equal
    #: signatures mean equal geometry in the same order, so these hold for every step's tables.
    where: tuple[tuple[int, int, int], ...] = ()

    @property
    def wire_bytes(self) -> int:
        return sum(r.nbytes for r in self.reads)

    def digests(self, payloads: Payloads) -> list[tuple[str | None, int | None]]:
        """This step's digest and stamp for each read, in plan order."""
        tables = [(entries_of(payload), payload.publisher_step) for _, payload in payloads]
        out = []
        for p, t, s in self.where:
            entries, stamp = tables[p]
            out.append((entries[t].shards[s].digest, stamp))
        return out


def entries_of(payload: RendezvousPayload) -> Sequence[Any]:
    """The payload's entries to look at, without building models where the codec left them unbuilt
    (``LazyTable.entries_as_read``): a warm step reads only geometry and digests."""
    tensors = payload.tensors
    return tensors.entries_as_read() if isinstance(tensors, LazyTable) else tensors


def table_signature(payloads: Payloads) -> Hashable:
    """Everything the checks and the plan read from the tables: keys, agents, metadata, geometry."""
    return tuple(
        (key, p.agent_name, p.agent_metadata, tuple(
            (t.name, t.dtype, t.elsize, tuple(t.full_shape), tuple(
                (s.agent_name, s.device_id, s.addr, tuple(s.shard_offset), tuple(s.shape)) for s in t.shards
            ))
            for t in entries_of(p)
        ))
        for key, p in payloads
    )  # fmt: skip


class PeerLoader:
    """The receiver's side of the NIXL checks: load each publisher's metadata once."""

    def __init__(self, agent: Any, mem_type: str) -> None:
        self.agent = agent
        self.mem_type = mem_type
        self.loaded: dict[str, bytes] = {}

    def load(self, agent: str, key: str, payload: RendezvousPayload, *, device_id: int) -> None:
        if self.loaded.get(agent) == payload.agent_metadata:
            return
        if agent in self.loaded:
            self.agent.remove_peer(agent)
            del self.loaded[agent]
        try:
            loaded = self.agent.add_peer(payload.agent_metadata, mem_type=self.mem_type, device_id=device_id)
        except RuntimeError as exc:
            raise TransferFailed([agent], f"cannot load its NIXL metadata: {exc}") from None
        if loaded != agent:
            self.agent.remove_peer(loaded)
            raise TableRejected(
                "AGENT_MISMATCH",
                key,
                f"the blob's NIXL metadata is for agent {loaded!r}, the blob says {agent!r}",
            )
        self.loaded[agent] = payload.agent_metadata


def make_plan(
    payloads: Payloads, need: Mapping[str, Box], model: Model, peers: PeerLoader, signature: Hashable
) -> ReadPlan:
    """Every check that needs no transfer; the whole shards to pull, in plan order.

    ``signature`` is :func:`table_signature` of ``payloads``, kept with the plan.
    """
    by_agent: dict[str, tuple[str, RendezvousPayload]] = {}
    index: dict[tuple[str, str, Box], tuple[int, int, int]] = {}
    for p, (_, payload) in enumerate(payloads):
        for t, tensor in enumerate(payload.tensors):
            for s, shard in enumerate(tensor.shards):
                index.setdefault((shard.agent_name, tensor.name, (tuple(shard.shard_offset), tuple(shard.shape))),
                                 (p, t, s))  # fmt: skip
    for key, payload in payloads:
        if payload.agent_name in by_agent:
            raise TableRejected(
                "DUPLICATE_AGENT",
                key,
                f"agent {payload.agent_name!r} also publishes {by_agent[payload.agent_name][0]}",
            )
        by_agent[payload.agent_name] = (key, payload)
        for tensor in payload.tensors:
            for shard in tensor.shards:
                if shard.agent_name != payload.agent_name:
                    raise TableRejected(
                        "SHARD_AGENT", key,
                        f"a shard of {tensor.name!r} names agent {shard.agent_name!r} "
                        f"in a blob from {payload.agent_name!r}",
                    )  # fmt: skip
    try:
        merged = {t.name: t for t in merge_shard_tables([p.tensors for _, p in payloads])}
    except InvalidBlob as exc:
        raise TableRejected(exc.rule, "", str(exc)) from None

    reads: list[PlannedRead] = []
    whole: dict[str, int] = {}
    devices: dict[str, int] = {}
    exact_runs = exact_bytes = offset = 0
    for name, (box_offset, box_shape) in need.items():
        spec = model[name]
        found = merged.get(name)
        if found is None:
            raise TableRejected("TENSOR_MISSING", "", f"no publisher publishes {name!r}")
        tensor = found
        seen = (tensor.dtype.removeprefix("torch."), tensor.elsize, tuple(tensor.full_shape))
        if seen != (spec.dtype, spec.elsize, spec.full_shape):
            raise TableRejected(
                "MODEL_MISMATCH", "", f"{name!r} is published as {seen}, this model has "
                f"{(spec.dtype, spec.elsize, spec.full_shape)}",
            )  # fmt: skip
        sources = [SourceShard.from_published(s) for s in tensor.shards]
        by_box = {(s.shard_offset, s.shape): s for s in tensor.shards}
        try:
            # The whole tensor, not just our box: overlaps and holes anywhere mean a broken table.
            whole_tensor = check_coverage(
                name, spec.full_shape, (0,) * len(spec.full_shape), spec.full_shape, sources
            )
            full = tuple(box_shape) == tuple(spec.full_shape)  # a box that is the tensor: the same answer
            hits = (
                whole_tensor
                if full
                else check_coverage(name, spec.full_shape, box_offset, box_shape, sources)
            )
        except PlanError as exc:
            raise TableRejected(exc.rule, "", str(exc)) from None
        # What reading only the box would take; computed here, once per plan.
        exact = plan_reads(name, spec.full_shape, spec.elsize, box_offset, box_shape, [h for h, _ in hits])
        exact_runs += len(exact)
        exact_bytes += sum(run.nbytes for run in exact)
        if len(hits) == 1 and (hits[0][0].offset, hits[0][0].shape) == (tuple(box_offset), tuple(box_shape)):
            whole[name] = len(reads)
        for source, _part in hits:
            shard = by_box[(source.offset, source.shape)]
            nbytes = math.prod(shard.shape) * tensor.elsize
            reads.append(PlannedRead(
                name, by_agent[shard.agent_name][0], shard.agent_name, shard.addr,
                tuple(shard.shard_offset), tuple(shard.shape), nbytes, offset,
            ))  # fmt: skip
            devices.setdefault(shard.agent_name, shard.device_id)
            offset += -(-nbytes // _ALIGN) * _ALIGN

    for agent in sorted(devices):
        peers.load(agent, *by_agent[agent], device_id=devices[agent])
    for agent in sorted(devices):  # one NIXL call per peer; one per shard only to name a refused one
        mine = [r for r in reads if r.agent == agent]
        try:
            peers.agent.check_remote(agent, [(r.addr, r.nbytes) for r in mine])
        except ValueError as exc:
            bad = next((r for r in mine if f"{r.addr:#x}+{r.nbytes} " in str(exc)), mine[0])
            raise TableRejected("ADDR_UNREGISTERED", bad.key, f"shard of {bad.tensor!r}: {exc}") from None
    where = tuple(index[(r.agent, r.tensor, r.box)] for r in reads)
    return ReadPlan(signature, tuple(reads), offset, exact_runs, exact_bytes, whole, where)
