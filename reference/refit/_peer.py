"""What a read from a peer can end in, and a read in flight; no NIXL (``_nixl`` re-exports these)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PeerError", "PeerTimeout", "PendingRead"]


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


@dataclass(frozen=True)
class PendingRead:
    """A posted READ: its peer and NIXL's handle."""

    peer: str
    handle: Any
