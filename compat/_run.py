"""Run participants against each other and yield one result per case per cell, as they come.

A cell is (writer, reader). Writers write every payload once; every reader reads every
blob. Vector cases run per participant alone (a reader on the golden blobs, a writer on
the golden payloads and on payloads it must refuse). A crash, hang or garbage reply costs
the errored cases, never the run.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from refitwire.compat import (
    _built_cases,
    _cases,
    _checks,
    _digest,
    _expected,
    _merge,
    _probes,
    _size_budget,
    _write_unknown,
)
from refitwire.compat._participants import Participant
from refitwire.compat._protocol import ProtocolError
from refitwire.compat._results import (
    RECOMMENDED,
    REQUIRED,
    KitCrash,
    Outcome,
    Result,
    broken_cause,
    crashed,
    judged,
)
from refitwire.compat._testee import Identity, Testee, excerpt_text
from refitwire.wire import Registry

__all__ = [
    "Outcome", "Plan", "Progress", "Result", "Started", "needed", "needs_peers", "run", "start_all", "stop_all",
]  # fmt: skip


@dataclass
class Started:
    participant: Participant  # labelled by its start reply where its label was provisional
    testee: Testee
    identity: Identity
    given: str = ""  # the label it was started under, when the start reply renamed it

    @property
    def asked_as(self) -> str:
        """The label the caller knows it by (``focus``, ``--expected-failures``)."""
        return self.given or self.participant.label

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
    ``limits``: send the blobs at and over the blob size limit (``registry``'s, at the reader's version).
    """

    participants: Sequence[Participant]
    seed: int = 0
    examples: int = 200
    focus: str | Sequence[str] | None = None
    timeout_s: float = 10.0
    check_messages: bool = True
    unavailable: list[str] = field(default_factory=list)
    schema_dir: Path | None = None  # a schema/ folder whose unreleased versions join as candidates (the gate)
    limits: bool = True
    only: str | None = None
    upstream: str = "not asked"  # whether the released upstream participants ran, for the report
    startup_timeout_s: float = 120.0  # per participant, from its own process start, apart from timeout_s
    # Expected failures given explicitly (--expected-failures), by participant label: never by the
    # name a testee gives itself.
    expected_failures: dict[str, _expected.Listed] = field(default_factory=dict)
    #: Where every version of the run is read (the entry point's registry: the CLI's, a test's),
    #: plus ``schema_dir``'s candidates; never a default.
    registry: Registry = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.schema_dir is not None:
            self.registry = self.registry.with_candidates(self.schema_dir)

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
            tail = excerpt_text(testee.stderr)
            why, symptom = f"{exc}; stderr: {tail}", f"handshake failed: {broken_cause(str(exc))}"
        else:
            unknown = _unknown_version(identity.spec_version, plan.registry)
            if unknown is None:
                named = p.named(identity.name, identity.version)
                return Started(named, testee, identity, p.label if named is not p else "")
            why, symptom = unknown, "unknown spec version"
        testee.stop()
        return Result("handshake", REQUIRED, Outcome.ERRORED, p.label, p.label, why, symptom=symptom)

    wanted = needed(plan)
    workers = max(2, os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=min(workers, max(1, len(wanted)))) as pool:
        done = list(pool.map(start, wanted))
    return _distinct([s for s in done if isinstance(s, Started)]), [r for r in done if isinstance(r, Result)]


def needs_peers(only: str | None) -> bool:
    """Whether a run of ``--case only`` (``None``: every case) meets participants outside its focus:
    only a generated case does (its cells pair the testee with every other participant); a vector,
    refusal, digest, probe, size, count or merge case is asked of the testee alone."""
    return only is None or only.startswith(f"{_cases.GENERATED}-")


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


@dataclass
class Progress:
    """How far a run is: its checks done of those planned. A check asks one case of one participant
    or cell (or an optional command's cases, or the size cases, of one reader) and gives a result or
    a few; ``total`` is known once :func:`run` has begun."""

    total: int = 0
    done: int = 0


