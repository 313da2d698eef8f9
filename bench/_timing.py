"""Best-of-N timing with the spread kept, and interleaving so noise hits every contender alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["interleaved", "summary", "timed"]


def summary(samples: list[float], cpu: list[float] | None = None) -> dict[str, Any]:
    """``best_s`` (what ratios use), ``median_s``, ``worst_s``, ``spread`` (median/best - 1);
    with ``cpu``, also ``cpu_best_s``: the least CPU time the calling thread spent, which
    other processes on a shared machine inflate far less than the wall clock."""
    best = min(samples)
    median = statistics.median(samples)
    out = {
        "best_s": best,
        "median_s": median,
        "worst_s": max(samples),
        "spread": (median / best - 1.0) if best > 0 else 0.0,
        "reps": len(samples),
    }
    if cpu:
        out["cpu_best_s"] = min(cpu)
    return out


def _once(fn: Callable[[], Any]) -> tuple[float, float]:
    start, start_cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - start, time.thread_time() - start_cpu


def timed(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    fn()  # warm-up: caches, compiled validators, page faults
    wall, cpu = zip(*(_once(fn) for _ in range(reps)))
    return summary(list(wall), list(cpu))


def interleaved(fns: Mapping[str, Callable[[], Any]], reps: int) -> dict[str, dict[str, Any]]:
    """Each function once per round, ``reps`` rounds; one warm-up round first."""
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            wall, spent = _once(fn)
            samples[name].append(wall)
            cpu[name].append(spent)
    return {name: summary(s, cpu[name]) for name, s in samples.items()}
