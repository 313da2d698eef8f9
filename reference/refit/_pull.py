"""Pull a plan's whole shards into staging over NIXL, telling the caller as each shard lands.

Each shard is cut into pieces of at most ``chunk_bytes``; up to ``window`` pieces
are in flight at once, largest shards first (so the shard that lands last, whose
digest cannot overlap any read, is a small one) and peers interleaved (so they
are read concurrently). Over shared memory UCX copies inside the post itself, so
the reads of one receiver are sequential in its thread and the overlap comes from
digesting landed shards on another thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from ._check import ReadPlan
from ._errors import TransferFailed

__all__ = ["Piece", "cut", "pull"]

#: ``progress(done_bytes, total_bytes, elapsed_s)`` while bytes move.
Progress = Callable[[int, int, float], None]


@dataclass(frozen=True)
class Piece:
    """Part of read ``read`` of a plan: ``nbytes`` from ``remote`` on ``peer`` to ``local``."""

    read: int
    peer: str
    remote: int
    local: int
    nbytes: int


def cut(plan: ReadPlan, base: int, chunk_bytes: int) -> list[Piece]:
    """The plan's reads as pieces into staging at ``base``, in posting order."""
    per_peer: dict[str, list[Piece]] = {}
    for i, r in sorted(enumerate(plan.reads), key=lambda item: -item[1].nbytes):
        for start in range(0, r.nbytes, chunk_bytes):
            n = min(chunk_bytes, r.nbytes - start)
            per_peer.setdefault(r.agent, []).append(
                Piece(i, r.agent, r.addr + start, base + r.staging_offset + start, n)
            )
    return [p for row in zip_longest(*per_peer.values()) for p in row if p is not None]


def pull(
    agent: Any,
    pieces: Sequence[Piece],
    *,
    window: int,
    timeout_s: float,
    landed: Callable[[Piece], None],
    progress: Progress | None = None,
) -> float:
    """Read every piece; ``landed(piece)`` runs as each one is in. Returns the seconds taken.

    Raises :class:`TransferFailed` naming the peer when NIXL fails a read (a dead
    publisher), or the peers still in flight when nothing lands for ``timeout_s``.
    """
    from ._nixl import PeerError, PeerTimeout, PendingRead

    total = sum(p.nbytes for p in pieces)
    queue = list(reversed(pieces))
    flying: list[tuple[PendingRead, Piece]] = []
    done = 0
    started = last = time.monotonic()
    try:
        while queue or flying:
            while queue and len(flying) < window:
                piece = queue.pop()
                flying.append(
                    (agent.post_read(piece.peer, [(piece.remote, piece.local, piece.nbytes)]), piece)
                )
            landed_now = 0
            for item in list(flying):
                pending, piece = item
                if not agent.done(pending):
                    continue
                flying.remove(item)
                agent.release(pending)
                landed_now += 1
                done += piece.nbytes
                landed(piece)
                if progress is not None:
                    progress(done, total, time.monotonic() - started)
            if landed_now:
                last = time.monotonic()
            elif time.monotonic() - last > timeout_s:
                names = sorted({piece.peer for _, piece in flying})
                raise PeerTimeout(names, f"NIXL read from {names} not done after {timeout_s:g} s")
            else:  # nothing landed this sweep: yield the core
                time.sleep(0.0002)
    except PeerError as exc:
        raise TransferFailed([exc.peer], str(exc)) from None
    except PeerTimeout as exc:
        raise TransferFailed(exc.peers, str(exc)) from None
    finally:
        if flying:
            agent.abandon([pending for pending, _ in flying], min(timeout_s, 2.0))
    return time.monotonic() - started
