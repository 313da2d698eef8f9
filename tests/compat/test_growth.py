"""``size:growth`` judged beside the reference reader by processor time: the same verdict at any
load. The estimate and its rounds on a fake clock (quick), and real testees read beside the real
reference while busy loops saturate both cores, the load changing between the small table and
the one at the limit (slow)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _support import proposed_schema
from refitwire import wire
from refitwire.compat import _testee
from refitwire.compat._results import Broken, Decoded, Outcome, Result, Skipped
from refitwire.compat.cases import _sizes
from refitwire.compat.runner import _checks, _growth, _size_budget
from refitwire.compat.runner._growth import Round, Took
from refitwire.wire import blob_limit

FAULTY = Path(__file__).with_name("faulty_testee.py")


def round_of(small: tuple[float, float], large: tuple[float, float], ran_out: bool = False) -> Round:
    """A round whose pairs at a sixteenth all cost ``small`` (reader, reference) and whose reads at
    the limit cost ``large``, in CPU seconds (wall-clock: twice that)."""
    pair = (Took(2 * small[0], small[0]), Took(2 * small[1], small[1]))
    mine = Took(large[0]) if ran_out else Took(2 * large[0], large[0])
    return Round((pair,) * _growth.PAIRS, (mine, Took(2 * large[1], large[1])), ran_out)


def test_the_excess_is_how_much_more_the_reader_grew_than_the_reference() -> None:
    linear = round_of((0.2, 0.1), (3.2, 1.6))  # twice the reference's cost at both sizes
    assert linear.measure == _growth.CPU and linear.excess == pytest.approx(1.0)
    quadratic = round_of((0.2, 0.1), (32.0, 1.6))
    assert quadratic.excess == pytest.approx(10.0)
    # stopped at the limit: its allowance in wall-clock time, against the reference's wall-clock
    stopped = round_of((0.2, 0.1), (12.8, 1.6), ran_out=True)
    assert stopped.measure == _growth.CPU and stopped.excess == pytest.approx((12.8 / 3.2) / 2.0)
    # a read with no CPU time (not Linux): every ratio of the round in wall-clock time
    no_cpu = Round(linear.small, (Took(3.2), Took(1.6)))
    assert no_cpu.measure == _growth.WALL and no_cpu.excess == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("excesses", "settled", "fails"),
    [
        ([1.0], True, False),  # clearly linear: one round
        ([1.4], False, False),  # in doubt: read again
        ([3.5], False, True),  # a failure is seen twice before it is settled
        ([3.5, 4.0], True, True),
        ([3.5, 1.0], False, False),  # geometric mean 1.87: in doubt
        ([3.5, 1.0, 1.1], True, False),  # the middle of three
        ([2.5, 1.9, 2.2], True, True),
    ],
)
def test_rounds_are_read_until_the_estimate_is_clear(
    excesses: list[float], settled: bool, fails: bool
) -> None:
    rounds = [round_of((1.0, 1.0), (16.0 * e, 16.0)) for e in excesses]
    assert _growth.settled(rounds) is settled
    assert _growth.grows_faster(rounds) is fails


class Sides:
    """A reader and the reference on a fake clock. Each read costs the CPU seconds scripted for
    its side and table (the next of a list); its wall-clock time is that times the load at the
    moment (``load(now, side, table)``). A read longer than its allowance answers nothing in it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, reader: dict[str, Any], reference: dict[str, Any],
                 load: Any = None, cpu: bool = True) -> None:  # fmt: skip
        self.now, self.limit = 0.0, blob_limit(wire.default_registry())
        self.costs = {side: {t: c if isinstance(c, list) else [c] for t, c in costs.items()}
                      for side, costs in (("reader", reader), ("reference", reference))}  # fmt: skip
        self.spent = {"reader": 0.0, "reference": 0.0}
        self.load = load or LOADS["idle"]
        self.asked: list[tuple[str, str, float]] = []
        self.started = 0
        self.label, self.version, self.testee = "fake", wire.default_registry().released_versions()[-1], None
        monkeypatch.setattr(_growth, "time", SimpleNamespace(perf_counter=lambda: self.now))
        monkeypatch.setattr(_growth, "cpu_seconds", (lambda who: (1, self.spent[self.side(who)])) if cpu else (lambda who: None))  # fmt: skip
        monkeypatch.setattr(_checks, "ask_read", self.ask)
        monkeypatch.setattr(_size_budget, "judge_size", self.judge)
        monkeypatch.setattr(_growth, "yardstick", self.yardstick)

    @contextlib.contextmanager
    def yardstick(self, *args: Any) -> Iterator[Any]:
        self.started += 1
        yield SimpleNamespace(label="reference@fake", version=self.version, testee=None)

    @staticmethod
    def side(who: Any) -> str:
        return "reference" if who.label.startswith("reference") else "reader"

    def table(self, blob: bytes) -> str:
        if _sizes.PAD_MEMBER.encode() in blob[:8192]:
            return "multibyte"  # the multi-byte cases, at and over the limit
        if len(blob) == len(_size_budget.small_table(self.limit)):
            return "small"
        return {self.limit: "limit", self.limit + 1: "over"}.get(len(blob), "many")

    def ask(self, who: Any, blob: bytes, timeout_s: float) -> Any:
        side, table = self.side(who), self.table(blob)
        costs = self.costs[side].setdefault(table, [1.0])
        cost = costs.pop(0) if len(costs) > 1 else costs[0]
        self.asked.append((side, table, timeout_s))
        wall = cost * self.load(self, side, table)
        took = min(wall, timeout_s)
        self.now += took
        self.spent[side] += cost * took / wall
        if wall > timeout_s:
            return Broken(f"no reply within {timeout_s:g} s; stderr: (empty)")
        return Decoded({})

    def judge(self, r: Any, case: Any, reply: Any, allowance: Any, registry: Any = None) -> Any:
        ok = isinstance(reply, Decoded)
        yield Result(case.id, case.tier, Outcome.PASSED if ok else Outcome.ERRORED, reader=r.label,
                     message=allowance.describe())  # fmt: skip

    def run(self, only: str | None = None) -> dict[str, Result]:
        return {r.case: r for r in _size_budget.read_sizes(self, 5.0, wire.default_registry(), only)}


