"""``size:growth``: a reader's growth judged beside the reference reader's, on the same tables,
read in turn, by the processor time each used, so that the verdict is the same at any load
(SPEC.md section 5).

A reader's own wall-clock times say little on a busy machine: at load average 10, a reader
quadratic in the number of tensors (19.5 s where a linear one needs 0.47 s, at 60,000 tensors)
read the small table while the load was high and the table at the limit while it was lower,
and its growth looked linear. Two things make the verdict stand at any load:

- **Processor time, not wall-clock time.** Each read is measured by the CPU time the reader's
  processes (the testee and whatever it started) used for it, read from Linux's per-thread
  ``schedstat`` (nanoseconds). Waiting for a core is not in it: a machine ten times busier
  leaves it nearly where it was, where a short read's wall-clock time depends on whether the
  scheduler let it finish in one slice. (Where ``/proc`` cannot say, wall-clock time is used,
  and said so.)
- **The reference reader beside it.** What the load still changes (a core shared with another
  process's caches, its clock) it changes for both, so the reference reader, started as a
  testee of its own speaking the same protocol, reads the same two tables, each read next to the
  reader's, and what is judged is how much more the reader grew than the reference did::

      excess = (reader / reference, at the limit) / (reader / reference, at a sixteenth)

  A reader that grows as the reference does (linearly) is near 1; one quadratic in tensors far
  over (the weakest of the kit's own bank, about 4; the one above, about 40).

**Rounds.** A round reads the small table ``PAIRS`` times on each side, in turns (A B B A A B B
A, the next round B A A B ...: a load that rises or falls steadily weighs on both alike), its
ratio at a sixteenth being the middle of the pairs' ratios; then the table at the limit once
each, the reference first. The estimate is the middle of the rounds' excesses (two rounds:
their geometric mean), settled when under ``GROWTH_TOLERANCE / DOUBT`` (passed), over
``GROWTH_TOLERANCE * DOUBT`` in at least two rounds (failed: a failure is always seen twice), or
after ``MAX_ROUNDS``, when over ``GROWTH_TOLERANCE`` fails.

**Room.** The reader's read at the limit is stopped, in wall-clock time, at ``ROOM`` times what
a reader growing as the reference did needs (its ratio at a sixteenth times the reference's read
at the limit just before), never before ``--timeout``: a quadratic reader costs a few times a
linear one's read, not its quadratic time. A reader stopped there grew at least ``ROOM`` times as
much as the reference, in wall-clock time (its allowance stands for its time). The reference's
reads are allowed ``ROOM * ROOM`` times what its first read of the small table gives; it failing
to read is the kit's crash, never a verdict on the reader.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from refitwire.compat._errors import ProtocolError, YardstickFailed
from refitwire.compat._results import Broken, Decoded, Reply, broken_cause
from refitwire.compat._testee import Testee, excerpt_text
from refitwire.compat.runner import _checks
from refitwire.compat.runner._participants import reference
from refitwire.wire import ENV_VAR, Registry

#: A reader may grow this many times as much as the reference from a sixteenth of the limit to it.
GROWTH_TOLERANCE = 2.0
#: An estimate within this factor of the tolerance, either way, is read once more.
DOUBT = 1.5
#: The most rounds one reader is read in.
MAX_ROUNDS = 3
#: A read is stopped at this many times what a reader growing as the reference does needs.
ROOM = 4.0
#: Reads of the small table on each side in a round, in turns.
PAIRS = 4
CPU, WALL = "CPU", "wall-clock"


@dataclass(frozen=True)
class Took:
    """One read's cost: wall-clock seconds, and the CPU seconds of the reader's processes (None
    where they cannot be read: another system, or the process was restarted)."""

    wall: float
    cpu: float | None = None

    def by(self, measure: str) -> float:
        return self.cpu if measure == CPU and self.cpu is not None else self.wall


@dataclass(frozen=True)
class Round:
    """One round: each side's reads of the small table (pairs, in turns) and at the limit. A
    reader stopped at the limit has its allowance there, in wall-clock time: it took longer."""

    small: tuple[tuple[Took, Took], ...]  # (this reader, the reference) per pair
    large: tuple[Took, Took]
    ran_out: bool = False

    @property
    def measure(self) -> str:
        """CPU time when every read of the round has it (the reader's stopped read aside), else wall-clock time."""
        return measure_of(
            [*(t for pair in self.small for t in pair), self.large[1], *self.large[: not self.ran_out]]
        )

    @property
    def small_ratio(self) -> float:
        return small_ratio(self.small, self.measure)

    @property
    def large_ratio(self) -> float:
        measure = WALL if self.ran_out else self.measure
        return self.large[0].by(measure) / self.large[1].by(measure)

    @property
    def excess(self) -> float:
        """How many times as much as the reference the reader grew (a lower bound when it ran out)."""
        return self.large_ratio / self.small_ratio

    def describe(self) -> str:
        m, over = self.measure, "over " if self.ran_out else ""
        reader, ref = (middle([p[i].by(m) for p in self.small]) for i in (0, 1))
        mine_s, theirs_s = (middle([p[i].wall for p in self.small]) for i in (0, 1))
        small = f"{m} time {reader:.3f} s against {ref:.3f} s{_walls(m, mine_s, theirs_s, digits=3)}"
        mine, theirs = self.large
        if self.ran_out:
            large = f"more than {mine.wall:.2f} s wall-clock, its allowance, against {theirs.wall:.2f} s"
        else:
            large = (
                f"{m} time {mine.by(m):.2f} s against {theirs.by(m):.2f} s{_walls(m, mine.wall, theirs.wall)}"
            )
        return (
            f"at a sixteenth {self.small_ratio:.2f} x the reference's cost (the middle of {len(self.small)} "
            f"pairs of reads in turns; {small}), at the limit {over}{self.large_ratio:.2f} x ({large}): "
            f"{over}{self.excess:.2f}"
        )


def _walls(measure: str, mine: float, theirs: float, digits: int = 2) -> str:
    return f", wall-clock {mine:.{digits}f} s against {theirs:.{digits}f} s" if measure == CPU else ""


def measure_of(reads: Sequence[Took]) -> str:
    return CPU if all(t.cpu is not None for t in reads) else WALL


def small_ratio(pairs: Sequence[tuple[Took, Took]], measure: str) -> float:
    """The reader's cost against the reference's at a sixteenth: the middle of the pairs' ratios."""
    return middle([a.by(measure) / b.by(measure) for a, b in pairs])


def middle(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2


def estimate(rounds: Sequence[Round]) -> float:
    """The middle of the rounds' excesses, in log space (two rounds: their geometric mean)."""
    return math.exp(middle([math.log(r.excess) for r in rounds]))


def settled(rounds: Sequence[Round]) -> bool:
    """Whether the rounds so far decide ``size:growth`` (see the module's text)."""
    if not rounds:
        return False
    found = estimate(rounds)
    return (
        len(rounds) >= MAX_ROUNDS
        or found <= GROWTH_TOLERANCE / DOUBT
        or (found >= GROWTH_TOLERANCE * DOUBT and len(rounds) >= 2)
    )


def grows_faster(rounds: Sequence[Round]) -> bool:
    return estimate(rounds) > GROWTH_TOLERANCE


@dataclass
class Growth:
    """The reads of one reader beside the reference: the rounds, and the reader's read at the
    limit that ``size:at-limit`` judges (its first decoded one, else its last) with its room."""

    rounds: list[Round] = field(default_factory=list)
    reply: Reply | None = None
    allowed_s: float = 0.0
    room_s: float = 0.0  # ROOM x what a reader growing as the reference did needs (before --timeout)
    basis: tuple[float, float] = (
        1.0,
        0.0,
    )  # that: its ratio at a sixteenth, the reference's seconds at the limit
    small_s: float = math.inf  # the reader's fastest read of the small table, wall-clock
    unread: str | None = None  # why the reader gave no table (then no verdict on its growth)

    def account(self, tensors: tuple[int, int], sizes: tuple[int, int]) -> str:
        """Every number the verdict rests on: the tables, each round, the estimate, the load."""
        several = len(self.rounds) > 1
        rounds = "; ".join(
            f"{f'round {i}: ' if several else ''}{r.describe()}" for i, r in enumerate(self.rounds, 1)
        )
        found = estimate(self.rounds)
        return (
            f"grew {found:.2f} x as much as the reference reader read beside it (over {GROWTH_TOLERANCE:g} "
            f"fails) from {tensors[0]} to {tensors[1]} tensors ({sizes[0]} to {sizes[1]} bytes): {rounds}"
            f"{f'; the middle of {len(self.rounds)} rounds: {found:.2f}' if several else ''}; {load()}"
        )  # fmt: skip


def load() -> str:
    """The machine's load, for the evidence (the verdict never reads it)."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.1f} (5 min: {five:.1f}) on {os.cpu_count()} cores"


@contextlib.contextmanager
def yardstick(version: str, registry: Registry, timeout_s: float, check_messages: bool) -> Iterator[Any]:
    """The reference reader at ``version`` (the newest released when ``version`` is not one),
    a testee of its own reading ``registry``'s schema folder, stopped on leaving."""
    released = registry.released_versions()
    at = version if version in released else released[-1]
    (command,) = [p.command for p in reference(registry) if p.label == f"reference@{at}"]
    testee = Testee(list(command), env={ENV_VAR: str(registry.folder)}, timeout_s=timeout_s,
                    check_messages=check_messages)  # fmt: skip
    try:
        testee.start()
    except (ProtocolError, OSError) as exc:
        testee.stop()
        tail = excerpt_text(testee.stderr)
        raise YardstickFailed(f"the reference reader did not start: {exc}; stderr: {tail}") from None
    try:
        yield SimpleNamespace(testee=testee, label=f"reference@{at}", version=at)
    finally:
        testee.stop()


# -- one read, measured --------------------------------------------------------------------


def cpu_seconds(who: Any) -> tuple[int, float] | None:
    """The process id of ``who``'s testee and the CPU seconds it and its descendants have used
    so far (their threads' ``schedstat``, and children already waited for), or None where
    ``/proc`` cannot say."""
    pid = getattr(getattr(who.testee, "_proc", None), "pid", None)  # the running process, if any
    if pid is None:
        return None
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/schedstat", encoding="ascii") as stat:
                    total += int(stat.read().split()[0]) / 1e9
                with (
                    contextlib.suppress(OSError),
                    open(f"/proc/{p}/task/{task}/children", encoding="ascii") as kids,
                ):
                    todo += [int(k) for k in kids.read().split()]
            if p == pid:  # its children already waited for: only in ticks (utime, stime of the dead)
                with open(f"/proc/{p}/stat", encoding="ascii") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                total += (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None  # not Linux, or the process is gone
            # a descendant that ended while it was read: its time is its parent's once waited for
    return pid, total


def timed(who: Any, blob: bytes, allowed_s: float) -> tuple[Reply, Took]:
    before = cpu_seconds(who)
    t0 = time.perf_counter()
    reply = _checks.ask_read(who, blob, allowed_s)
    wall = time.perf_counter() - t0
    after = cpu_seconds(who)
    if before is None or after is None or before[0] != after[0]:  # (restarted between: not the same process)
        return reply, Took(wall)
    return reply, Took(wall, after[1] - before[1])


def out_of_time(reply: Reply) -> bool:
    return isinstance(reply, Broken) and broken_cause(reply.message) == "no reply in time"


# -- the rounds ----------------------------------------------------------------------------


def read_beside(r: Any, yard: Any, small: bytes, large: bytes, timeout_s: float, warm_s: float) -> Growth:
    """Reader ``r`` and the reference ``yard`` read ``small`` and ``large`` in rounds until
    ``size:growth`` is settled (see the module's text). ``warm_s``: the reader's time for its
    first read of ``small`` (made before, to know it reads it at all)."""
    found = Growth(small_s=warm_s)
    first = _reference_read(yard, small, timeout_s).wall  # its first read, as the reader's: not counted
    room_small, room_large = (
        max(timeout_s, ROOM * ROOM * t) for t in (first, first * len(large) / len(small))
    )
    while not settled(found.rounds):
        reference_first = len(found.rounds) % 2 == 0
        pairs: list[tuple[Took, Took]] = []
        for i in range(PAIRS):  # in turns, A B B A ...: a steady rise or fall weighs on both alike
            took: dict[str, Took] = {}
            for side in (
                ("reference", "reader") if (i % 2 == 0) == reference_first else ("reader", "reference")
            ):
                if side == "reference":
                    took[side] = _reference_read(yard, small, room_small)
                    continue
                reply, took[side] = timed(r, small, max(timeout_s, ROOM * found.small_s))
                if not isinstance(reply, Decoded):
                    found.unread = _why(reply, len(small))
                    return found
            pairs.append((took["reader"], took["reference"]))
        found.small_s = min(found.small_s, *(p[0].wall for p in pairs))
        ratio = small_ratio(pairs, measure_of([t for pair in pairs for t in pair]))
        # the reference first: the reader's room is worked out from its read just before
        reference_large = _reference_read(yard, large, room_large)
        room_s = ROOM * ratio * reference_large.wall
        allowed = max(timeout_s, room_s)
        reply, mine = timed(r, large, allowed)
        ran_out = out_of_time(reply)
        if found.reply is None or (isinstance(reply, Decoded) and not isinstance(found.reply, Decoded)):
            found.reply, found.allowed_s, found.room_s = reply, allowed, room_s
            found.basis = (ratio, reference_large.wall)
        if not (isinstance(reply, Decoded) or ran_out):
            found.unread = _why(reply, len(large))  # it answered, and not with a table
            return found
        del reply  # up to ~10^6 values at the limit: not kept past its time
        mine = Took(allowed) if ran_out else mine
        found.rounds.append(Round(tuple(pairs), (mine, reference_large), ran_out))
    return found


def _reference_read(yard: Any, blob: bytes, allowed_s: float) -> Took:
    reply, took = timed(yard, blob, allowed_s)
    if not isinstance(reply, Decoded):
        raise YardstickFailed(
            f"the reference reader ({yard.label}) beside the reader did not read the realistic table "
            f"of {len(blob)} bytes: {_why(reply, len(blob))}"
        )
    return took


def _why(reply: Reply, size: int) -> str:
    said = getattr(reply, "message", None) or getattr(reply, "reason", None) or type(reply).__name__
    return f"did not decode the realistic table of {size} bytes: {said}"
