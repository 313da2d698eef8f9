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
from dataclasses import dataclass

from refitwire.compat._errors import BaseMismatch
from refitwire.compat._results import REQUIRED, Outcome, Result
from refitwire.compat.report._report import Report

#: What the participant under test is called in a key, whatever its label.
UNDER_TEST = "(under test)"

_BAD = (Outcome.FAILED, Outcome.ERRORED, Outcome.XPASSED)

Key = tuple[str, str, str, str]


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
    tested = under_test(report)

    def place(label: str | None) -> str:
        return UNDER_TEST if label in tested else label or ""

    return (result.case, result.tier, place(result.writer), place(result.reader))


def under_test(report: Report) -> frozenset[str]:
    """The labels of the participants under test in ``report``: its focus and its source trees."""
    focus = report.header.raw.get("focus") or []
    sources = [p["label"] for p in report.header.participants if p.get("kind") == "upstream-source"]
    return frozenset([*focus, *sources])


@dataclass(frozen=True)
class Group:
    """Failures with one cause: ``kind`` is ``new``, ``changed`` (failing in the base for
    another reason, ``was``) or ``fixed``; every cell and case of the group is kept (a renderer
    chooses what to show, never a cut string)."""

    kind: str
    tier: str
    cause: str
    cells: tuple[tuple[str, str], ...]  # (writer, reader), "" where the case has no such side
    cases: tuple[str, ...]
    was: str = ""

    @property
    def count(self) -> int:
        return len(self.cases)

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "tier": self.tier, "cause": self.cause, "was": self.was or None,
                "count": self.count, "cells": [list(c) for c in self.cells], "cases": list(self.cases)}  # fmt: skip


def cause(result: Result) -> str:
    """What a failure is grouped by: its symptom, else its outcome (never the free message)."""
    return result.symptom or result.outcome.value


def grouped(delta: Delta) -> list[Group]:
    """The delta's failures grouped by kind, tier and cause, Required first, largest first."""
    found: dict[tuple[str, str, str], list[Result]] = collections.defaultdict(list)
    before: dict[tuple[str, str, str], dict[str, None]] = collections.defaultdict(dict)
    for r in (*delta.new_required, *delta.new_recommended):
        found[("new", r.tier, cause(r))].append(r)
    for was, now in delta.changed:  # one group per cause now, whatever each case failed of before
        found[("changed", now.tier, cause(now))].append(now)
        before[("changed", now.tier, cause(now))][cause(was)] = None
    for r in delta.fixed:
        found[("fixed", r.tier, cause(r))].append(r)
    order = {"new": 0, "changed": 1, "fixed": 2}
    groups = [
        Group(kind, tier, why, tuple(dict.fromkeys((r.writer or "", r.reader or "") for r in members)),
              tuple(r.case for r in members), _was(list(before[(kind, tier, why)])))
        for (kind, tier, why), members in found.items()
    ]  # fmt: skip
    return sorted(groups, key=lambda g: (order[g.kind], g.tier != REQUIRED, -g.count, g.cause))


def _was(causes: list[str]) -> str:
    if len(causes) <= 1:
        return "".join(causes)
    return f"{causes[0]}, and {len(causes) - 1} other cause(s)"


def cell_text(cell: tuple[str, str]) -> str:
    """``writer -> reader``, or the one side a case has (a refusal, a vector read)."""
    return " -> ".join(x for x in cell if x) or "(vectors)"


def group_line(group: Group, shown_cells: int = 3) -> str:
    """One line for a group: tier, count, cause, where, and an example case to rerun (whole)."""
    cells = ", ".join(cell_text(c) for c in group.cells[:shown_cells])
    if len(group.cells) > shown_cells:
        cells += f" and {len(group.cells) - shown_cells} more cell(s)"
    was = f" (in the base: {group.was})" if group.was else ""
    return f"{group.tier} x{group.count}: {group.cause}{was} in {cells}; e.g. case {group.cases[0]}"


def render(delta: Delta, base_name: str, enforce_recommended: bool = False, shown: int = 8) -> list[str]:
    """The verdict against the base, failures grouped by cause with a count and a case to rerun;
    the base's own failures (same case, cell and cause) are counted once and never listed."""
    groups = grouped(delta)
    lines = [f"AGAINST THE BASE REPORT {base_name}:"]
    sections = (
        ("new", lambda g: g.tier == REQUIRED, "new Required failures (fail the run)", len(delta.new_required)),
        ("new", lambda g: g.tier != REQUIRED,
         "new Recommended failures" + (" (fail the run)" if enforce_recommended else " (listed)"),
         len(delta.new_recommended)),
        ("changed", lambda g: True, "still failing, for another reason than in the base", len(delta.changed)),
    )  # fmt: skip
    for kind, wanted, title, count in sections:
        lines.append(f"  {title}: {count}")
        lines += _listed([g for g in groups if g.kind == kind and wanted(g)], shown)
    tiers = collections.Counter(r.tier for r in delta.known)
    known = ", ".join(f"{n} {tier}" for tier, n in sorted(tiers.items())) or "none"
    lines.append(f"  failing in the base too, for the same reason (not counted, not listed again): {known}")
    lines.append(f"  fixed since the base: {len(delta.fixed)}")
    lines += _listed([g for g in groups if g.kind == "fixed"], shown)
    verdict = "PASSED" if delta.ok(enforce_recommended) else "FAILED"
    lines.append(
        f"AGAINST BASE {verdict}: {len(delta.new_required)} new required, "
        f"{len(delta.new_recommended)} new recommended, {len(delta.changed)} failing for another reason, "
        f"{len(delta.known)} already in the base, {len(delta.fixed)} fixed"
    )
    return lines


def _listed(groups: list[Group], shown: int) -> list[str]:
    lines = [f"    {group_line(g)}" for g in groups[:shown]]
    if len(groups) > shown:
        rest = sum(g.count for g in groups[shown:])
        lines.append(f"    ... and {len(groups) - shown} more cause(s), {rest} case(s) (see the JSON report)")
    return lines


def without_known(report: Report, delta: Delta) -> Report:
    """``report`` without the failures the base has too for the same reason (its footer's counts
    unchanged): what the run's own listing shows when it is judged against a base."""
    kept = tuple(r for r in report.results if not (r.outcome in _BAD and delta.is_known(r, report)))
    return dataclasses.replace(report, results=kept)
