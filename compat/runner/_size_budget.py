"""The size cases of one reader: its growth judged beside the reference reader, what each
case is allowed, and each reply judged (``judge_size``).

A wall-clock multiple of whatever the machine does at the moment grows with its load, so it
neither stays cheap nor catches a slow reader in time; nor does a reader's own time on a small
table, read while the load was other than at its read at the limit. So (SPEC.md section 5):

- The reader first reads the realistic table at a sixteenth of the limit, within ``--timeout``
  (a read out of time is asked once more with ``ROOM`` times that room): a reader that skips it
  has ``size:growth`` skipped, one that cannot read it fails it.
- **Growth** (case ``size:growth``): the reference reader, a testee of its own, reads that
  table and the one at the limit beside the reader, in rounds, and the reader fails when it
  grew more than ``GROWTH_TOLERANCE`` times as much as the reference (``refitwire.compat.runner._growth``).
  The reader's read at the limit is also ``size:at-limit``'s.
- **Allowance**: the read at the limit is stopped at ``ROOM`` times what a reader growing as the
  reference did needs; the other cases at ``ROOM`` x the reader's fastest read of the small
  table x how much more the blob holds (bytes or tensors, whichever grows more); never less
  than ``--timeout``. A reader whose small table was not read gets ``--timeout``.
- **Not sent after a slow growth**: a reader that grew faster than linearly is not sent
  ``size:many-tensors`` (skipped, saying why): it could only wait out its allowance to say
  what growth said; ``--case`` still sends it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from refitwire.compat._errors import YardstickFailed
from refitwire.compat._results import (
    REQUIRED,
    Broken,
    Decoded,
    Outcome,
    Rejected,
    Reply,
    Result,
    Skipped,
    broken_cause,
    crashed,
    judged,
)
from refitwire.compat.cases import _cases, _sizes
from refitwire.compat.runner import _checks, _growth
from refitwire.compat.runner._growth import ROOM
from refitwire.wire import Registry, blob_limit, no_gc

#: The small table is this fraction of the limit.
SMALL_FRACTION = 16
GROWTH_CASE = "size:growth"
SUPERLINEAR = "grows faster than linearly"  # the symptom after which size:many-tensors is not sent
UNREAD = "did not read the growth tables"
AT_LIMIT = "size:at-limit"


@dataclass(frozen=True)
class Allowance:
    """The seconds a reader is allowed for one size case, and how they were found."""

    seconds: float
    timeout_s: float
    growth_s: float | None = None  # ROOM x what a linear reader could need; None: not timed
    scale: float = 1.0  # how much more the blob holds than the small table
    #: read beside the reference: this reader's time against the reference's at a sixteenth, and
    #: the reference's time at the limit (what a reader growing as the reference did needs: their product)
    beside: tuple[float, float] | None = None

    def describe(self) -> str:
        parts = [f"--timeout {self.timeout_s:g} s"]
        if self.growth_s is not None and self.beside is not None:
            ratio, reference_s = self.beside
            parts.append(
                f"{ROOM:g} x what a reader growing as the reference reader did needs: {ratio:.2f} x its "
                f"{reference_s:.2f} s at the limit, read beside it: {self.growth_s:.1f} s"
            )
        elif self.growth_s is not None:
            parts.append(
                f"{ROOM:g} x a linear growth from its time at a sixteenth of the limit "
                f"({self.scale:.3g} x the table): {self.growth_s:.1f} s"
            )
        return f"allowed {self.seconds:.1f} s ({'; '.join(parts)})"


def small_table(limit: int) -> bytes:
    """The realistic table growth is measured from: a sixteenth of blob size limit ``limit``."""
    return _sizes.realistic_table(limit // SMALL_FRACTION)


def small_tensors(limit: int) -> int:
    return _tensors_in(limit // SMALL_FRACTION)


@functools.cache
def _tensors_in(size: int) -> int:
    return _sizes.count_tensors(_sizes.realistic_table(size))  # kept per size, counted once


def scale(case: _sizes.SizeCase) -> float:
    """How many times more ``case`` holds than the small table: its bytes or its tensors,
    whichever grows more. A reader linear in both needs at most that many times as long."""
    return max(len(case.blob) / len(small_table(case.limit)), case.tensors / small_tensors(case.limit))


def allowance(case: _sizes.SizeCase, small_s: float | None, timeout_s: float) -> Allowance:
    """What a reader that read the small table in ``small_s`` is allowed for ``case`` (see the
    module's text); ``--timeout`` alone when it did not read it."""
    if small_s is None:
        return Allowance(timeout_s, timeout_s)
    times = scale(case)
    growth_s = ROOM * times * small_s
    return Allowance(max(timeout_s, growth_s), timeout_s, growth_s, times)


def read_sizes(r: Any, timeout_s: float, registry: Registry, only: str | None = None) -> Iterator[Result]:
    """Reader ``r``'s ``size:growth`` and size cases (all, or what ``--case only`` needs), in order,
    at the blob size limit ``registry``'s SPEC.md gives ``r``'s version."""
    limit = blob_limit(registry, r.version)
    beside = only in (None, GROWTH_CASE, AT_LIMIT)  # the growth rounds make the read at the limit
    small_s, why = _time_small(r, limit, timeout_s, reads=1 if beside else 2)
    if why is not None and why.startswith(SKIPPED):  # a reader that skips reads: nothing to time
        yield Result(GROWTH_CASE, REQUIRED, Outcome.SKIPPED, reader=r.label, message=why)
    elif why is not None:  # the small table unread: growth fails, and the rest get --timeout
        yield Result(GROWTH_CASE, REQUIRED, Outcome.FAILED, reader=r.label, fault="reader", symptom=UNREAD,
                     message=f"did not decode the realistic table of {len(small_table(limit))} bytes: {why}")  # fmt: skip
    if why is not None and only == GROWTH_CASE:
        return  # the read at the limit would say nothing more about it
    slow = False
    for case in _sizes.size_cases(limit):
        if only not in (None, case.id) and not (only == GROWTH_CASE and case.id == AT_LIMIT):
            continue
        if slow and case.valid and only is None:
            yield unsent(case, r.label)
            continue
        if case.id == AT_LIMIT and small_s is not None:
            try:
                found, small_s = _beside(r, case, small_s, timeout_s, registry, only)
            except Exception as exc:  # the kit's crash: errored cases, never a verdict
                ids = [GROWTH_CASE] + ([] if only == GROWTH_CASE else [case.id])
                found = [crashed(exc, i, REQUIRED, reader=r.label) for i in ids]
        else:
            found = judged(functools.partial(_read, r, case, small_s, timeout_s, registry), case.id, case.tier,
                           reader=r.label)  # fmt: skip
        slow = slow or any(f.case == GROWTH_CASE and f.symptom == SUPERLINEAR for f in found)
        yield from found


def _read(
    r: Any, case: _sizes.SizeCase, small_s: float | None, timeout_s: float, registry: Registry
) -> list[Result]:
    # One collector pause for a read, its judgement and the reply's end: at the limit the reply is
    # ~10^6 acyclic values, and a collector back while they are alive walks them all once.
    with no_gc():
        allowed = allowance(case, small_s, timeout_s)
        return list(judge_size(r, case, _checks.ask_read(r, case.blob, allowed.seconds), allowed, registry))


def _beside(
    r: Any, case: _sizes.SizeCase, warm_s: float, timeout_s: float, registry: Registry, only: str | None
) -> tuple[list[Result], float]:
    """``size:growth`` read beside the reference, and ``size:at-limit`` from the reader's read
    at the limit among them; with the reader's fastest read of the small table."""
    small = small_table(case.limit)
    check_messages = getattr(r.testee, "check_messages", True)  # the same kit's work on both sides
    with no_gc():
        try:
            with _growth.yardstick(r.version, registry, timeout_s, check_messages) as yard:
                grown = _growth.read_beside(r, yard, small, case.blob, timeout_s, warm_s)
        except YardstickFailed as exc:  # the kit's: growth errored, the limit read as before
            at_limit = [] if only == GROWTH_CASE else _read(r, case, warm_s, timeout_s, registry)
            return [crashed(exc, GROWTH_CASE, REQUIRED, reader=r.label), *at_limit], warm_s
        results = [_verdict(r.label, case, grown)]
        if only == GROWTH_CASE:
            return results, grown.small_s
        if grown.reply is None:  # it stopped reading before the limit
            return [*results, *_read(r, case, grown.small_s, timeout_s, registry)], grown.small_s
        allowed = Allowance(grown.allowed_s, timeout_s, grown.room_s, beside=grown.basis)
        return [*results, *judge_size(r, case, grown.reply, allowed, registry)], grown.small_s


def _verdict(label: str, case: _sizes.SizeCase, grown: _growth.Growth) -> Result:
    """``size:growth`` from the rounds read beside the reference, with every number it rests on."""
    base = {"case": GROWTH_CASE, "tier": REQUIRED, "reader": label}
    if grown.unread is not None:
        return Result(**base, outcome=Outcome.FAILED, fault="reader", symptom=UNREAD, message=grown.unread)
    small = small_table(case.limit)
    account = grown.account((small_tensors(case.limit), case.tensors), (len(small), len(case.blob)))
    if not _growth.grows_faster(grown.rounds):
        return Result(**base, outcome=Outcome.PASSED, message=account)
    return Result(**base, outcome=Outcome.FAILED, fault="reader", symptom=SUPERLINEAR,
                  message=f"{SUPERLINEAR}: {account}")  # fmt: skip


def _time_small(r: Any, limit: int, timeout_s: float, reads: int = 2) -> tuple[float | None, str | None]:
    """The fastest of ``reads`` reads of the small table of ``limit``, or why there is none. A
    read out of ``--timeout`` is asked once more with ``ROOM`` times the room: on a machine busy
    with other work (seen in CI: 8 processes on 2 cores) a released reader took over 10 s for
    what it reads in 1 s, and the first read is no case of its own."""
    best = float("inf")
    for _ in range(reads):
        for allowed in (timeout_s, ROOM * timeout_s):
            reply, took = _growth.timed(r, small_table(limit), allowed)
            if not _growth.out_of_time(reply):
                break
        best = min(best, took.wall)
        if not isinstance(reply, Decoded):
            return None, _why(reply)
    return best, None


SKIPPED = "the reader answered skipped"


def _why(reply: Reply) -> str:
    if isinstance(reply, Skipped):
        return f"{SKIPPED}: {reply.reason}"
    return getattr(reply, "message", None) or getattr(reply, "rule", None) or type(reply).__name__


def unsent(case: _sizes.SizeCase, reader: str) -> Result:
    """``case`` skipped for a reader ``size:growth`` found too slow: waiting out its allowance
    would say nothing new and cost a conformance run minutes (``--case`` still sends it)."""
    return Result(case.id, case.tier, Outcome.SKIPPED, reader=reader,
                  message=f"not sent: {GROWTH_CASE} found this reader too slow already, and {case.description} "
                          f"could only wait out its allowance (--case {case.id} sends it)")  # fmt: skip


def judge_size(
    r: Any, case: _sizes.SizeCase, reply: Reply, allowance: Allowance, registry: Registry
) -> Iterator[Result]:
    """A size or scale case: ``reply``, read within ``allowance`` (SPEC.md section 5: judged by growth)."""
    base = {"case": case.id, "tier": case.tier, "reader": r.label}
    if isinstance(reply, Broken) and not reply.malformed:
        cause = broken_cause(reply.message)
        symptom = "too slow on a large blob" if cause == "no reply in time" else f"{cause} on a large blob"
        yield Result(**base, outcome=Outcome.ERRORED, fault="reader", symptom=symptom,
                     message=f"{case.description}: {reply.message} ({allowance.describe()})")  # fmt: skip
        return
    if case.valid:
        if isinstance(reply, Rejected):
            yield _checks.failed(
                base,
                "reader",
                "rejected a valid blob of the size or scale cases",
                f"rejected {case.description}: {reply.message}",
            )
        elif isinstance(reply, Decoded):
            expected = _sizes.expected_read(case, _cases.model_of(r.version, registry))
            if _cases.canonical_json(reply.payload) == expected:
                yield Result(**base, outcome=Outcome.PASSED)
            else:  # under _read's collector pause: ~10^6 acyclic values each side
                yield _checks.decoded_result(base, orjson.loads(expected), reply.payload, case.description)
        else:
            yield _checks.unusable(reply, base, "reader") or Result(**base, outcome=Outcome.ERRORED)
        return
    if isinstance(reply, Rejected):
        yield Result(**base, outcome=Outcome.PASSED)
        yield _checks.reason(case.id, r.label, reply, "BLOB_SIZE", "")
    elif isinstance(reply, Decoded):
        yield _checks.failed(
            base, "reader", "accepted: breaks BLOB_SIZE", f"accepted {case.description} (BLOB_SIZE)"
        )
    else:
        yield _checks.unusable(reply, base, "reader") or Result(**base, outcome=Outcome.ERRORED)
