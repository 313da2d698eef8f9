"""A thin wrapper over NIXL for refit reads: one agent, UCX, DRAM (VRAM for CUDA tensors).

Importing this module imports NIXL and raises :class:`~._errors.NixlMissing` (an ImportError)
when it is missing, so ``pytest.importorskip(..., exc_type=NixlMissing)`` works on it.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ._errors import NixlMissing
from ._options import PROGRESS_MODES
from ._peer import PeerError, PeerTimeout, PendingRead
from ._region import Region, region_of

__all__ = ["PROGRESS_MODES", "Agent", "PeerError", "PeerTimeout", "PendingRead", "Region", "Run", "load_nixl"]

Run = tuple[int, int, int]  # (remote_addr, local_addr, nbytes)

POLL_WAKE_US = 10_000  # the ``poll`` mode's longest sleep


def load_nixl() -> ModuleType:
    """The NIXL Python API: the ``nixl`` shim when present, else ``nixl_cu12``."""
    errors = []
    for name in ("nixl", "nixl_cu12"):
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            errors.append(f"{name}: {exc}")
    raise NixlMissing(
        "NIXL is not installed; install the refit extra (nixl-cu12) after the CPU torch build. "
        + "; ".join(errors)
    )


_nixl = load_nixl()
# NIXL's own errors share no base class; collect them to wrap exactly those.
_bind = getattr(sys.modules[_nixl.nixl_agent.__module__], "nixlBind", None)
_NIXL_ERRORS: tuple[type[BaseException], ...] = tuple(
    obj
    for name, obj in (vars(_bind).items() if _bind is not None else ())
    if name.startswith("nixl") and isinstance(obj, type) and issubclass(obj, Exception)
) or (Exception,)


class Agent:
    """One NIXL agent with the UCX backend.

    ``progress`` is one of :data:`PROGRESS_MODES`; the default ``poll`` keeps a
    progress thread that sleeps until there is work: a publisher must keep
    progressing while peers read it (wireup, error handling), or their reads
    hang, but a thread that never sleeps takes a core from whoever moves bytes.
    Use one agent from one thread.
    """

    def __init__(
        self,
        name: str,
        *,
        listen: bool = False,
        listen_port: int | None = None,
        progress: str = "poll",
    ) -> None:
        if progress not in PROGRESS_MODES:
            raise ValueError(f"unknown progress mode {progress!r}; known: {', '.join(PROGRESS_MODES)}")
        config = _nixl.nixl_agent_config(
            enable_prog_thread=progress != "off",
            enable_listen_thread=listen,
            listen_port=_nixl.DEFAULT_COMM_PORT if listen_port is None else listen_port,
            backends=["UCX"],
        )
        self.name = name
        self.progress_mode = progress
        delay_us = POLL_WAKE_US if progress == "poll" else 0
        self._agent: Any = self._call("agent creation", _new_agent, name, config, delay_us)
        if "UCX" not in self._agent.backends:  # NIXL only warns when a plugin is missing
            raise RuntimeError(f"NIXL agent {name!r} has no UCX backend")
        self._regs: list[tuple[Any, list[Region]]] = []
        self._keep: list[Any] = []  # registered buffers must outlive their registration
        self._peers: dict[str, tuple[str, int]] = {}

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def regions(self) -> list[Region]:
        return [r for _, regions in self._regs for r in regions]

    def register(self, buffers: Iterable[Any]) -> list[Region]:
        """Register numpy arrays, torch tensors or ``(addr, nbytes)`` DRAM regions.

        Fetch :meth:`metadata` after this: it carries the registrations.
        """
        buffers = list(buffers)
        regions = [region_of(b) for b in buffers]
        if any(r.nbytes <= 0 for r in regions):
            raise ValueError("cannot register an empty region")
        for mem_type in sorted({r.mem_type for r in regions}):
            group = [r for r in regions if r.mem_type == mem_type]
            descs = self._call(
                "register_memory",
                self._agent.register_memory,
                [(r.addr, r.nbytes, r.device_id, "") for r in group],
                mem_type,
            )
            self._regs.append((descs, group))
        self._keep.extend(b for b in buffers if not isinstance(b, tuple))
        return regions

    def metadata(self) -> bytes:
        """This agent's metadata, what a publisher puts in ``agent_meta_b64``."""
        return bytes(self._agent.get_agent_metadata())

    def add_peer(self, metadata: bytes, *, mem_type: str = "DRAM", device_id: int = 0) -> str:
        """Load a peer's metadata and return its agent name.

        ``mem_type``/``device_id`` describe the peer memory this agent will read.
        """
        name = self._call("add_remote_agent", self._agent.add_remote_agent, metadata)
        name = name.decode() if isinstance(name, bytes) else str(name)  # NIXL returns bytes
        self._peers[name] = (mem_type, device_id)
        return name

    def remove_peer(self, name: str) -> None:
        """Forget a peer (before loading its new metadata, or after it is gone)."""
        if self._peers.pop(name, None) is not None:
            _quiet(self._agent.remove_remote_agent, name)

    def check_remote(self, peer: str, ranges: Sequence[tuple[int, int]]) -> None:
        """Check that every ``(addr, nbytes)`` lies in memory ``peer`` registered; moves no bytes.

        NIXL resolves remote descriptors against the registrations carried in the
        peer's metadata when it prepares a descriptor list, so this asks NIXL
        itself. Raises ValueError naming the first range it refuses.
        """
        if peer not in self._peers:
            raise KeyError(f"unknown peer {peer!r}; add_peer() its metadata first")
        mem_type, device_id = self._peers[peer]
        ranges = [(addr, nbytes) for addr, nbytes in ranges if nbytes > 0]
        if len(ranges) > 1 and self._prepares(peer, ranges, mem_type, device_id):
            return  # all at once: one NIXL call for a table's thousands of shards
        for addr, nbytes in ranges:  # one by one, to name the first refused
            try:
                self._prepare_remote(peer, [(addr, nbytes)], mem_type, device_id)
            except _NIXL_ERRORS as exc:
                raise ValueError(
                    f"remote range {addr:#x}+{nbytes} is not inside memory registered by {peer!r} ({exc})"
                ) from None

    def _prepares(self, peer: str, ranges: Sequence[tuple[int, int]], mem_type: str, device_id: int) -> bool:
        try:
            self._prepare_remote(peer, ranges, mem_type, device_id)
        except _NIXL_ERRORS:
            return False
        return True

    def _prepare_remote(self, peer: str, ranges: Sequence[tuple[int, int]], mem_type: str, dev: int) -> None:
        descs = np.asarray([(addr, nbytes, dev) for addr, nbytes in ranges], dtype=np.uint64)
        handle = self._agent.prep_xfer_dlist(peer, descs, mem_type, ["UCX"])
        _quiet(self._agent.release_dlist_handle, handle)

    # -- prepared reads (``_prepared``): descriptor lists made once, requests posted many times --

    def peer_memory(self, peer: str) -> tuple[str, int]:
        """The memory type and device of ``peer``'s memory this agent reads."""
        return self._peers[peer]

    def prepare_dlist(self, peer: str | None, descs: np.ndarray, mem_type: str) -> Any:
        """A prepared descriptor list: ``peer``'s memory, or (``None``) this agent's own."""
        name = "NIXL_INIT_AGENT" if peer is None else peer
        return self._peer_call(peer or self.name, f"prepare descriptors of {name!r}",
                               self._agent.prep_xfer_dlist, name, descs, mem_type, ["UCX"])  # fmt: skip

    def prepared_read(self, peer: str, local: Any, remote: Any, indices: np.ndarray) -> Any:
        """A READ request of entries ``indices`` of two prepared lists, to post with :meth:`repost`."""
        return self._peer_call(peer, f"prepare read from {peer!r}", self._agent.make_prepped_xfer,
                               "READ", local, indices, remote, indices)  # fmt: skip

    def repost(self, peer: str, handle: Any) -> PendingRead:
        """Post a prepared request (again); the caller keeps it: never :meth:`release` it per post."""
        if self._peer_call(peer, f"post read from {peer!r}", self._agent.transfer, handle) == "ERR":
            raise PeerError(peer, f"NIXL read from peer {peer!r} failed to post")
        return PendingRead(peer, handle)

    def drop_prepared(self, requests: Sequence[Any], dlists: Sequence[Any]) -> None:
        """Release prepared requests (cancelling any still running) and then their lists."""
        if self._agent is None:
            return
        for handle in requests:
            _quiet(self._agent.release_xfer_handle, handle)
        for handle in dlists:
            _quiet(self._agent.release_dlist_handle, handle)

    def deregister(self, regions: Sequence[Region]) -> None:
        """Undo a :meth:`register` call, given the regions it returned; the buffers are let go."""
        wanted = set(regions)
        kept = []
        for descs, group in self._regs:
            if set(group) <= wanted:
                _quiet(self._agent.deregister_memory, descs)
            else:
                kept.append((descs, group))
        self._regs = kept
        self._keep = [b for b in self._keep if region_of(b) not in wanted]

    def read(self, peer: str, runs: Sequence[Run], *, timeout_s: float) -> None:
        """Read ``runs`` from one peer; see :meth:`read_many`."""
        self.read_many({peer: runs}, timeout_s=timeout_s)

    def post_read(self, peer: str, runs: Sequence[Run]) -> PendingRead:
        """Post one READ of ``runs`` from ``peer`` without waiting; :meth:`done` tells when it landed.

        The caller must :meth:`release` it, finished or not (release cancels).
        """
        batches = self._batches({peer: runs})
        if len(batches) != 1:
            raise ValueError("post_read takes non-empty runs into one kind of local memory")
        ((key, descs),) = batches.items()
        return self._post(peer, key[1], *descs)

    def done(self, pending: PendingRead) -> bool:
        """True once the read has landed; raises :class:`PeerError` when NIXL failed it."""
        state = self._peer_call(
            pending.peer, f"read from {pending.peer!r}", self._agent.check_xfer_state, pending.handle
        )
        if state == "ERR":
            raise PeerError(pending.peer, f"NIXL read from peer {pending.peer!r} failed (ERR)")
        return bool(state == "DONE")

    def release(self, pending: PendingRead) -> None:
        """Let go of a read's handle; NIXL cancels it if it is still running."""
        _quiet(self._agent.release_xfer_handle, pending.handle)

    def abandon(self, pending: Sequence[PendingRead], timeout_s: float) -> None:
        """Give reads still running up to ``timeout_s`` to finish or fail, then release them all."""
        self._drain(pending, time.monotonic() + timeout_s)
        for p in pending:
            self.release(p)

    def abandon_quietly(self, pending: Sequence[PendingRead], timeout_s: float) -> None:
        """Give prepared reads still running up to ``timeout_s`` to finish or fail; releases nothing."""
        self._drain(pending, time.monotonic() + timeout_s)

    def progress(self) -> None:
        """Progress the worker once (for agents with ``progress="off"`` that serve peers)."""
        _quiet(self._agent.get_new_notifs)

    def read_many(self, runs_by_peer: Mapping[str, Sequence[Run]], *, timeout_s: float) -> None:
        """Read ``(remote_addr, local_addr, nbytes)`` runs from several peers at once.

        One transfer per peer (per local memory type); all are posted before any
        wait, so peers are read concurrently. Raises RuntimeError when NIXL
        reports a failure (a dead peer) and TimeoutError after ``timeout_s``
        (a peer that stopped progressing). Handles are always released.
        """
        batches = self._batches(runs_by_peer)  # every run checked before anything is posted
        deadline = time.monotonic() + timeout_s
        posted: list[PendingRead] = []
        try:
            for (peer, mem_type), (local, remote) in batches.items():
                posted.append(self._post(peer, mem_type, local, remote))
            self._wait(posted, deadline, timeout_s)
        except BaseException:
            self._drain(posted, deadline)
            raise
        finally:
            for pending in posted:
                self.release(pending)

    def close(self) -> None:
        """Forget peers, deregister memory and drop the agent. Safe to call twice."""
        agent, self._agent = self._agent, None
        if agent is None:
            return
        for peer in self._peers:
            _quiet(agent.remove_remote_agent, peer)
        for descs, _ in self._regs:
            _quiet(agent.deregister_memory, descs)
        self._peers.clear()
        self._regs.clear()
        self._keep.clear()

    # -- internals ---------------------------------------------------------

    def _batches(
        self, runs_by_peer: Mapping[str, Sequence[Run]]
    ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
        # Check everything before posting anything: NIXL's own error for an
        # unregistered address is a bare NIXL_ERR_NOT_FOUND.
        regions = self.regions
        grouped: dict[tuple[str, str], tuple[list[Run], list[int]]] = {}
        for peer, runs in runs_by_peer.items():
            if peer not in self._peers:
                raise KeyError(f"unknown peer {peer!r}; add_peer() its metadata first")
            for remote, local, nbytes in runs:
                if nbytes <= 0:
                    continue  # nothing to move; NIXL rejects empty descriptors
                where = next((r for r in regions if r.holds(local, nbytes)), None)
                if where is None:
                    raise ValueError(
                        f"local range {local:#x}+{nbytes} is not inside memory registered by {self.name!r}"
                    )
                kept, devs = grouped.setdefault((peer, where.mem_type), ([], []))
                kept.append((remote, local, nbytes))
                devs.append(where.device_id)
        # NIXL takes descriptor lists as Nx3 uint64 arrays: (addr, nbytes, device).
        batches = {}
        for (peer, mem_type), (kept, devs) in grouped.items():
            arr = np.asarray(kept, dtype=np.uint64)
            peer_dev = np.full(len(arr), self._peers[peer][1], dtype=np.uint64)
            batches[(peer, mem_type)] = (
                np.stack([arr[:, 1], arr[:, 2], np.asarray(devs, dtype=np.uint64)], axis=1),
                np.stack([arr[:, 0], arr[:, 2], peer_dev], axis=1),
            )
        return batches

    def _post(self, peer: str, mem_type: str, local: np.ndarray, remote: np.ndarray) -> PendingRead:
        handle = self._peer_call(
            peer, f"prepare read from {peer!r}", self._agent.initialize_xfer, "READ",
            self._agent.get_xfer_descs(local, mem_type),
            self._agent.get_xfer_descs(remote, self._peers[peer][0]), peer,
        )  # fmt: skip
        pending = PendingRead(peer, handle)
        try:
            if self._peer_call(peer, f"post read from {peer!r}", self._agent.transfer, handle) == "ERR":
                raise PeerError(peer, f"NIXL read from peer {peer!r} failed to post")
        except BaseException:
            self.release(pending)
            raise
        return pending

    def _wait(self, posted: list[PendingRead], deadline: float, timeout_s: float) -> None:
        pending = list(posted)
        while pending:
            still = [p for p in pending if not self.done(p)]
            if len(still) == len(pending):  # no progress this sweep: yield the core
                if time.monotonic() > deadline:
                    names = sorted({p.peer for p in still})
                    raise PeerTimeout(names, f"NIXL read from {names} not done after {timeout_s:g} s")
                time.sleep(0.0002)
            pending = still

    def _drain(self, posted: Sequence[PendingRead], deadline: float) -> None:
        # On failure, give transfers still running the rest of the deadline to
        # finish or fail; release then cancels whatever is left.
        pending = [p.handle for p in posted]
        while pending and time.monotonic() < deadline:
            pending = [h for h in pending if _state(self._agent, h) == "PROC"]
            if pending:
                time.sleep(0.0002)

    def _peer_call(self, peer: str, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except _NIXL_ERRORS as exc:
            raise PeerError(peer, f"NIXL {what} failed on agent {self.name!r}: {exc}") from exc

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except _NIXL_ERRORS as exc:
            raise RuntimeError(f"NIXL {what} failed on agent {self.name!r}: {exc}") from exc


def _new_agent(name: str, config: Any, delay_us: int) -> Any:
    # The Python wrapper hard-codes the progress thread's delay to 0 (a busy poll);
    # set ours on the config on its way to the bound constructor.
    bind = _bind
    if not delay_us or bind is None:
        return _nixl.nixl_agent(name, config)
    real = bind.nixlAgent

    def with_delay(agent_name: str, agent_config: Any) -> Any:
        agent_config.pthrDelay = delay_us
        return real(agent_name, agent_config)

    bind.nixlAgent = with_delay
    try:
        return _nixl.nixl_agent(name, config)
    finally:
        bind.nixlAgent = real


def _state(agent: Any, handle: Any) -> str:
    try:
        return str(agent.check_xfer_state(handle))
    except Exception:
        return "ERR"


def _quiet(fn: Any, *args: Any) -> None:
    # Teardown is best effort; NIXL logs the cause itself.
    with contextlib.suppress(Exception):
        fn(*args)
