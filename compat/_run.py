"""Run participants against each other and yield one result per case per cell, as they come.

A cell is (writer, reader). Writers write every payload once; every reader reads every
blob. Vector cases run per participant alone (a reader on the golden blobs, a writer on
the golden payloads and on payloads it must refuse). A crash, hang or garbage reply costs
the errored cases, never the run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from refitwire.compat import _built_cases, _cases, _checks, _digest, _expected, _probes, _size_budget, _sizes
from refitwire.compat._participants import Participant
from refitwire.compat._protocol import ProtocolError
from refitwire.compat._results import REQUIRED, Outcome, Result
from refitwire.compat._testee import Identity, Testee
from refitwire.engine import SPEC_VERSIONS

__all__ = ["Outcome", "Plan", "Result", "Started", "run", "start_all", "stop_all"]


@dataclass
class Started:
    participant: Participant
    testee: Testee
    identity: Identity

    @property
    def label(self) -> str:
        return self.participant.label

    @property
    def version(self) -> str:
        return self.identity.spec_version


@dataclass
class Plan:
    """What a run covers.

    ``focus``: only cells with one of these participants on one side and a participant
    outside ``focus`` on the other (conformance; several testees share one run this way).
    ``only``: run just the cases with this ID (``refitwire conformance --case``).
    ``limits``: send the blobs at and over the size limit (64 MiB each).
    """

    participants: Sequence[Participant]
    seed: int = 0
    examples: int = 200
    focus: str | Sequence[str] | None = None
    timeout_s: float = 10.0
    check_messages: bool = True
    unavailable: list[str] = field(default_factory=list)
    schema_dir: Path | None = None  # where unreleased candidate versions live (the gate)
    limits: bool = True
    only: str | None = None
    upstream: str = "not asked"  # whether the released upstream participants ran, for the report
    startup_timeout_s: float = 120.0  # per participant, from its own process start, apart from timeout_s
    # Expected failures given explicitly (--expected-failures), by participant label: never by the
    # name a testee gives itself.
    expected_failures: dict[str, _expected.Listed] = field(default_factory=dict)
    # A size case allows at most this many times what the reference testee needs on this machine.
    allowance_factor: float = _size_budget.ALLOWANCE_FACTOR

    @property
    def focused(self) -> frozenset[str] | None:
        if self.focus is None:
            return None
        return frozenset([self.focus] if isinstance(self.focus, str) else self.focus)


def start_all(plan: Plan) -> tuple[list[Started], list[Result]]:
    """Start the participants a few at a time (one per core, at least two): a handshake mostly
    waits on an interpreter importing its modules, and starting them all at once on a busy
    machine makes every one of them slow. Each gets ``plan.startup_timeout_s`` from its own
    process start; the run's clock (the report's seconds) starts after this."""

    def start(p: Participant) -> Started | Result:
        testee = Testee(
            list(p.command),
            timeout_s=plan.timeout_s,
            start_timeout_s=plan.startup_timeout_s,
            check_messages=plan.check_messages,
        )
        try:
            identity = testee.start()
        except (ProtocolError, OSError) as exc:
            tail = " | ".join(list(testee.stderr)[-5:]) or "(empty)"
            why, symptom = f"{exc}; stderr: {tail}", "handshake failed"
        else:
            unknown = _unknown_version(identity.spec_version, plan.schema_dir)
            if unknown is None:
                return Started(p, testee, identity)
            why, symptom = unknown, "unknown spec version"
        testee.stop()
        return Result("handshake", REQUIRED, Outcome.ERRORED, p.label, p.label, why, symptom=symptom)

    workers = max(2, os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=min(workers, max(1, len(plan.participants)))) as pool:
        done = list(pool.map(start, plan.participants))
    return [s for s in done if isinstance(s, Started)], [r for r in done if isinstance(r, Result)]


def _unknown_version(version: str, schema_dir: Path | None) -> str | None:
    """Why a participant's declared spec version cannot be checked, or None when it can."""
    if version in SPEC_VERSIONS:
        return None
    if schema_dir is None:
        known = ", ".join(SPEC_VERSIONS)
        return f"declares spec version {version!r}, which this kit does not know (known: {known}; a candidate needs --schema-dir)"
    from refitwire.compat._candidate import load  # the kit: only for a candidate

    try:
        load(schema_dir, version)
    except ValueError as exc:  # UnknownVersion, or a candidate schema that does not load
        return f"declares {exc}"
    return None


