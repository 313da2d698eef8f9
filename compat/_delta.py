"""Only what a change adds: one report judged against the report of its base.

A pull request to an implementation is run twice with the same seed and examples, once at
its base and once at its head. A failure is keyed by its case, tier and cell (never by its
symptom text), with the participant under test (a source tree, or the conformance testee)
named by its place rather than its label (the label holds the commit, which differs). Then:

* a failure the base did not have is **new**: a new Required failure fails the verdict, a
  new Recommended one is listed (and fails it only when Recommended is enforced);
* a failure the base already had, for the same reason, is counted apart and not listed
  again (the base report lists it);
* a failure the base already had **for another reason** is its own line, "still failing,
  now because ...": it counts as new (a changed failure of a Required case fails the verdict);
* a failure of the base that is gone is listed as fixed.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from refitwire.compat._report import Report
from refitwire.compat._results import REQUIRED, Outcome, Result

#: What the participant under test is called in a key, whatever its label.
UNDER_TEST = "(under test)"

_BAD = (Outcome.FAILED, Outcome.ERRORED, Outcome.XPASSED)

Key = tuple[str, str, str, str]


class BaseMismatch(ValueError):
    """The two reports cannot be compared (another seed or example count, an incomplete base)."""


@dataclass(frozen=True)
class Delta:
    new_required: tuple[Result, ...]
    new_recommended: tuple[Result, ...]
    known: tuple[Result, ...]
    fixed: tuple[Result, ...]
    changed: tuple[tuple[Result, Result], ...] = ()  # (in the base, now): failing for another reason

    def ok(self, enforce_recommended: bool = False) -> bool:
        changed_required = any(now.tier == REQUIRED for _, now in self.changed)
        changed_recommended = any(now.tier != REQUIRED for _, now in self.changed)
        return not (self.new_required or changed_required) and not (
            enforce_recommended and (self.new_recommended or changed_recommended)
        )

    def is_known(self, result: Result, report: Report) -> bool:
        """Whether ``result`` (of ``report``) fails in the base too, for the same reason."""
        return (_key(result, report), result.symptom) in self._known_keys

    @property
    def _known_keys(self) -> frozenset[tuple[Key, str]]:
        return frozenset((k, r.symptom) for k, r in self._known_by_key)

    _known_by_key: tuple[tuple[Key, Result], ...] = ()


def comparable(report: Report, base: Report) -> None:
    """BaseMismatch unless ``report`` and ``base`` asked the same questions."""
    if base.footer is None:
        raise BaseMismatch("the base report has no footer (its run did not finish)")
    for what in ("seed", "examples"):
        mine, theirs = getattr(report.header, what), getattr(base.header, what)
        if mine != theirs:
            raise BaseMismatch(
                f"the base report has {what} {theirs}, this run {mine}: run with --{what} {theirs}"
            )


def compare(report: Report, base: Report) -> Delta:
    """What ``report`` fails that ``base`` did not, what both fail, and what only ``base`` failed."""
    comparable(report, base)
    before = {_key(r, base): r for r in base.results if r.outcome in _BAD}
    now = {_key(r, report): r for r in report.results if r.outcome in _BAD}
    new = [r for k, r in now.items() if k not in before]
    same = [(k, r) for k, r in now.items() if k in before and before[k].symptom == r.symptom]
    return Delta(
        tuple(r for r in new if r.tier == REQUIRED or r.outcome == Outcome.XPASSED),
        tuple(r for r in new if r.tier != REQUIRED and r.outcome != Outcome.XPASSED),
        tuple(r for _, r in same),
        tuple(r for k, r in before.items() if k not in now),
        tuple((before[k], r) for k, r in now.items() if k in before and before[k].symptom != r.symptom),
        tuple(same),
    )


def _key(result: Result, report: Report) -> Key:
    tested = _under_test(report)

    def place(label: str | None) -> str:
        return UNDER_TEST if label in tested else label or ""

    return (result.case, result.tier, place(result.writer), place(result.reader))


def _under_test(report: Report) -> frozenset[str]:
    focus = report.header.raw.get("focus") or []
    sources = [p["label"] for p in report.header.participants if p.get("kind") == "upstream-source"]
    return frozenset([*focus, *sources])


def render(delta: Delta, base_name: str, enforce_recommended: bool = False) -> list[str]:
    """The verdict against the base, failures grouped by symptom with a count and an example."""
    lines = [f"AGAINST THE BASE REPORT {base_name}:"]
    for title, results in (
        ("new Required failures (fail the run)", delta.new_required),
        ("new Recommended failures" + (" (fail the run)" if enforce_recommended else " (listed)"),
         delta.new_recommended),
    ):  # fmt: skip
        lines.append(f"  {title}: {len(results)}")
        lines += [f"    {line}" for line in _grouped(results)]
    lines.append(f"  still failing, for another reason than in the base: {len(delta.changed)}")
    for was, now in delta.changed[:20]:
        cell = " -> ".join(x for x in (now.writer, now.reader) if x)
        lines.append(f"    {now.tier} {now.case} [{cell}]: still failing, now because {now.symptom or now.message[:120]}"
                     f" (in the base: {was.symptom or was.message[:120]})")  # fmt: skip
    if len(delta.changed) > 20:
        lines.append(f"    ... and {len(delta.changed) - 20} more")
    tiers = collections.Counter(r.tier for r in delta.known)
    known = ", ".join(f"{n} {tier}" for tier, n in sorted(tiers.items())) or "none"
    lines.append(f"  failing in the base too, for the same reason (not counted, not listed again): {known}")
    lines.append(f"  fixed since the base: {len(delta.fixed)}")
    lines += [f"    {line}" for line in _grouped(delta.fixed)]
    verdict = "PASSED" if delta.ok(enforce_recommended) else "FAILED"
    lines.append(
        f"AGAINST BASE {verdict}: {len(delta.new_required)} new required, "
        f"{len(delta.new_recommended)} new recommended, {len(delta.changed)} failing for another reason, "
        f"{len(delta.known)} already in the base, {len(delta.fixed)} fixed"
    )
    return lines


def without_known(report: Report, delta: Delta) -> Report:
    """``report`` without the failures the base has too for the same reason (its footer's counts
    unchanged): what the run's own listing shows when it is judged against a base."""
    kept = tuple(r for r in report.results if not (r.outcome in _BAD and delta.is_known(r, report)))
    return dataclasses.replace(report, results=kept)


def _grouped(results: Iterable[Result], shown: int = 8) -> list[str]:
    groups: dict[tuple[str, str], list[Result]] = collections.defaultdict(list)
    for r in results:
        groups[(r.tier, r.symptom or r.outcome.value)].append(r)
    out = []
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    for (tier, symptom), members in ranked[:shown]:
        first = members[0]
        cell = " -> ".join(x for x in (first.writer, first.reader) if x)
        out.append(f"{tier} x{len(members)}: {symptom} (e.g. {first.case} [{cell}]: {first.message[:160]})")
    if len(ranked) > shown:
        out.append(f"... and {len(ranked) - shown} more symptom(s)")
    return out