def run(plan: Plan, started: list[Started], progress: Progress | None = None) -> Iterator[Result]:
    tally = progress if progress is not None else Progress()
    xfails = _expected.load()
    # case id -> payload, drawn once (seconds of Hypothesis): not for a --case of another kind
    drawn = plan.only is None or plan.only.startswith(f"{_cases.GENERATED}-")
    payloads = _cases.generated_payloads(plan.seed, plan.examples, plan.registry) if drawn else {}
    ordinals = {cid: n for n, cid in enumerate(payloads)}  # before --case narrows them: reruns agree
    if plan.only is not None:
        payloads = {cid: p for cid, p in payloads.items() if _asks(plan.only, cid)}
    writers = [s for s in started if "writer" in s.identity.roles]
    readers = [s for s in started if "reader" in s.identity.roles]
    focus = plan.focused

    def alone(who: Started) -> bool:
        return focus is None or who.asked_as in focus

    def pair(w: Started, r: Started) -> bool:
        return focus is None or ((w.asked_as in focus) != (r.asked_as in focus))

    def settle(results: Iterator[Result] | list[Result], who: Started, role: str) -> Iterator[Result]:
        tally.done += 1
        for result in results:
            if plan.only is None or _matches(plan.only, result.case):
                listed = plan.expected_failures.get(who.asked_as)
                found = listed.get((role, result.case)) if listed is not None else None
                yield expected(result, found or listed_failure(xfails, who, role, result.case))

    sized = plan.limits and (plan.only is None or plan.only.startswith("size:")) and any(map(alone, readers))

    def asked_for(case: str) -> bool:
        return plan.only is None or _asks(plan.only, case)

    def counted(cases: Iterable[Any]) -> int:
        return sum(1 for c in cases if asked_for(c.id))

    def own_writes(w: Started) -> int:
        if not alone(w):
            return 0
        golden = [c for c in _cases.write_cases() if c.spec_version == w.version]
        refusals = _built_cases.refusal_cases(w.version, plan.registry)
        return counted([*golden, *_write_unknown.unknown_member_cases(w.version, plan.registry), *refusals])

    def cross_writes(w: Started) -> int:
        paired = sum(pair(w, r) for r in readers)
        return len(payloads) * (1 + paired) if paired else 0

    # one per settle() below
    tally.total = (
        sum(counted(_cases.read_cases()) + 2 + sized for r in filter(alone, readers))
        + sum(
            (plan.only is None or plan.only.startswith("protocol:")) + counted(_digest.digest_cases())
            for who in filter(alone, started)
        )
        + sum(own_writes(w) + cross_writes(w) for w in writers)
    )
    for r in filter(alone, readers):
        for case in _cases.read_cases():
            if plan.only is None or _asks(plan.only, case.id):
                read = functools.partial(_checks.read_vector, r, case, plan.registry)
                yield from settle(judged(read, case.id, case.tier, reader=r.label), r, "reader")
        yield from settle(
            _offered(r, plan, "count", _cases.count_cases(plan.registry), _checks.read_vector), r, "reader"
        )
        yield from settle(_offered(r, plan, "merge", _merge.merge_cases(), _merge.check_merge), r, "reader")
        if sized:  # size:growth is judged on the read at the limit, and allows each case its time
            yield from settle(
                _size_budget.read_sizes(r, plan.timeout_s, plan.registry, plan.only), r, "reader"
            )
    for who in filter(alone, started):  # the digest is neither role's: every participant is asked
        if plan.only is None or plan.only.startswith("protocol:"):
            yield from settle(_probes.probe(who), who, "protocol")
        for dcase in _digest.digest_cases():
            if plan.only is None or _asks(plan.only, dcase.id):
                digest = functools.partial(_digest.check_digest, who, dcase)
                yield from settle(judged(digest, dcase.id, dcase.tier, reader=who.label), who, "digest")
    blobs: dict[str, dict[str, bytes]] = {}
    # What a writer of each spec version is asked to write (or the traceback of the kit's crash
    # preparing it).
    asked: dict[str, dict[str, dict[str, Any] | str]] = {}
    for w in writers:
        blobs[w.label] = {}
        candidate = _candidate(plan, w.version)
        if w.version not in asked:
            asked[w.version] = {
                cid: _prepared(p, w.version, ordinals[cid], plan.registry, candidate)
                for cid, p in payloads.items()
            }
        if alone(w):
            golden = [c for c in _cases.write_cases() if c.spec_version == w.version]
            for golden_case in golden + list(_write_unknown.unknown_member_cases(w.version, plan.registry)):
                if not asked_for(golden_case.id):
                    continue
                write = functools.partial(_checks.write_vector, w, golden_case, plan.registry)
                yield from settle(
                    judged(write, golden_case.id, golden_case.tier, writer=w.label), w, "writer"
                )
            for refusal in _built_cases.refusal_cases(w.version, plan.registry):
                if not asked_for(refusal.id):
                    continue
                # a candidate may allow what a release refuses: it is asked only what it refuses
                check = functools.partial(_refusal, w, refusal, candidate, plan.registry)
                yield from settle(judged(check, refusal.id, RECOMMENDED, writer=w.label), w, "writer")
        if not any(pair(w, r) for r in readers):
            continue
        for cid, payload in asked[w.version].items():
            try:
                if isinstance(payload, str):  # the kit crashed preparing it
                    raise KitCrash(payload)
                results, blob = _checks.write_generated(w, cid, payload, plan.registry)
            except Exception as exc:
                results, blob = [crashed(exc, cid, REQUIRED, writer=w.label)], None
            # A writer outside the focus only serves the testee: its passes are not the run's news.
            yield from settle([r for r in results if alone(w) or r.outcome.bad], w, "writer")
            if blob is not None:
                blobs[w.label][cid] = blob
    # What a reader must decode depends on the two versions only: worked out once per pair.
    wanted: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for w in writers:
        for r in readers:
            if pair(w, r):
                # filled per case: another writer of the version may have written cases this one did not
                expect = wanted.setdefault((w.version, r.version), {})
                for cid, blob in blobs[w.label].items():
                    prepared = asked[w.version][cid]
                    if cid not in expect and not isinstance(prepared, str):
                        expect[cid] = _cases.expected_read(prepared, w.version, r.version, plan.registry)
                    cross = functools.partial(_checks.cross, w, r, cid, expect[cid], blob)
                    yield from settle(judged(cross, cid, REQUIRED, w.label, r.label), r, "reader")


