"""One run from start to report: the entry point the CLI verbs share."""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from refitwire.compat import _report
from refitwire.compat._run import Plan, Result, Started, run, start_all, stop_all


def execute(
    plan: Plan, stream: IO[str] | None = None, *, then: Callable[[list[Started]], None] | None = None
) -> list[dict[str, Any]]:
    """Run ``plan``; return the report lines, writing each to ``stream`` as it is produced.

    ``then(started)``, if given, runs once every case has run, while the participants still
    do (``--case`` asks them its case again instead of starting every one of them twice).
    """
    t0 = time.perf_counter()
    started, failed_starts = start_all(plan)
    out = _report.Writer(stream)
    out.put(_report.header(started, plan))
    results: list[Result] = []
    try:
        for result in itertools.chain(failed_starts, run(plan, started)):
            results.append(result)
            out.put(result.as_json())
            if len(results) % 2000 == 0:
                print(f"refitwire: {len(results)} cases ...", file=sys.stderr)
        if then is not None:
            then(started)
    finally:
        stop_all(started)
    out.put(_report.footer(results, started, time.perf_counter() - t0))
    return out.lines
