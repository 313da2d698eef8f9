"""Run participants against each other and yield one result per case per cell, as they come.

A cell is (writer, reader). Writers write every payload once; every reader reads every
blob. Vector cases run per participant alone (a reader on the golden blobs, a writer on
the golden payloads and on payloads it must refuse). A crash, hang or garbage reply costs
the errored cases, never the run.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from refitwire.compat._errors import ProtocolError
from refitwire.compat._results import LISTED_PER_GROUP, REQUIRED, Outcome, Result, broken_cause, listing
from refitwire.compat._testee import Testee, excerpt_text, reply_limit
from refitwire.compat.runner import _expected, _kinds
from refitwire.compat.runner._asking import Scope
from refitwire.compat.runner._participants import Participant
from refitwire.compat.runner._plan import Plan, Progress, Started
from refitwire.compat.runner._rebuild import Source
from refitwire.wire import Registry

__all__ = [
    "Outcome", "Plan", "Progress", "Result", "Started", "needed", "needs_peers", "run", "start_all", "stop_all",
]  # fmt: skip


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
            max_reply=reply_limit(plan.registry),
        )
        try:
            identity = testee.start()
        except (ProtocolError, OSError) as exc:
            tail = excerpt_text(testee.stderr)
            why, symptom = f"{exc}; stderr: {tail}", f"handshake failed: {broken_cause(str(exc))}"
        else:
            unknown = _unknown_version(identity.spec_version, plan.registry)
            if unknown is None:
                named = p.named(identity.name, identity.version)
                return Started(named, testee, identity, p.label if named is not p else "")
            why, symptom = unknown, "unknown spec version"
        testee.stop()
        return Result(_kinds.HANDSHAKE, REQUIRED, Outcome.ERRORED, p.label, p.label, why, symptom=symptom)

    wanted = needed(plan)
    workers = max(2, os.cpu_count() or 2)
    # The kit's own participants start in a second or so; the others (the released packages and
    # source trees import torch: 6 to 8 s each at load 12) are started first, so that the last of
    # the few started at a time is not one of them. The results keep the plan's order.
    first = sorted(range(len(wanted)), key=lambda i: wanted[i].kind in _QUICK_TO_START)
    with ThreadPoolExecutor(max_workers=min(workers, max(1, len(wanted)))) as pool:
        futures = {i: pool.submit(start, wanted[i]) for i in first}
        done = [futures[i].result() for i in range(len(wanted))]
    return _distinct([s for s in done if isinstance(s, Started)]), [r for r in done if isinstance(r, Result)]


#: The participant kinds that are the kit's own programs (a Python module of the kit, node with
#: one script): quick to start, so started after the others.
_QUICK_TO_START = frozenset({"reference", "candidate", "generation", "example"})


def needs_peers(only: str | None) -> bool:
    """Whether a run of ``--case only`` (``None``: every case) meets participants outside its focus:
    only a kind whose cases are cells does (the generated cases pair the testee with every other
    participant); a vector, refusal, digest, probe, size, count or merge case is asked of the testee alone."""
    return _kinds.needs_peers(only)


def needed(plan: Plan) -> list[Participant]:
    """The participants ``plan`` starts: every one, except in a focused ``--case`` run that needs
    no peer (:func:`needs_peers`), where the focus and the references do (``--case`` shows the
    reference's answer beside the testee's) and nothing else starts: no generation, no released
    package."""
    focus = plan.focused
    if focus is None or needs_peers(plan.only):
        return list(plan.participants)
    return [p for p in plan.participants if p.label in focus or p.kind == "reference"]


def _distinct(started: list[Started]) -> list[Started]:
    """Two testees whose start replies name the same implementation keep apart: ``#2`` and on."""
    seen: dict[str, int] = {}
    for s in started:
        label = s.participant.label
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1 and s.given:
            s.participant = replace(s.participant, label=f"{label} #{seen[label]}")
    return started


def _unknown_version(version: str, registry: Registry) -> str | None:
    """Why a participant's declared spec version cannot be checked, or None when it can."""
    if version in registry.known_versions():
        return None
    known = ", ".join(registry.released_versions())
    candidates = ", ".join(registry.candidate_versions()) or "none"
    return (
        f"declares spec version {version!r}, which this kit does not know (known: {known}; candidates: "
        f"{candidates}; a candidate needs --schema-dir)"
    )


def run(plan: Plan, started: list[Started], progress: Progress | None = None) -> Iterator[Result]:
    """Every kind of the table in turn asks its cases (``_kinds.KINDS``); each check is settled
    against the expected failures, and a case a page lists records its inputs (:func:`_with_inputs`)."""
    tally = progress if progress is not None else Progress()
    xfails = _expected.load()
    only = _kinds.parse(plan.only) if plan.only is not None else None
    if plan.only is not None and only is None:
        return  # no kind has such IDs: nothing to ask
    scope = Scope(plan, started, only)
    source = Source(plan.registry, lambda: scope.drawn)
    recorded: set[str] = set()
    # the results a page lists so far, by cell and group: each records its case's inputs once
    per_group: collections.Counter[tuple[Any, ...]] = collections.Counter()

    def settle(asked: _kinds.Asked) -> Iterator[Result]:
        tally.done += 1
        for result in asked.results:
            if only is None or _matches(only, result.case):
                listed = plan.expected_failures.get(asked.who.asked_as)
                found = listed.get((asked.role, result.case)) if listed is not None else None
                settled = expected(
                    result, found or listed_failure(xfails, asked.who, asked.role, result.case)
                )
                yield _with_inputs(settled, source, recorded, per_group)

    tally.total = sum(k.planned(scope) for k in _kinds.KINDS)  # one per check, as settle() counts them
    for k in _kinds.KINDS:
        for asked in k.ask(scope, k):
            yield from settle(asked)


def _with_inputs(
    result: Result, source: Source, recorded: set[str], per_group: collections.Counter[tuple[Any, ...]]
) -> Result:
    """``result`` with its case's inputs when a page lists it (one of the first ``LISTED_PER_GROUP``
    of its group in its cell) and no earlier result of its case carries them: what the page shows,
    never found again from the seed."""
    key = listing(result)
    if key is None:
        return result
    per_group[(result.writer, result.reader, key)] += 1
    case = _kinds.bare(result.case)
    if per_group[(result.writer, result.reader, key)] > LISTED_PER_GROUP or case in recorded:
        return result
    recorded.add(case)
    try:
        found = _kinds.inputs(case, source)
    except Exception as exc:  # the inputs are an aid: a crash rebuilding them costs them, not the verdict
        return replace(
            result, input={"description": f"the kit could not rebuild this case's inputs: {exc!r}"}
        )
    return result if found is None else replace(result, input=found.recorded())


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
    return _kinds.bare(case)


def _matches(only: _kinds.CaseId, result_case: str) -> bool:
    """Whether a result belongs in the output of ``--case only`` (a bare ID shows its derived cases)."""
    return result_case == str(only) or (not only.derived and _kinds.bare(result_case) == only.bare)


def stop_all(started: list[Started]) -> None:
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(started)))) as pool:
        list(pool.map(lambda s: s.testee.stop(), started))