LINEAR = {"small": 0.5, "limit": 8.0}  # CPU seconds: twice the reference's at both sizes
QUADRATIC = {"small": 0.5, "limit": 80.0}  # ten times as much growth
REFERENCE = {"small": 0.25, "limit": 4.0}


def read(sides: Sides, table: str) -> bool:
    """Whether ``table`` was asked of either side yet (the read being made included)."""
    return any(t == table for _, t, _ in sides.asked)


#: How many times longer than its CPU time a read takes, by when it is made.
LOADS = {
    "idle": lambda sides, side, table: 1.0,
    "saturated": lambda sides, side, table: 8.0,
    # what let a quadratic reader through: busier while the small table was read than at the limit
    "falling": lambda sides, side, table: 2.0 if read(sides, "limit") else 10.0,
    "rising": lambda sides, side, table: 6.0 if read(sides, "limit") else 1.0,
    # on and off every third of a second: the two reads of a pair may be made under different loads
    "swinging": lambda sides, side, table: 1.0 + 7.0 * (int(sides.now * 3) % 2),
}


@pytest.mark.parametrize("load", list(LOADS))
@pytest.mark.parametrize("cpu", [True, False], ids=["cpu", "wall-clock"])
def test_the_verdict_is_the_same_at_any_load(monkeypatch: pytest.MonkeyPatch, load: str, cpu: bool) -> None:
    verdicts = {}
    for name, costs in (("linear", LINEAR), ("quadratic", QUADRATIC)):
        sides = Sides(monkeypatch, dict(costs), dict(REFERENCE), LOADS[load], cpu=cpu)
        growth = sides.run(only="size:growth")["size:growth"]
        verdicts[name] = growth.outcome
        assert ("CPU time" in growth.message) is cpu, growth.message
    if not cpu and load == "swinging":  # wall-clock pairs read under another load: no promise
        return
    assert verdicts == {"linear": Outcome.PASSED, "quadratic": Outcome.FAILED}, (load, verdicts)


