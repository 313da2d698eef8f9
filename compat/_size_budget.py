"""What a reader is allowed for the size cases: judged by its growth, bounded by the reference.

A wall-clock multiple of whatever the machine does at the moment grows with its load, so it
neither stays cheap nor catches a slow reader in time. Instead (SPEC.md section 5):

- **Growth** (case ``size:growth``): the reader reads the realistic table at a sixteenth and
  at a quarter of the limit. A reader linear in the table needs at most four times as long
  for four times the bytes (fixed costs only make it less); one that needs more than
  ``GROWTH_TOLERANCE`` times that grows faster than linearly (quadratic in tensors, say) and
  fails. Both reads run on the same machine within a second or two, so load cancels out.
- **At the limit** a reader is allowed ``GROWTH_TOLERANCE`` x 4 x its own time at a quarter of
  the limit (what a linear reader needs, with room) and the **reference bound**: ``factor`` x
  the reference testee's time for the same blob on this machine, scaled by how much slower the
  machine is now than when that was measured: the larger of the two when its growth was
  linear, the smaller when it was not; never less than ``--timeout``.
- **Not sent after a slow growth**: a reader that growth judged too slow (faster than linear, or out of time
  at a quarter of the limit) is not sent the larger valid tables (``size:at-limit``,
  ``size:many-tensors``: skipped, saying why). They could only wait out their allowance to say
  what growth said, minutes of a run at the default factor; ``--case`` still sends one.
- The reference testee's times are measured **once per kit version and machine** and kept on
  disk beside the tables (``calibration.json``); each run only re-times a small in-process
  reference read (tenths of a second) to scale them by the load now.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refitwire.compat import _sizes
from refitwire.compat._cache import cache_home, content_key, write_whole
from refitwire.compat._results import REQUIRED, Decoded, Outcome, Result
from refitwire.engine import blob_limit

#: A reader may need up to this many times a linear reader's growth.
GROWTH_TOLERANCE = 2.0
#: A reader faster than this at a quarter of the limit is not timed for growth (noise, not growth).
GROWTH_FLOOR_S = 0.1
#: A reader is allowed this many times what the reference testee needs for a size case.
ALLOWANCE_FACTOR = 10.0
GROWTH_CASE = "size:growth"


@dataclass(frozen=True)
class Allowance:
    """The seconds a reader is allowed for one size case, and how they were found."""

    seconds: float
    timeout_s: float
    reference_s: float | None = None  # the reference bound; None: not measured
    growth_s: float | None = None  # what this reader's own growth allows; None: not judged
    factor: float = ALLOWANCE_FACTOR

    def describe(self) -> str:
        parts = [f"--timeout {self.timeout_s:g} s"]
        if self.reference_s is not None:
            parts.append(
                f"{self.factor:g} x the reference testee's time on this machine: {self.reference_s:.1f} s"
            )
        if self.growth_s is not None:
            parts.append(
                f"{GROWTH_TOLERANCE:g} x a linear growth from its time at a quarter of the limit: {self.growth_s:.1f} s"
            )
        return f"allowed {self.seconds:.1f} s ({'; '.join(parts)})"


@dataclass(frozen=True)
class Growth:
    """A reader's times on the realistic table at ``GROWTH_FRACTIONS`` of the limit."""

    seconds: tuple[float, ...]
    linear: bool  # False: it grew faster than the tolerance allows (or was not read)
    # True: judged too slow (faster than linear growth, or out of time at a quarter of the limit),
    # so the larger valid tables are not sent: they could only wait out their allowance.
    slow: bool = False