def run(plan: Plan, started: list[Started]) -> Iterator[Result]:
    xfails = _expected.load()
    payloads = _cases.generated_payloads(plan.seed, plan.examples)  # case id -> payload, drawn once
    ordinals = {cid: n for n, cid in enumerate(payloads)}  # before --case narrows them: reruns agree
    if plan.only is not None:
        payloads = {cid: p for cid, p in payloads.items() if _asks(plan.only, cid)}
    writers = [s for s in started if "writer" in s.identity.roles]
    readers = [s for s in started if "reader" in s.identity.roles]
    focus = plan.focused

    def alone(who: Started) -> bool:
        return focus is None or who.label in focus

    def pair(w: Started, r: Started) -> bool:
        return focus is None or ((w.label in focus) != (r.label in focus))

    def settle(results: Iterator[Result] | list[Result], who: Started, role: str) -> Iterator[Result]:
        for result in results:
            if plan.only is None or _matches(plan.only, result.case):
                listed = plan.expected_failures.get(who.label)
                found = listed.get((role, result.case)) if listed is not None else None
                yield expected(result, found or listed_failure(xfails, who, role, result.case))

    sized = plan.limits and (plan.only is None or plan.only.startswith("size:")) and any(map(alone, readers))
    for r in filter(alone, readers):
        for case in _cases.read_cases():
            if plan.only is None or _asks(plan.only, case.id):
                yield from settle(_checks.read_vector(r, case), r, "reader")
        if sized:  # judged by the reader's own growth first, then each case within what it allows
            growth, judged = _size_budget.read_growth(r, plan.timeout_s, plan.allowance_factor)
            if plan.only is None or plan.only == _size_budget.GROWTH_CASE:
                yield from settle(judged, r, "reader")
            for size in _sizes.size_cases():
                if plan.only is None or plan.only == size.id:
                    allowed = _size_budget.allowance(size, growth, plan.timeout_s, plan.allowance_factor)
                    yield from settle(_checks.read_size(r, size, allowed), r, "reader")
    for who in filter(alone, started):  # the digest is neither role's: every participant is asked
        if plan.only is None or plan.only.startswith("protocol:"):
            yield from settle(_probes.probe(who), who, "protocol")
        for dcase in _digest.digest_cases():
            if plan.only is None or _asks(plan.only, dcase.id):
                yield from settle([_digest.check_digest(who, dcase)], who, "digest")
    blobs: dict[str, dict[str, bytes]] = {}
    asked: dict[str, dict[str, Any]] = {}  # what a writer of each spec version is asked to write
    for w in writers:
        blobs[w.label] = {}
        candidate = _candidate(plan, w.version)
        if w.version not in asked:
            # Payloads follow the writer's schema (its required and new members carried); a
            # candidate's carry, in each member it changed, a value only it allows.
            conformed = {cid: _cases.conform(p, w.version, ordinals[cid]) for cid, p in payloads.items()}
            asked[w.version] = (
                {cid: candidate.exercise(p) for cid, p in conformed.items()} if candidate else conformed
            )
        if alone(w):
            yield from settle(
                [_checks.write_vector(w, c) for c in _cases.write_cases() if c.spec_version == w.version],
                w,
                "writer",
            )
            refusals = _built_cases.refusal_cases(w.version)
            if candidate is not None:  # a candidate may allow what a release refuses: only what it refuses
                refusals = tuple(c for c in refusals if candidate.refusal_rule(c.payload) == c.rule)
            for refusal in refusals:
                yield from settle(_checks.refusal(w, refusal), w, "writer")
        if not any(pair(w, r) for r in readers):
            continue
        for cid, payload in asked[w.version].items():
            results, blob = _checks.write_generated(w, cid, payload, candidate)
            # A writer outside the focus only serves the testee: its passes are not the run's news.
            yield from settle([r for r in results if alone(w) or r.outcome.bad], w, "writer")
            if blob is not None:
                blobs[w.label][cid] = blob
    # What a reader must decode depends on the two versions only: worked out once per pair.
    wanted: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for w in writers:
        for r in readers:
            if pair(w, r):
                if (w.version, r.version) not in wanted:
                    wanted[(w.version, r.version)] = {
                        cid: _cases.expected_read(p, w.version, r.version)
                        for cid, p in asked[w.version].items()
                    }
                expect = wanted[(w.version, r.version)]
                for cid, blob in blobs[w.label].items():
                    yield from settle([_checks.cross(w, r, cid, expect[cid], blob)], r, "reader")


def listed_failure(
    xfails: dict[tuple[str, str, str], _expected.ExpectedFailure], who: Started, role: str, case: str
) -> _expected.ExpectedFailure | None:
    """The listed expected failure of ``who`` for ``case``. The lists are for the released and
    frozen participants this kit starts itself; a third-party testee or a source tree names
    itself in its handshake, and that name never excuses its failures (``--expected-failures``
    lists them explicitly)."""
    if who.participant.kind in ("third-party", "upstream-source"):
        return None
    listed = xfails.get((who.identity.name, role, case))
    return listed if listed is not None and listed.applies_to(who.version) else None


def expected(result: Result, listed: _expected.ExpectedFailure | None) -> Result:
    """A listed case that fails is xfailed (an ``errored`` answer included: the entry says why);
    one that passes is xpassed (strict)."""
    if listed is None:
        return result
    if result.outcome in (Outcome.FAILED, Outcome.ERRORED):
        return dataclasses.replace(result, outcome=Outcome.XFAILED, expected_failure=listed.reason)
    if result.outcome == Outcome.PASSED:
        return dataclasses.replace(
            result,
            outcome=Outcome.XPASSED,
            expected_failure=listed.reason,
            message=f"listed as an expected failure ({listed.link}) but passed",
        )
    return result


def bare(case: str) -> str:
    """The case a derived result belongs to: ``read:v-X#rule`` -> ``read:v-X``, ``gen-X:bytes`` -> ``gen-X``."""
    return case.split("#")[0].removesuffix(":bytes")


def _asks(only: str, case: str) -> bool:
    """Whether running ``case`` is needed for ``--case only``."""
    return bare(only) == bare(case)


def _matches(only: str, result_case: str) -> bool:
    """Whether a result belongs in the output of ``--case only`` (a bare ID shows its derived cases)."""
    return result_case == only or bare(result_case) == only


def _candidate(plan: Plan, version: str) -> Any:
    if plan.schema_dir is None or version in SPEC_VERSIONS:
        return None
    from refitwire.compat._candidate import load

    return load(plan.schema_dir, version)


def stop_all(started: list[Started]) -> None:
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(started)))) as pool:
        list(pool.map(lambda s: s.testee.stop(), started))
