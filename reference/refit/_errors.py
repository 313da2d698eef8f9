"""Every exception of the refit package: why a step was refused before or during the transfer,
and the failures of its parts (layouts, plans, peers, child processes, stores). Records with
fields, short messages.

Each error pickles and copies by its fields (``__reduce__``), so one raised in a worker
process reaches the parent whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._model import Box

__all__ = [
    "ChildDied",
    "DiscoveryTimeout",
    "LayoutError",
    "NixlMissing",
    "PeerError",
    "PeerTimeout",
    "PlanError",
    "RefitError",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "TableRejected",
    "TransferFailed",
]


class RefitError(Exception):
    """A step could not be refit; the receiver's weights are unchanged. ``rule`` is a stable id."""

    rule = "REFIT"


class TableRejected(RefitError):
    """A published table broke ``rule``; caught before any byte moved.

    ``source`` is the store key (or agent) whose table broke it, ``""`` when the
    problem only shows in the merged tables.
    """

    def __init__(self, rule: str, source: str, detail: str) -> None:
        self.rule = rule
        self.source = source
        self.detail = detail
        where = f"{source}: " if source else ""
        tag = "" if detail.endswith(f"[{rule}]") else f" [{rule}]"  # codec and planner errors carry it
        super().__init__(f"{where}{detail}{tag}")

    def __reduce__(self) -> tuple[type[TableRejected], tuple[str, str, str]]:
        return type(self), (self.rule, self.source, self.detail)


class DiscoveryTimeout(RefitError):
    """Fewer than ``expected`` non-empty tables showed up in time."""

    rule = "DISCOVERY_TIMEOUT"

    def __init__(
        self, expected: int, seen: int, readable: int, empty: int, timeout_s: float, store: str = ""
    ) -> None:
        self.expected, self.seen, self.readable, self.empty = expected, seen, readable, empty
        self.timeout_s, self.store = timeout_s, store
        super().__init__(
            f"{store + ': ' if store else ''}{readable - empty} of {expected} non-empty table(s) after "
            f"{timeout_s:g} s: {seen} seen, {readable} readable, {empty} empty [{self.rule}]"
        )

    def __reduce__(self) -> tuple[type[DiscoveryTimeout], tuple[int, int, int, int, float, str]]:
        return type(self), (self.expected, self.seen, self.readable, self.empty, self.timeout_s, self.store)


class TransferFailed(RefitError):
    """NIXL could not load a peer or finish a read (a dead or frozen publisher)."""

    rule = "TRANSFER_FAILED"

    def __init__(self, agents: list[str], detail: str) -> None:
        self.agents = agents
        self.detail = detail
        super().__init__(f"{', '.join(agents) or 'peer'}: {detail} [{self.rule}]")

    def __reduce__(self) -> tuple[type[TransferFailed], tuple[list[str], str]]:
        return type(self), (self.agents, self.detail)


class NixlMissing(ImportError):
    """NIXL itself is not installed (``_nixl`` raises it on import). Tests skip on exactly this,
    so a broken import of our own code fails them instead of skipping them."""


class LayoutError(ValueError):
    """A layout that cannot be read or used; the message is one line naming the source."""


class PeerError(RuntimeError):
    """NIXL failed a read from ``peer`` (a dead peer, or a bad remote range)."""

    def __init__(self, peer: str, message: str) -> None:
        self.peer = peer
        super().__init__(message)


class PeerTimeout(TimeoutError):
    """Reads from ``peers`` did not finish in time (peers alive but not progressing)."""

    def __init__(self, peers: list[str], message: str) -> None:
        self.peers = peers
        super().__init__(message)


def fmt_box(offset: Sequence[int], shape: Sequence[int]) -> str:
    """``[0:4, 2:6]`` for offset (0, 2) and shape (4, 4); ``[]`` for a scalar."""
    if len(offset) != len(shape):
        return f"offset {tuple(offset)} shape {tuple(shape)}"
    return "[" + ", ".join(f"{o}:{o + s}" for o, s in zip(offset, shape, strict=True)) + "]"


class PlanError(ValueError):
    """A wanted box cannot be planned from the published shards.

    A record: ``rule`` is a stable id, ``tensor`` and ``box`` name the wanted
    box, ``region`` is the hole or the doubly covered part when there is one.
    """

    def __init__(self, rule: str, tensor: str, box: Box, detail: str, region: Box | None = None) -> None:
        self.rule = rule
        self.tensor = tensor
        self.box = box
        self.detail = detail
        self.region = region
        super().__init__(f"{detail} (tensor {tensor!r}, wanted {fmt_box(*box)}) [{rule}]")


class ChildDied(RuntimeError):
    """A child exited, or did not answer in time."""


class StoreError(RefitError):
    """The store itself failed (not a blob in it); ``store`` is its URL or path, never a password."""

    rule = "STORE"

    def __init__(self, store: str, detail: str) -> None:
        self.store, self.detail = store, detail
        super().__init__(f"{store}: {detail} [{self.rule}]")


class StoreUnavailable(StoreError):
    """The store could not be reached or refused us, after bounded retries."""

    rule = "STORE_UNAVAILABLE"


class StoreCorrupt(StoreError):
    """The store holds something that is not a rendezvous namespace where ours should be."""

    rule = "STORE_CORRUPT"
