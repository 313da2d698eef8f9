"""Pull a plan's whole shards into staging over NIXL, telling the caller as each shard lands.

Each peer's shards become requests of at most ``chunk_bytes``: a big shard is
cut into several, small shards are packed many to one request (a real model has
thousands of small tensors, and each request costs as much to post as megabytes
cost to copy). Up to ``window`` requests are in flight at once, largest shards
first (so what lands last, whose digest cannot overlap any read, is small) and
peers interleaved (so they are read concurrently). The requests are prepared
once per plan and slot (``_prepared``) and posted again every step. Over shared memory UCX copies inside the post itself, so
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

__all__ = ["Piece", "Segment", "cut", "pull"]

#: ``progress(done_bytes, total_bytes, elapsed_s)`` while bytes move.
Progress = Callable[[int, int, float], None]

#: Descriptors in one request at most: small shards are packed into one READ, not one each.
MAX_SEGMENTS = 4096


@dataclass(frozen=True)
class Segment:
    """``nbytes`` of read ``read`` of a plan: from ``remote`` on the peer to ``offset`` in staging."""

    read: int
    remote: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Piece:
    """One READ request from ``peer``: several whole small shards, or part of a big one."""

    peer: str
    segments: tuple[Segment, ...]
    nbytes: int


def cut(plan: ReadPlan, chunk_bytes: int, max_segments: int = MAX_SEGMENTS) -> list[Piece]:
    """The plan's reads as requests of at most ``chunk_bytes`` each, in posting order.

    Staging offsets, not addresses: the same pieces serve either slot.
    """
    per_peer: dict[str, list[Piece]] = {}
    packing: dict[str, tuple[list[Segment], int]] = {}

    def flush(peer: str) -> None:
        segments, nbytes = packing.pop(peer, ([], 0))
        if segments:
            per_peer.setdefault(peer, []).append(Piece(peer, tuple(segments), nbytes))

    for i, r in sorted(enumerate(plan.reads), key=lambda item: -item[1].nbytes):
        for start in range(0, r.nbytes, chunk_bytes):
            n = min(chunk_bytes, r.nbytes - start)
            segments, nbytes = packing.get(r.agent, ([], 0))
            if segments and (nbytes + n > chunk_bytes or len(segments) >= max_segments):
                flush(r.agent)
                segments, nbytes = [], 0
            segments.append(Segment(i, r.addr + start, r.staging_offset + start, n))
            packing[r.agent] = (segments, nbytes + n)
    for peer in list(packing):
        flush(peer)
    return [p for row in zip_longest(*per_peer.values()) for p in row if p is not None]


def pull(
    agent: Any,
    pieces: Sequence[Piece],
    requests: Sequence[Any],
    *,
    window: int,
    timeout_s: float,
    landed: Callable[[Piece], None],
    progress: Progress | None = None,
) -> float:
    """Post every piece's prepared request (``requests[i]`` for ``pieces[i]``, see ``_prepared``);
    ``landed(piece)`` runs as each one is in. Returns the seconds taken.

    Raises :class:`TransferFailed` naming the peer when NIXL fails a read (a dead
    publisher), or the peers still in flight when nothing lands for ``timeout_s``.
    A request still running when this raises is left to the caller, who must drop
    the prepared requests (releasing cancels them).
    """
    from ._nixl import PeerError, PeerTimeout, PendingRead

    total = sum(p.nbytes for p in pieces)
    queue = list(reversed(range(len(pieces))))
    flying: list[tuple[PendingRead, Piece]] = []
    done = 0
    started = last = time.monotonic()
    try:
        while queue or flying:
            while queue and len(flying) < window:
                i = queue.pop()
                flying.append((agent.repost(pieces[i].peer, requests[i]), pieces[i]))
            landed_now = 0
            for item in list(flying):
                pending, piece = item
                if not agent.done(pending):
                    continue
                flying.remove(item)
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
            agent.abandon_quietly([pending for pending, _ in flying], min(timeout_s, 2.0))
    return time.monotonic() - started
