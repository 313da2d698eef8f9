"""Each case kind's part of a run: whom it asks, how many checks it plans, and its checks in order.

The table of kinds (``_kinds.KINDS``) binds one ``ask_*`` and one ``planned_*`` here to each
kind; the run (``_run.run``) iterates the table and settles what each yields. A check is one
:class:`Asked`: the participant it judges, the role its expected failures are listed under, and
its results. A kit crash while judging is an errored case (``judged``) at the tier the kind's
record gives the case (``tier``), never a verdict.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from refitwire.compat._errors import KitCrash
from refitwire.compat._results import RECOMMENDED, Outcome, Result, crashed, judged
from refitwire.compat.cases import _built_cases, _cases, _digest, _merge, _write_unknown
from refitwire.compat.runner import _checks, _probes, _size_budget
from refitwire.compat.runner._plan import CaseId, Plan, Started
from refitwire.wire import Registry


class Tiered(Protocol):
    """What a kind's part of a run reads from the kind's record: the tier rule of its cases."""

    def tier(self, case: Any) -> str: ...


@dataclass(frozen=True)
class Asked:
    """One check of a run: ``who`` it judges, the ``role`` its expected failures are listed under
    (``reader``, ``writer``, ``protocol``, ``digest``), and its results."""

    who: Started
    role: str
    results: Iterable[Result]


class Scope:
    """One run as the kinds see it: the plan, who started, the ``--case`` asked (parsed once), and
    the generated payloads, drawn once and only when a generated case is asked (seconds of Hypothesis)."""

    def __init__(self, plan: Plan, started: list[Started], only: CaseId | None) -> None:
        self.plan, self.started, self.only = plan, started, only
        self.registry: Registry = plan.registry
        self.writers = [s for s in started if "writer" in s.identity.roles]
        self.readers = [s for s in started if "reader" in s.identity.roles]
        self.focus = plan.focused
        self._candidates: dict[str, Any] = {}

    def wants(self, kind: str) -> bool:
        """Whether the run asks cases of ``kind`` (every kind, or the kind of ``--case``)."""
        return self.only is None or self.only.kind == kind

    def asked_for(self, case: str) -> bool:
        """Whether the run asks the (bare) case ``case``."""
        return self.only is None or self.only.bare == case

    def alone(self, who: Started) -> bool:
        return self.focus is None or who.asked_as in self.focus

    def pair(self, w: Started, r: Started) -> bool:
        return self.focus is None or ((w.asked_as in self.focus) != (r.asked_as in self.focus))

    @functools.cached_property
    def drawn(self) -> dict[str, dict[str, Any]]:
        """Every generated payload of the seed, by case ID (before ``--case`` narrows them: reruns agree)."""
        return _cases.generated_payloads(self.plan.seed, self.plan.examples, self.registry)

    @functools.cached_property
    def payloads(self) -> dict[str, dict[str, Any]]:
        """The generated payloads the run writes: every one, or the one ``--case`` asks."""
        if not self.wants("gen"):
            return {}
        return {cid: p for cid, p in self.drawn.items() if self.asked_for(cid)}

    @functools.cached_property
    def ordinals(self) -> dict[str, int]:
        return {cid: n for n, cid in enumerate(self.drawn)}

    def counted(self, cases: Iterable[Any]) -> int:
        return sum(1 for c in cases if self.asked_for(c.id))

    def candidate(self, version: str) -> Any:
        """The candidate of ``version`` (None: a released version), made once per run."""
        if version not in self.registry.candidate_versions():
            return None
        if version not in self._candidates:
            from refitwire.compat.runner._candidate import Candidate  # the kit: only for a candidate

            self._candidates[version] = Candidate(self.registry, version)
        return self._candidates[version]


def golden_writes(version: str, registry: Registry) -> tuple[_cases.WriteCase, ...]:
    """The golden writes a ``version`` writer is asked: each vector's, and again with members it does not know."""
    golden = [c for c in _cases.write_cases() if c.spec_version == version]
    return (*golden, *_write_unknown.unknown_member_cases(version, registry))


# -- the kinds asked of one reader ------------------------------------------------------------