def machine() -> dict[str, Any]:
    """What a calibration is valid for: this machine and interpreter."""
    return {"node": platform.node(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version()}  # fmt: skip


def _reference_source() -> str:
    """A digest of the reference library's and testee's code: a changed reader is a new calibration."""
    import refitwire
    from refitwire.compat.testees import reference

    return content_key(code=[*sorted(Path(refitwire.__file__).parent.glob("*.py")), reference])


def _calibration_key() -> dict[str, Any]:
    return {"kit": _sizes.kit_version(), "reference": _reference_source(), "machine": machine()}


def _probe() -> float:
    """The best of three in-process reference reads of the smallest growth table (the load now)."""
    from refitwire import to_decoded, unwrap_rendezvous_blob

    blob = _sizes.realistic_table(blob_limit() // _sizes.GROWTH_FRACTIONS[0])
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        to_decoded(unwrap_rendezvous_blob(blob))
        best = min(best, time.perf_counter() - t0)
    return best


def _measure_reference() -> dict[str, float]:
    """The reference testee's seconds for each valid size case, as a reader sees them (one process)."""
    from refitwire.compat import _protocol
    from refitwire.compat._testee import Testee

    testee = Testee([sys.executable, "-m", "refitwire.compat.testees.reference"], timeout_s=600.0)
    found: dict[str, float] = {}
    try:
        testee.start()
        for case in _sizes.size_cases():
            if case.valid:
                request = _protocol.read(0, base64.b64encode(case.blob).decode())
                t0 = time.perf_counter()
                testee.request(request)
                found[case.id] = time.perf_counter() - t0
    except (OSError, _protocol.ProtocolError):
        pass  # an unmeasured case has no reference bound
    finally:
        testee.stop()
    return found


@functools.cache
def reference_times() -> tuple[dict[str, float], float]:
    """The reference testee's seconds per size case on this machine scaled to its load now, and
    that scale. Measured once per kit version and machine (kept on disk), then only scaled."""
    path = cache_home() / "size-cases" / "calibration.json"
    key = _calibration_key()
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        kept = None
    probe_now = _probe()
    if not isinstance(kept, dict) or kept.get("key") != key:
        kept = {"key": key, "reference_s": _measure_reference(), "probe_s": min(probe_now, _probe())}
        write_whole(path, json.dumps(kept).encode())
    load = max(1.0, probe_now / kept["probe_s"])
    return {case: seconds * load for case, seconds in kept["reference_s"].items()}, load


def read_growth(
    r: Any, timeout_s: float, factor: float = ALLOWANCE_FACTOR
) -> tuple[Growth, Iterator[Result]]:
    """Time reader ``r`` on the realistic table at each growth fraction; the ``size:growth`` result.

    Each read is allowed the reference bound at the limit in proportion to its bytes (never
    less than ``timeout_s``): a busy machine slows the reference probe as much as the reader.
    A reader that runs out of time on the larger table fails: it needed more than the
    reference bound for that table, whatever its growth."""
    from refitwire.compat._checks import ask_read, failed

    base = {"case": GROWTH_CASE, "tier": REQUIRED, "reader": r.label}
    limit = blob_limit()
    sizes = [limit // n for n in _sizes.GROWTH_FRACTIONS]
    reference = reference_times()[0].get("size:at-limit")
    allowed = [max(timeout_s, factor * reference * size / limit if reference else 0.0) for size in sizes]
    best = [float("inf")] * len(sizes)
    ran_out = False
    for _attempt in range(2):  # a second try when the first looked superlinear: a load spike is not growth
        for i, size in enumerate(sizes):
            blob = _sizes.realistic_table(size)
            # The small table is read twice, keeping the faster: a load spike there would make
            # any growth look linear (seen on a loaded machine), and the retry below only
            # follows a run that looked superlinear.
            for _read in range(2 if i == 0 else 1):
                t0 = time.perf_counter()
                reply = ask_read(r, blob, allowed[i])
                best[i] = min(best[i], time.perf_counter() - t0)
                if not isinstance(reply, Decoded):
                    break
            if isinstance(reply, Decoded):
                continue
            why = getattr(reply, "message", None) or getattr(reply, "rule", None) or type(reply).__name__
            if i and "no reply within" in why:  # too slow for the larger table, not broken
                best[i], ran_out = allowed[i], True
                break
            message = f"did not decode the realistic table of {size} bytes: {why}"
            return Growth(tuple(best), False), iter(
                [failed(base, "reader", "did not read the growth tables", message)]
            )
        if ran_out or _linear(best):
            break
    ratio = sizes[-1] / sizes[0]
    tensors = [_sizes.count_tensors(_sizes.realistic_table(s)) for s in sizes]
    took = f"more than {best[-1]:.2f} s (its allowance)" if ran_out else f"{best[-1]:.2f} s"
    account = (
        f"read {tensors[0]} tensors in {best[0]:.2f} s and {tensors[-1]} in {took}: "
        f"{'over ' if ran_out else ''}{best[-1] / best[0]:.1f} x the time for {ratio:g} x the table "
        f"(a linear reader: at most {ratio:g}; allowed {GROWTH_TOLERANCE * ratio:g})"
    )
    if ran_out:  # it needed more than the reference bound for that table: too slow, however it grows
        result = Result(**base, outcome=Outcome.FAILED, fault="reader", symptom="too slow at a quarter of the limit",
                        message=f"too slow at a quarter of the limit ({factor:g} x the reference testee's time "
                                f"there on this machine): {account}")  # fmt: skip
        return Growth(tuple(best), False, slow=True), iter([result])
    if _linear(best):
        return Growth(tuple(best), True), iter([Result(**base, outcome=Outcome.PASSED, message=account)])
    result = Result(**base, outcome=Outcome.FAILED, fault="reader", symptom="grows faster than linearly",
                    message=f"grows faster than linearly: {account}")  # fmt: skip
    return Growth(tuple(best), False, slow=True), iter([result])


def unsent(case: _sizes.SizeCase, reader: str) -> Result:
    """``case`` skipped for a reader ``size:growth`` found too slow: waiting out its allowance
    would say nothing new and cost a conformance run minutes (``--case`` still sends it)."""
    return Result(case.id, case.tier, Outcome.SKIPPED, reader=reader,
                  message=f"not sent: {GROWTH_CASE} found this reader too slow already, and {case.description} "
                          f"could only wait out its allowance (--case {case.id} sends it)")  # fmt: skip


def _linear(seconds: list[float]) -> bool:
    ratio = _sizes.GROWTH_FRACTIONS[0] / _sizes.GROWTH_FRACTIONS[-1]
    return seconds[-1] < GROWTH_FLOOR_S or seconds[-1] <= GROWTH_TOLERANCE * ratio * seconds[0]


def allowance(case: _sizes.SizeCase, growth: Growth | None, timeout_s: float, factor: float) -> Allowance:
    """What reader ``growth`` is allowed for ``case`` (see the module's text)."""
    measured, _ = reference_times()
    # The blob over the limit is as long as the one at it: receiving it is allowed as much.
    at_limit = case.id != "size:many-tensors"
    reference = measured.get("size:at-limit" if at_limit else case.id)
    bound = None if reference is None else factor * reference
    own = None
    if growth is not None and at_limit and math.isfinite(growth.seconds[-1]):
        own = GROWTH_TOLERANCE * _sizes.GROWTH_FRACTIONS[-1] * growth.seconds[-1]
    candidates = [b for b in (bound, own) if b is not None]
    # A reader that grew linearly gets the larger of the two (near the limit memory effects may
    # slow a linear reader down, and a busy machine must never fail it); one that did not gets
    # the smaller, so catching it costs seconds.
    pick = max if growth is not None and growth.linear else min
    seconds = max(timeout_s, pick(candidates)) if candidates else timeout_s
    return Allowance(seconds, timeout_s, bound, own, factor)
