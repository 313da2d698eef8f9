"""Best-of-N timing with the spread kept, and interleaving so noise hits every contender alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["interleaved", "summary", "timed"]


def summary(samples: list[float]) -> dict[str, Any]:
    """``best_s`` (what ratios use), ``median_s``, ``worst_s``, ``spread`` (median/best - 1)."""
    best = min(samples)
    median = statistics.median(samples)
    return {
        "best_s": best,
        "median_s": median,
        "worst_s": max(samples),
        "spread": (median / best - 1.0) if best > 0 else 0.0,
        "reps": len(samples),
    }


def timed(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    fn()  # warm-up: caches, compiled validators, page faults
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return summary(samples)


def interleaved(fns: Mapping[str, Callable[[], Any]], reps: int) -> dict[str, dict[str, Any]]:
    """Each function once per round, ``reps`` rounds; one warm-up round first."""
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: summary(s) for name, s in samples.items()}
