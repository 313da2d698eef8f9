"""Renderers: each replays a :class:`Report` as a table, failures grouped by symptom, JUnit or JSON.

``text`` is a compact grid that fits a 100-column terminal (one short code per cell, the
participants numbered below it); ``wide`` is the full table, where a cell shows expected
failures apart (``rec 0/40, 40 expected``); the summary counts successes, skips, expected
and unexpected failures, as the protobuf conformance runner does. The HTML page is
``_html``'s.
"""

from __future__ import annotations

import collections
import json
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from refitwire.compat._results import COUNTED, RECOMMENDED, REQUIRED, Outcome, Result, listing
from refitwire.compat._results import blamed as blamed  # the page and the gate ask the report's renderer
from refitwire.compat.report import _junit
from refitwire.compat.report._report import Header, Report
from refitwire.compat.runner import _kinds

VECTORS = "(vectors)"
EXAMPLES = 3  # example case IDs shown per failure group


def render(report: Report, fmt: str, *, enforce_recommended: bool = False) -> str:
    if fmt == "json":
        foot = [json.dumps(report.footer.raw)] if report.footer else []
        return "\n".join([json.dumps(report.header.raw), *(r.line for r in report.results), *foot])
    if fmt == "junit":
        return junit(report, enforce_recommended=enforce_recommended)
    grid = compact(report) if fmt == "text" else table(report.results, markdown=fmt == "markdown")
    lead = first_lines(report, enforce_recommended)
    return "\n".join([*lead, "", *grid, "", *summary(report, enforce_recommended, narrow=fmt == "text")])


# -- what to fix first -----------------------------------------------------------------------


def first_fix(report: Report, enforce_recommended: bool = False) -> dict[str, Any] | None:
    """The failure group to fix first: the largest Required one (or the first whose failures count
    against the run: an unexpected pass, an enforced Recommended failure), with one case of it, its
    cell and the command that reruns that case alone; None when nothing counts against the run."""
    for (tier, outcome, symptom, side), members in groups(report.results):
        if unexpected(members[0], enforce_recommended):
            return _group_fact(report, tier, outcome, symptom, side, members)
    return None


def first_improvement(report: Report) -> dict[str, Any] | None:
    """In a run with nothing to fix, the largest group of failures that are tolerated (Recommended,
    not enforced), as :func:`first_fix` gives it; None when there are none."""
    for (tier, outcome, symptom, side), members in groups(report.results):
        return _group_fact(report, tier, outcome, symptom, side, members)
    return None


def _group_fact(
    report: Report, tier: str, outcome: str, symptom: str, side: str, members: list[Result]
) -> dict[str, Any]:
    first = members[0]
    return {
        "tier": tier, "outcome": outcome, "symptom": symptom, "side": side, "fault": first.fault,
        "count": len(members), "case": first.case, "message": first.message,
        "cell": [first.writer or VECTORS, first.reader or VECTORS],
        "rerun": rerun_command(report.header, first.case),
    }  # fmt: skip


def first_lines(report: Report, enforce_recommended: bool = False) -> list[str]:
    """The report's opening: the first thing to fix and how to rerun it, or that nothing is to fix."""
    fix = first_fix(report, enforce_recommended)
    if report.footer is None:
        head = ["INCOMPLETE: the report has no footer (the run stopped before it finished); not a pass"]
        return head + (_fix_lines("FIRST TO FIX", fix) if fix else [])
    if fix is not None:
        return _fix_lines("FIRST TO FIX", fix)
    better = first_improvement(report)
    if better is None:
        return ["NOTHING TO FIX: every case passed or failed as listed"]
    return ["NOTHING TO FIX: no Required case failed; Recommended failures are not enforced"] + _fix_lines(
        "FIRST TO IMPROVE", better
    )


def fix_headline(fix: dict[str, Any]) -> str:
    """``value differs at /x (Required, 59 failing; testee: t at fault)``."""
    where = f"{fix['side']} at fault" if fix["fault"] else f"in {' -> '.join(dict.fromkeys(fix['cell']))}"
    tier = fix["tier"].capitalize()
    state = {"xpassed": "passing though listed as expected", "errored": "errored"}.get(
        fix["outcome"], "failing"
    )
    return f"{fix['symptom']} ({tier}, {fix['count']} {state}; {where})"


