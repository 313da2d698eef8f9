"""Publisher processes and in-process receivers of the ``tiny`` model, shared by the refit tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from refitwire.compat.upstream import UPSTREAM_OBJECTS
from refitwire.refit import DirectoryStore, UpstreamWriter
from refitwire.refit._model import MODELS
from refitwire.refit._proc import Child
from refitwire.refit._receiver import Receiver

MODEL = MODELS["tiny"]
PUBLISHERS = 2


class Publishers:
    """Publisher processes for some of the ranks (the rest may be copied in from elsewhere)."""

    def __init__(
        self, store: Path, *, ranks: tuple[int, ...] = (0, 1), upstream_python: str | None = None
    ) -> None:
        self.store = store
        self.ranks = ranks
        writer = UpstreamWriter(upstream_python, str(UPSTREAM_OBJECTS)) if upstream_python else None
        extra = writer.argv() if writer is not None else []
        self.children = [
            Child(f"publisher {r}", "refitwire.refit._publisher",
                  ["--rank", str(r), "--ranks", str(PUBLISHERS), "--store", str(store), "--model", "tiny", *extra])
            for r in ranks
        ]  # fmt: skip
        self.agents = [c.recv(120)["hello"] for c in self.children]

    def publish(self, step: int, inject: str | None = None, rank: int = 1) -> None:
        for r, child in zip(self.ranks, self.children, strict=True):
            if child.alive():
                got = child.call(
                    {"cmd": "publish", "step": step, "inject": inject if r == rank else None}, 60
                )
                assert got["ok"], got

    def stop(self) -> None:
        for child in self.children:
            child.ask_to_stop()
        for child in self.children:
            child.stop()


def make_receiver(store: Path, rank: int, ranks: int = 2, **kw: Any) -> Receiver:
    kw.setdefault("discover_timeout_s", 10.0)
    kw.setdefault("read_timeout_s", 10.0)
    return Receiver(rank, ranks, MODEL, DirectoryStore(store), publishers=PUBLISHERS, **kw)