def _offered(
    r: Started, plan: Plan, command: str, cases: Sequence[Any], check: Callable[..., Any]
) -> Iterator[Result]:
    """The cases of an optional command (``count``, ``merge``: IMPLEMENTERS.md) for reader ``r``.
    A testee without the command answers the first ``skipped`` and gets one skipped case,
    named for the command, instead of one per case."""
    answered = False
    for case in (c for c in cases if plan.only is None or _asks(plan.only, c.id)):
        results = judged(functools.partial(check, r, case, plan.registry), case.id, case.tier, reader=r.label)
        if not answered and results and all(x.outcome is Outcome.SKIPPED for x in results):
            yield Result(
                command, RECOMMENDED, Outcome.SKIPPED, None, r.label, f"no {command}: {results[0].message}"
            )
            return
        answered = answered or bool(results)
        yield from results


def _prepared(
    payload: dict[str, Any], version: str, ordinal: int, registry: Registry, candidate: Any
) -> dict[str, Any] | str:
    """A payload as a ``version`` writer is asked to write it: it follows the writer's schema (its
    required and new members carried); a candidate's carries, in each member it changed, a value
    only it allows. The traceback instead when the kit crashes preparing it."""
    try:
        conformed = _cases.conform(payload, version, ordinal, registry)
        return candidate.exercise(conformed) if candidate is not None else conformed
    except Exception:
        return traceback.format_exc()


def _refusal(w: Started, refusal: Any, candidate: Any, registry: Registry) -> Iterable[Result]:
    if candidate is not None and candidate.refusal_rule(refusal.payload) != refusal.rule:
        return ()
    return _checks.refusal(w, refusal, registry)


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
    if version not in plan.registry.candidate_versions():
        return None
    from refitwire.compat._candidate import Candidate  # the kit: only for a candidate

    return Candidate(plan.registry, version)


def stop_all(started: list[Started]) -> None:
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(started)))) as pool:
        list(pool.map(lambda s: s.testee.stop(), started))