def _fix_lines(title: str, fix: dict[str, Any]) -> list[str]:
    return [
        f"{title}: {fix_headline(fix)}",
        f"    e.g. {fix['case']}: {fix['message']}",
        f"    rerun it alone: {fix['rerun']}",
    ]


def unexpected(result: Result, enforce_recommended: bool = False) -> bool:
    """A result that counts against the run (Recommended ones only when enforced)."""
    if result.outcome == Outcome.XPASSED:
        return True
    return result.outcome in (Outcome.FAILED, Outcome.ERRORED) and (
        result.tier == REQUIRED or enforce_recommended
    )


# -- the matrix ------------------------------------------------------------------------------


def _cells(results: Iterable[Result]) -> dict[tuple[str, str], collections.Counter[str]]:
    cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in results:
        cells[(r.writer or VECTORS, r.reader or VECTORS)][f"{r.tier}.{r.outcome.value}"] += 1
    return cells


def cell_text(c: collections.Counter[str]) -> str:
    """``req 206 passed of 206; rec 1 passed of 56, 55 expected``: passes and the cases they are of,
    never a bare ``1/56`` (which reads as failures as easily as passes)."""
    parts = []
    for tier, short in ((REQUIRED, "req"), (RECOMMENDED, "rec")):
        passed, expected = c[f"{tier}.passed"], c[f"{tier}.xfailed"]
        total = passed + expected + sum(c[f"{tier}.{o}"] for o in ("failed", "errored", "xpassed"))
        parts.append(f"{short} {passed} passed of {total}" + (f", {expected} expected" if expected else ""))
    mark = (
        "FAIL "
        if c["required.failed"] + c["required.errored"] + c["required.xpassed"] + c["recommended.xpassed"]
        else ""
    )
    return mark + "; ".join(parts)


