"""What a read from a peer can end in, and a read in flight; no NIXL (``_nixl`` re-exports these)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._errors import PeerError, PeerTimeout

__all__ = ["PeerError", "PeerTimeout", "PendingRead"]


@dataclass(frozen=True)
class PendingRead:
    """A posted READ: its peer and NIXL's handle."""

    peer: str
    handle: Any