def test_a_linear_reader_passes_in_one_round_with_its_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    sides = Sides(monkeypatch, dict(LINEAR), dict(REFERENCE), LOADS["saturated"])
    found = sides.run()
    growth = found["size:growth"]
    assert growth.outcome is Outcome.PASSED, growth
    small, large = (_size_budget.small_tensors(sides.limit), _sizes.size_cases(sides.limit)[0].tensors)
    assert growth.message.startswith(
        f"grew 1.00 x as much as the reference reader read beside it (over 2 fails) from {small} to {large} "
        f"tensors ({len(_size_budget.small_table(sides.limit))} to {sides.limit} bytes): at a sixteenth 2.00 x the "
        "reference's cost (the middle of 4 pairs of reads in turns; CPU time 0.500 s against 0.250 s, wall-clock "
        "4.000 s against 2.000 s), at the limit 2.00 x (CPU time 8.00 s against 4.00 s, wall-clock 64.00 s against "
        "32.00 s): 1.00; load average "
    ), growth.message
    assert all(r.outcome is Outcome.PASSED for r in found.values()), found
    # The reader's first read, the reference's, then one round: the small table in turns, the
    # table at the limit (the reference first), then each other case once.
    turns = [("reference", "small"), ("reader", "small"), ("reader", "small"), ("reference", "small")] * 2
    assert [(s, t) for s, t, _ in sides.asked] == [
        ("reader", "small"), ("reference", "small"), *turns, ("reference", "limit"), ("reader", "limit"),
        ("reader", "multibyte"), ("reader", "over"), ("reader", "multibyte"), ("reader", "many"),
    ]  # fmt: skip
    # its room at the limit: 4 x its ratio at a sixteenth x the reference's wall-clock time there
    assert [t for s, t, _ in sides.asked].count("limit") == 2
    assert sides.asked[11][2] == pytest.approx(4 * 2.0 * 32.0)
    assert (
        "4 x what a reader growing as the reference reader did needs: 2.00 x its 32.00 s at the limit"
        in found["size:at-limit"].message
    )


def test_a_quadratic_reader_is_stopped_at_its_room_and_seen_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    sides = Sides(monkeypatch, dict(QUADRATIC), dict(REFERENCE), LOADS["saturated"])
    found = sides.run()
    growth = found["size:growth"]
    assert growth.outcome is Outcome.FAILED and growth.symptom == "grows faster than linearly", growth
    assert "round 1: " in growth.message and "round 2: " in growth.message and "round 3" not in growth.message
    assert (
        "at the limit over 8.00 x (more than 256.00 s wall-clock, its allowance, against 32.00 s): over 4.00"
        in growth.message
    )
    assert found["size:at-limit"].outcome is Outcome.ERRORED
    assert found["size:many-tensors"].outcome is Outcome.SKIPPED  # not sent after a slow growth
    assert [t for s, t, _ in sides.asked if s == "reader"].count("limit") == 2


def test_a_reader_in_doubt_is_read_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    # a load spike on the reader's first read at the limit alone: 3.5 x, then 1 x twice
    sides = Sides(monkeypatch, {"small": 0.5, "limit": [28.0, 8.0, 8.0]}, dict(REFERENCE))
    growth = sides.run(only="size:growth")["size:growth"]
    assert growth.outcome is Outcome.PASSED, growth.message
    assert "round 3: " in growth.message and "the middle of 3 rounds: 1.00" in growth.message


def test_a_reader_that_skips_is_skipped_and_no_reference_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    sides = Sides(monkeypatch, dict(LINEAR), dict(REFERENCE))
    monkeypatch.setattr(_checks, "ask_read", lambda who, blob, timeout_s: Skipped("no reads here"))
    growth = sides.run(only="size:growth")["size:growth"]
    assert growth.outcome is Outcome.SKIPPED and "no reads here" in growth.message
    assert sides.started == 0


