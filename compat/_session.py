"""One run from start to report: the entry point the CLI verbs share."""

from __future__ import annotations

import json
import sys
import time
from typing import IO, Any

from refitwire.compat import _report
from refitwire.compat._run import Plan, run, start_all, stop_all


def execute(plan: Plan, stream: IO[str] | None = None) -> list[dict[str, Any]]:
    """Run ``plan``; return the report lines (and write them to ``stream`` as they come)."""
    t0 = time.perf_counter()
    started, failed_starts = start_all(plan)
    lines: list[dict[str, Any]] = [_report.header(started, plan)]
    results = list(failed_starts)
    try:
        for i, result in enumerate(run(plan, started), 1):
            results.append(result)
            if i % 2000 == 0:
                print(f"refitwire: {i} cases ...", file=sys.stderr)
    finally:
        stop_all(started)
    lines += [r.as_json() for r in results]
    lines.append(_report.footer(results, started, time.perf_counter() - t0))
    if stream is not None:
        stream.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return lines