def table(results: Sequence[Result], markdown: bool) -> list[str]:
    cells = _cells(results)
    writers = sorted({w for w, _ in cells}, key=lambda x: (x == VECTORS, x))
    readers = sorted({r for _, r in cells}, key=lambda x: (x == VECTORS, x))
    rows = [["writer \\ reader", *readers]]
    rows += [[w, *(cell_text(cells[(w, r)]) if (w, r) in cells else "-" for r in readers)] for w in writers]
    if markdown:
        out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        return out + ["| " + " | ".join(row) + " |" for row in rows[1:]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def standing(c: collections.Counter[str]) -> str:
    """A cell's worst outcome: "required" (a Required failure or an unexpected pass), "errored",
    "recommended", "expected" (only listed failures), "passed" or "skipped" (nothing ran)."""
    if c["required.failed"] + c["required.xpassed"] + c["recommended.xpassed"]:
        return "required"
    if c["required.errored"] + c["recommended.errored"]:
        return "errored"
    if c["recommended.failed"]:
        return "recommended"
    if c["required.xfailed"] + c["recommended.xfailed"]:
        return "expected"
    return "passed" if c["required.passed"] + c["recommended.passed"] else "skipped"


_CODE = {"required": "R", "errored": "E", "recommended": "r", "expected": "x"}
COMPACT_LABEL = 30  # characters of a participant's label in the compact grid


def cell_code(c: collections.Counter[str]) -> str:
    """A cell in four characters: ``ok``, or the worst outcome's letter and its count."""
    worst = standing(c)
    if worst in ("passed", "skipped"):
        return "ok" if worst == "passed" else "--"
    count = {
        "required": c["required.failed"] + c["required.xpassed"] + c["recommended.xpassed"],
        "errored": c["required.errored"] + c["recommended.errored"],
        "recommended": c["recommended.failed"],
        "expected": c["required.xfailed"] + c["recommended.xfailed"],
    }[worst]
    return _CODE[worst] + (str(count) if count < 1000 else f"{count // 1000}k")


def compact(report: Report) -> list[str]:
    """The grid for a narrow terminal: participants numbered, a short code per cell, a legend."""
    cells = _cells(report.results)
    writers = sorted({w for w, _ in cells}, key=lambda x: (x == VECTORS, x))
    readers = sorted({r for _, r in cells}, key=lambda x: (x == VECTORS, x))
    everyone = sorted(set(writers) | set(readers), key=lambda x: (x == VECTORS, x))
    number = {label: ("V" if label == VECTORS else str(i)) for i, label in enumerate(everyone, 1)}
    width = max([len(cell_code(c)) for c in cells.values()] + [2]) + 1
    out = ["writer \\ reader".ljust(COMPACT_LABEL + 4) + "".join(number[r].rjust(width) for r in readers)]
    for w in writers:
        name = w if len(w) <= COMPACT_LABEL else w[: COMPACT_LABEL - 1] + "~"
        row = f"{number[w]:>2} {name:<{COMPACT_LABEL}} "
        out.append(
            row
            + "".join((cell_code(cells[(w, r)]) if (w, r) in cells else "-").rjust(width) for r in readers)
        )
    out.append("codes: ok all passed, R Required failures or unexpected passes, E errored,")
    out.append(
        "       r Recommended failures, x expected failures only, -- skipped (--format wide: all counts)"
    )
    who = {p["label"]: p for p in report.header.participants}
    for label in everyone:
        p = who.get(label)
        about = f" = {p['name']} {p['version']} ({p['language']}, spec {p['spec_version']})" if p else ""
        out.append(f"{number[label]:>2} {label}{about}")
    return out


def rerun_command(head: Header, case: str) -> str:
    """The command that reruns ``case`` alone with every answer in full (``--case``), seed included."""
    focus = head.raw.get("focus") or ()
    by_label = {p["label"]: p for p in head.participants}
    common = f"--seed {head.seed} --examples {head.examples} --case {shlex.quote(case)}"
    testees = [by_label[label] for label in focus if label in by_label]
    if testees:
        command = shlex.join(testees[0]["command"])
        return f"refitwire conformance --testee {shlex.quote(command)} {common}"
    extra = [
        f"--testee {shlex.quote(shlex.join(p['command']))}"
        for p in head.participants
        if p["kind"] == "third-party"
    ]
    if head.upstream.startswith("left out"):
        extra.append("--no-upstream")
    extra += _kinds.rerun_flags(case)  # what a matrix rerun of the case's kind adds (the size limit)
    return " ".join(["refitwire matrix", *extra, common])


# -- failures grouped by symptom -------------------------------------------------------------


def groups(results: Iterable[Result]) -> list[tuple[tuple[str, str, str, str], list[Result]]]:
    """Failures keyed by (tier, outcome, symptom, side at fault), Required first, largest first."""
    found: dict[tuple[str, str, str, str], list[Result]] = collections.defaultdict(list)
    for r in results:
        key = listing(r) if r.outcome.bad else None
        if key is not None:
            found[key].append(r)
    return sorted(found.items(), key=lambda kv: (kv[0][0] != REQUIRED, -len(kv[1]), kv[0]))


def failure_lines(results: Sequence[Result], limit: int = 30) -> list[str]:
    out = []
    grouped = groups(results)
    for (tier, outcome, symptom, side), members in grouped[:limit]:
        first = members[0]
        cell = " -> ".join(dict.fromkeys(x for x in (first.writer, first.reader) if x))  # one testee once
        fault = f"{side} at fault" if first.fault else f"in {cell}"
        out.append(f"{outcome.upper()} {tier} x{len(members)}: {symptom} ({fault})")
        out.append(f"    e.g. {first.case} [{cell}]: {first.message}")
        one_case = len({m.case for m in members}) == 1
        more = [
            f"[{' -> '.join(x for x in (m.writer, m.reader) if x)}]" if one_case else m.case
            for m in members[1:EXAMPLES]
        ]
        if more:
            out.append(
                f"    also {', '.join(more)}"
                + (f" and {len(members) - EXAMPLES} more" if len(members) > EXAMPLES else "")
            )
    if len(grouped) > limit:
        out.append(f"... and {len(grouped) - limit} more groups (see --format json)")
    return out


def summary(report: Report, enforce_recommended: bool = False, narrow: bool = False) -> list[str]:
    head, results, foot = report.header, report.results, report.footer
    out = [
        f"seed {head.seed}, {head.examples} generated payloads, {len(results)} cases"
        + (f" in {foot.seconds} s" if foot else "")
    ]
    focused = bool(head.raw.get("focus"))
    out.append(
        f"ran: {len(head.participants)} participants (numbered above)"
        if narrow and not focused
        else ran(head)
    )
    out.append(f"released upstream readers and writers: {head.upstream}")
    out += [f"not run: {note}" for note in head.unavailable]
    out += failure_lines(results)
    by = collections.Counter(r.outcome for r in results)
    bad = sum(1 for r in results if unexpected(r, enforce_recommended))
    tolerated = sum(1 for r in results if r.outcome.bad and not unexpected(r, enforce_recommended))
    for symptom, (_, said) in COUNTED.items():
        number = sum(1 for r in results if r.symptom == symptom)
        if number:
            out.append(f"{number} {said}")
    if foot is None:
        out.append("INCOMPLETE: the report has no footer (the run stopped before it finished)")
    verdict = "PASSED" if foot is not None and bad == 0 else "FAILED"
    title = "CONFORMANCE" if head.raw.get("focus") else "MATRIX"
    out.append(
        f"{title} {verdict}: {by[Outcome.PASSED]} successes, {by[Outcome.SKIPPED]} skipped, "
        f"{by[Outcome.XFAILED]} expected failures, {bad} unexpected failures"
        + (f" ({tolerated} recommended failures not enforced)" if tolerated else "")
    )
    return out


def ran(head: Header) -> str:
    """Who ran, as each participant named itself in its handshake (a verdict says whose it is)."""
    focus = set(head.raw.get("focus") or ())

    def who(p: dict[str, Any]) -> str:
        return f"{p['label']} = {p['name']} {p['version']} ({p['language']}, spec {p['spec_version']})"

    named = [who(p) for p in head.participants if not focus or p["label"] in focus]
    started = {p["label"] for p in head.participants}
    named += [f"{label} (did not start)" for label in sorted(focus - started)]
    if not focus:
        return f"ran: {len(named)} participants: " + ", ".join(named)
    others = len(started - focus)
    return "ran: " + ", ".join(named) + f"; against {others} other participant{'s' * (others != 1)}"


# -- JUnit -----------------------------------------------------------------------------------


def junit(report: Report, *, enforce_recommended: bool = False) -> str:
    """One suite per cell. A Recommended failure is a skip unless enforced, so the XML agrees
    with the exit status; an expected failure is a skip that gives its reason."""
    suites: dict[str, list[_junit.Case]] = collections.defaultdict(list)
    for r in report.results:
        name = f"{r.writer or 'vectors'} -> {r.reader or 'vectors'}"
        suites[name].append(_junit.Case(r.case, r.tier, *_status(r, enforce_recommended), detail=r.message))
    seconds = report.footer.seconds if report.footer else None
    return _junit.render([_junit.Suite(n, c) for n, c in suites.items()], name="refitwire", seconds=seconds)


def _status(r: Result, enforce_recommended: bool) -> tuple[_junit.Status, str]:
    if r.outcome == Outcome.XFAILED:
        return "skipped", f"expected failure: {r.expected_failure}"
    if r.outcome == Outcome.XPASSED:
        return "failed", r.message
    if r.outcome in (Outcome.FAILED, Outcome.ERRORED) and r.tier == RECOMMENDED and not enforce_recommended:
        return "skipped", f"recommended, not enforced: {r.message}"
    status: _junit.Status = {
        Outcome.FAILED: "failed",
        Outcome.ERRORED: "errored",
        Outcome.SKIPPED: "skipped",
    }.get(r.outcome, "passed")  # type: ignore[assignment]
    return status, r.message
