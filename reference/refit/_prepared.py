"""A plan's NIXL requests, prepared once per plan and staging buffer, posted every step.

Preparing a request is most of what a small read costs: NIXL resolves every
descriptor against the registrations, picks the backend and builds the request.
A real model has thousands of shards per publisher, so a receiver prepares one
local and one remote descriptor list per peer (every segment of the plan), and
one request per piece over its entries, once; every step then only posts them
again. They hold as long as the addresses do: the plan (its table signature,
so the publishers' addresses and metadata) and the slot's staging buffer. A
new plan, a reallocated staging buffer or a failed transfer drops them.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._pull import Piece
from ._region import Region

__all__ = ["PreparedPull"]


class PreparedPull:
    """The requests for ``pieces`` into the staging buffer at ``base`` (inside ``staging``)."""

    def __init__(self, agent: Any, key: Hashable, pieces: Sequence[Piece], staging: Region) -> None:
        self.agent, self.key, self.pieces = agent, key, list(pieces)
        self.requests: list[Any] = []
        self._dlists: list[Any] = []
        try:
            self._prepare(staging)
        except BaseException:
            self.drop()
            raise

    def _prepare(self, staging: Region) -> None:
        by_peer: dict[str, list[int]] = {}
        for i, piece in enumerate(self.pieces):
            by_peer.setdefault(piece.peer, []).append(i)
        requests: dict[int, Any] = {}
        for peer, indices in by_peer.items():
            mem_type, device = self.agent.peer_memory(peer)
            segments = [s for i in indices for s in self.pieces[i].segments]
            local = np.asarray(
                [(staging.addr + s.offset, s.nbytes, staging.device_id) for s in segments], dtype=np.uint64
            )
            remote = np.asarray([(s.remote, s.nbytes, device) for s in segments], dtype=np.uint64)
            local_h = self.agent.prepare_dlist(None, local, staging.mem_type)
            self._dlists.append(local_h)
            remote_h = self.agent.prepare_dlist(peer, remote, mem_type)
            self._dlists.append(remote_h)
            first = 0
            for i in indices:
                n = len(self.pieces[i].segments)
                entries = np.arange(first, first + n, dtype=np.int32)
                requests[i] = self.agent.prepared_read(peer, local_h, remote_h, entries)
                first += n
        self.requests = [requests[i] for i in range(len(self.pieces))]

    def drop(self) -> None:
        """Release every request (cancelling any still running) and list; safe to call twice."""
        requests, dlists, self.requests, self._dlists = self.requests, self._dlists, [], []
        self.agent.drop_prepared(requests, dlists)