def ask_read(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for r in filter(s.alone, s.readers):
        for case in _cases.read_cases():
            if s.asked_for(case.id):
                read = functools.partial(_checks.read_vector, r, case, s.registry)
                yield Asked(r, "reader", judged(read, case.id, kind.tier(case), reader=r.label))


def planned_read(s: Scope) -> int:
    return sum(s.counted(_cases.read_cases()) for _ in filter(s.alone, s.readers))


def ask_count(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for r in filter(s.alone, s.readers) if s.wants("count") else ():
        yield Asked(
            r, "reader", _offered(r, s, "count", _cases.count_cases(s.registry), _checks.read_vector, kind)
        )


def ask_merge(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for r in filter(s.alone, s.readers) if s.wants("merge") else ():
        yield Asked(r, "reader", _offered(r, s, "merge", _merge.merge_cases(), _merge.check_merge, kind))


def planned_offered(kind: str) -> Callable[[Scope], int]:
    """One check per reader for an optional command's cases (``count``, ``merge``)."""
    return lambda s: sum(1 for _ in filter(s.alone, s.readers)) if s.wants(kind) else 0


def _offered(
    r: Started, s: Scope, command: str, cases: Sequence[Any], check: Callable[..., Any], kind: Tiered
) -> Iterator[Result]:
    """The cases of an optional command (``count``, ``merge``: IMPLEMENTERS.md) for reader ``r``.
    A testee without the command answers the first ``skipped`` and gets one skipped case,
    named for the command, instead of one per case."""
    answered = False
    for case in (c for c in cases if s.asked_for(c.id)):
        results = judged(
            functools.partial(check, r, case, s.registry), case.id, kind.tier(case), reader=r.label
        )
        if not answered and results and all(x.outcome is Outcome.SKIPPED for x in results):
            yield Result(
                command, RECOMMENDED, Outcome.SKIPPED, None, r.label, f"no {command}: {results[0].message}"
            )
            return
        answered = answered or bool(results)
        yield from results


def _sized(s: Scope) -> bool:
    return s.plan.limits and s.wants("size") and any(map(s.alone, s.readers))


def ask_size(s: Scope, kind: Tiered) -> Iterator[Asked]:
    """size:growth is judged on the read at the limit, and allows each case its time."""
    only = s.only.bare if s.only is not None else None
    for r in filter(s.alone, s.readers) if _sized(s) else ():
        yield Asked(r, "reader", _size_budget.read_sizes(r, s.plan.timeout_s, s.registry, only))


def planned_size(s: Scope) -> int:
    return sum(1 for _ in filter(s.alone, s.readers)) if _sized(s) else 0


# -- the kinds asked of every participant (neither role's) -------------------------------------


def ask_protocol(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for who in filter(s.alone, s.started) if s.wants("protocol") else ():
        yield Asked(who, "protocol", _probes.probe(who))


def planned_protocol(s: Scope) -> int:
    return sum(1 for _ in filter(s.alone, s.started)) if s.wants("protocol") else 0


def ask_digest(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for who in filter(s.alone, s.started):
        for case in _digest.digest_cases():
            if s.asked_for(case.id):
                digest = functools.partial(_digest.check_digest, who, case)
                yield Asked(who, "digest", judged(digest, case.id, kind.tier(case), reader=who.label))


def planned_digest(s: Scope) -> int:
    return sum(s.counted(_digest.digest_cases()) for _ in filter(s.alone, s.started))


# -- the kinds asked of one writer --------------------------------------------------------------


def ask_write(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for w in filter(s.alone, s.writers):
        for case in golden_writes(w.version, s.registry):
            if s.asked_for(case.id):
                write = functools.partial(_checks.write_vector, w, case, s.registry)
                yield Asked(w, "writer", judged(write, case.id, kind.tier(case), writer=w.label))


def planned_write(s: Scope) -> int:
    return sum(s.counted(golden_writes(w.version, s.registry)) for w in filter(s.alone, s.writers))


def ask_refuse(s: Scope, kind: Tiered) -> Iterator[Asked]:
    for w in filter(s.alone, s.writers):
        candidate = s.candidate(w.version)
        for refusal in _built_cases.refusal_cases(w.version, s.registry):
            if s.asked_for(refusal.id):
                # a candidate may allow what a release refuses: it is asked only what it refuses
                check = functools.partial(_refusal, w, refusal, candidate, s.registry)
                yield Asked(w, "writer", judged(check, refusal.id, kind.tier(refusal), writer=w.label))


def planned_refuse(s: Scope) -> int:
    return sum(
        s.counted(_built_cases.refusal_cases(w.version, s.registry)) for w in filter(s.alone, s.writers)
    )


def _refusal(w: Started, refusal: Any, candidate: Any, registry: Registry) -> Iterable[Result]:
    if candidate is not None and candidate.refusal_rule(refusal.payload) != refusal.rule:
        return ()
    return _checks.refusal(w, refusal, registry)


# -- the generated cases: every writer writes each payload once, every paired reader reads it ---


def ask_generated(s: Scope, kind: Tiered) -> Iterator[Asked]:
    if not s.payloads:
        return
    blobs: dict[str, dict[str, bytes]] = {}
    # What a writer of each spec version is asked to write (or the traceback of the kit's crash
    # preparing it).
    asked: dict[str, dict[str, dict[str, Any] | str]] = {}
    for w in s.writers:
        blobs[w.label] = {}
        if not any(s.pair(w, r) for r in s.readers):
            continue
        if w.version not in asked:
            candidate = s.candidate(w.version)
            asked[w.version] = {
                cid: _prepared(p, w.version, s.ordinals[cid], s.registry, candidate)
                for cid, p in s.payloads.items()
            }
        for cid, payload in asked[w.version].items():
            try:
                if isinstance(payload, str):  # the kit crashed preparing it
                    raise KitCrash(payload)
                results, blob = _checks.write_generated(w, cid, payload, s.registry)
            except Exception as exc:
                results, blob = [crashed(exc, cid, kind.tier(cid), writer=w.label)], None
            # A writer outside the focus only serves the testee: its passes are not the run's news.
            yield Asked(w, "writer", [r for r in results if s.alone(w) or r.outcome.bad])
            if blob is not None:
                blobs[w.label][cid] = blob
    # What a reader must decode depends on the two versions only: worked out once per pair.
    wanted: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for w in s.writers:
        for r in s.readers:
            if s.pair(w, r):
                # filled per case: another writer of the version may have written cases this one did not
                expect = wanted.setdefault((w.version, r.version), {})
                for cid, blob in blobs[w.label].items():
                    prepared = asked[w.version][cid]
                    if cid not in expect and not isinstance(prepared, str):
                        expect[cid] = _cases.expected_read(prepared, w.version, r.version, s.registry)
                    cross = functools.partial(_checks.cross, w, r, cid, expect[cid], blob)
                    yield Asked(r, "reader", judged(cross, cid, kind.tier(cid), w.label, r.label))


def planned_generated(s: Scope) -> int:
    def cross_writes(w: Started) -> int:
        paired = sum(s.pair(w, r) for r in s.readers)
        return len(s.payloads) * (1 + paired) if paired else 0

    return sum(cross_writes(w) for w in s.writers)


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