def test_a_reference_that_cannot_read_is_the_kits_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    sides = Sides(monkeypatch, dict(LINEAR), {"small": 0.25, "limit": 1e9})  # never answers at the limit
    found = sides.run()
    growth = found["size:growth"]
    assert growth.outcome is Outcome.ERRORED and growth.fault == "kit", growth
    assert (
        "the reference reader (reference@fake) beside the reader did not read the realistic table"
        in growth.message
    )
    # the table at the limit is still read, allowed what a linear reader needs
    assert found["size:at-limit"].outcome is Outcome.PASSED
    assert "a linear growth from its time at a sixteenth" in found["size:at-limit"].message


# -- real testees, a saturated machine -----------------------------------------------------


#: A busy loop that ends once the test's process is gone (a killed run leaves none behind).
BUSY = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    for _ in range(100_000): pass"


class Burners:
    """Busy loops, each wanting a core; ``run(n)`` lets the first ``n`` run and stops the rest."""

    def __init__(self, most: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(most)]

    def run(self, n: int) -> None:
        for i, proc in enumerate(self.procs):
            proc.send_signal(signal.SIGCONT if i < n else signal.SIGSTOP)

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()  # stopped or not
            proc.wait()


#: A blob size limit whose tables the testees read in seconds.
SMALL_LIMIT = {"| blob size 64 MiB |": "| blob size 2 MiB |"}
#: Busy loops while the small table is read, and from the first read at the limit on: always at
#: least two on two cores, so the machine stays saturated; the load falls (what let a quadratic
#: reader through) or rises there.
SCHEDULES = {"falling": (8, 2), "rising": (2, 8), "idle": (0, 0)}


@pytest.fixture
def small_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> wire.Registry:
    schema = proposed_schema(tmp_path / "schema", SMALL_LIMIT)
    monkeypatch.setenv(wire.ENV_VAR, str(schema))  # the testees read it too (the faults follow its limit)
    return wire.default_registry()


def judged_growth(fault: str, registry: wire.Registry, schedule: tuple[int, int], burners: Burners | None,
                  monkeypatch: pytest.MonkeyPatch) -> Result:  # fmt: skip
    limit, real = blob_limit(registry), _checks.ask_read

    def ask(who: Any, blob: bytes, timeout_s: float | None = None, cmd: str = "read") -> Any:
        if burners is not None and len(blob) == limit:
            burners.run(schedule[1])
        return real(who, blob, timeout_s, cmd)

    monkeypatch.setattr(_checks, "ask_read", ask)
    if burners is not None:
        burners.run(schedule[0])
    testee = _testee.Testee([sys.executable, str(FAULTY), fault], timeout_s=5.0)
    testee.start()
    try:
        reader = SimpleNamespace(
            testee=testee, label=f"testee: {fault}", version=wire.default_registry().released_versions()[-1]
        )
        (growth,) = _size_budget.read_sizes(reader, 5.0, registry, only="size:growth")
    finally:
        testee.stop()
    return growth


@pytest.mark.slow
@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_a_quadratic_reader_fails_and_a_linear_one_passes_at_any_load(
    small_limit: wire.Registry, schedule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged by the kit's own code, the reference reader read beside each: the correct testee
    (``none``) passes and ``quadratic-in-tensors`` fails, with busy loops on both cores whose
    number falls or rises when the table at the limit is first sent (and on an idle machine)."""
    most = max(SCHEDULES[schedule])
    burners = Burners(most) if most else None
    try:
        verdicts = {fault: judged_growth(fault, small_limit, SCHEDULES[schedule], burners, monkeypatch)
                    for fault in ("none", "quadratic-in-tensors")}  # fmt: skip
    finally:
        if burners is not None:
            burners.stop()
    assert verdicts["none"].outcome is Outcome.PASSED, verdicts["none"].message
    quadratic = verdicts["quadratic-in-tensors"]
    assert quadratic.outcome is Outcome.FAILED and quadratic.symptom == "grows faster than linearly", (
        quadratic.message
    )
    for found in verdicts.values():  # the evidence: both sides' times, the ratio, the load
        assert "CPU time" in found.message and "against" in found.message and "load average" in found.message
