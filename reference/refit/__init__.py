"""Refit transport and read planning.

Planning (pure Python) is always importable. The NIXL transport (``Agent``,
``Region``) loads on first access, so importing this package never needs NIXL.
"""

from __future__ import annotations

from typing import Any

from ._plan import PlanError, ReadRun, SourceShard, check_coverage, dedup_replicas, plan_reads

__all__ = [
    "Agent",
    "PlanError",
    "ReadRun",
    "Region",
    "SourceShard",
    "check_coverage",
    "dedup_replicas",
    "plan_reads",
]


def __getattr__(name: str) -> Any:
    if name in ("Agent", "Region"):
        from . import _nixl  # raises ImportError naming the missing NIXL package

        return getattr(_nixl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
