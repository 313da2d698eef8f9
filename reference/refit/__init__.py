"""Refit over NIXL: stores, publishers, receivers, verdicts, and the read planner.

Planning, the store, verdicts and errors are pure Python and always importable.
What needs ``redis``, torch or NIXL (``RedisStore``, ``Agent``, ``Publisher``,
``Receiver``, ``MODELS``, ``RunConfig``, ``run``) loads on first access, as does
``Region``, so importing this package never needs the ``refit`` extra. Modules
starting with ``_`` are private.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import DiscoveryTimeout, RefitError, TableRejected, TransferFailed
from ._open import open_store
from ._plan import PlanError, ReadRun, SourceShard, check_coverage, plan_reads
from ._store import (
    BatchReadStore,
    DirectoryStore,
    RendezvousStore,
    StampedStore,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
)
from ._tables import KnownTables
from ._verdict import Policy, ShardVerdict, Verdict, judge, may_install

__all__ = [
    # planning
    "PlanError",
    "ReadRun",
    "SourceShard",
    "check_coverage",
    "plan_reads",
    # rendezvous
    "BatchReadStore",
    "DirectoryStore",
    "RendezvousStore",
    "StampedStore",
    "open_store",
    "KnownTables",
    "StoreError",
    "StoreUnavailable",
    "StoreCorrupt",
    # verdicts and refusals
    "Policy",
    "ShardVerdict",
    "Verdict",
    "judge",
    "may_install",
    "RefitError",
    "TableRejected",
    "DiscoveryTimeout",
    "TransferFailed",
    # need the refit extra (loaded lazily)
    "RedisStore",
    "Agent",
    "Region",
    "MODELS",
    "Publisher",
    "Receiver",
    "StepResult",
    "RunConfig",
    "run",
    # for the CLI and the bench (loaded on first use)
    "Model",
    "NixlMissing",
    "CLI_INJECTIONS",
    "PROGRESS_MODES",
    "UpstreamWriter",
    "check_spec",
    "parse_bytes",
    "resolve_model",
    "render_table",
]

if TYPE_CHECKING:  # what static checkers see of the names loaded on first use
    from ._errors import NixlMissing
    from ._layout import parse_bytes, resolve_model
    from ._model import MODELS, Model
    from ._nixl import Agent
    from ._open import check_spec
    from ._options import CLI_INJECTIONS, PROGRESS_MODES, UpstreamWriter
    from ._report import render_table
    from ._run import RunConfig, run

_LAZY = {
    "RedisStore": "_redis_store",
    "Agent": "_nixl",
    "Region": "_region",
    "MODELS": "_model",
    "Publisher": "_publisher",
    "Receiver": "_receiver",
    "StepResult": "_receiver",
    "RunConfig": "_run",
    "run": "_run",
    "Model": "_model",
    "NixlMissing": "_errors",
    "CLI_INJECTIONS": "_options",
    "PROGRESS_MODES": "_options",
    "UpstreamWriter": "_options",
    "check_spec": "_open",
    "parse_bytes": "_layout",
    "resolve_model": "_layout",
    "render_table": "_report",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Raises ImportError naming the missing package (torch or NIXL).
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
