"""One run from start to report: the entry point the CLI verbs share."""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from refitwire.compat.report import Report, Writer, footer, header
from refitwire.compat.runner import Plan, Progress, Started, run, start_all, stop_all

PROGRESS_EVERY = 2000  # results between two progress lines on stderr


def progress_line(progress: Progress, seconds: float) -> str:
    """``1200 of 4800 checks (25%), about 36 s left``: the time left as the pace so far would
    take (a rough guide: the size cases and a slow cell take longer than most)."""
    done, total = progress.done, max(progress.total, progress.done)
    line = f"{done} of {total} checks ({100 * done // max(total, 1)}%)"
    if 0 < done < total and seconds > 0:
        left = seconds / done * (total - done)
        line += f", about {left:.0f} s left" if left < 120 else f", about {left / 60:.0f} min left"
    return line


def execute(
    plan: Plan, stream: IO[str] | None = None, *, then: Callable[[list[Started]], None] | None = None
) -> list[dict[str, Any]]:
    """Run ``plan``; return the report's records, writing each line to ``stream`` as it is produced.

    ``then(started)``, if given, runs once every case has run, while the participants still
    do (``--case`` asks them its case again instead of starting every one of them twice).
    """
    return _execute(plan, stream, then).lines


def run_report(
    plan: Plan, stream: IO[str] | None = None, *, then: Callable[[list[Started]], None] | None = None
) -> Report:
    """As :func:`execute`, returning the typed report (each result serialised once, for ``stream``,
    and never read back)."""
    return _execute(plan, stream, then).report()


def _execute(plan: Plan, stream: IO[str] | None, then: Callable[[list[Started]], None] | None) -> Writer:
    t0 = time.perf_counter()
    started, failed_starts = start_all(plan)
    out = Writer(stream)
    out.put(header(started, plan))
    progress = Progress()
    t1, shown = time.perf_counter(), 0
    try:
        for result in itertools.chain(failed_starts, run(plan, started, progress)):
            out.put_result(result)
            if len(out.results) >= shown + PROGRESS_EVERY:
                shown = len(out.results)
                print(f"refitwire: {progress_line(progress, time.perf_counter() - t1)}", file=sys.stderr)
        if then is not None:
            then(started)
    finally:
        stop_all(started)
    out.put(footer(out.results, started, time.perf_counter() - t0))
    return out
