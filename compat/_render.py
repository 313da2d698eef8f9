"""Renderers: each replays a :class:`Report` as a table, failures grouped by symptom, JUnit or JSON.

A cell shows expected failures apart (``rec 0/40, 40 expected``); the summary counts
successes, skips, expected and unexpected failures, as the protobuf conformance runner does.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Sequence
from typing import Any

from refitwire.compat import _junit
from refitwire.compat._report import Header, Report
from refitwire.compat._results import COUNTED, RECOMMENDED, REQUIRED, Outcome, Result

VECTORS = "(vectors)"
EXAMPLES = 3  # example case IDs shown per failure group


def render(report: Report, fmt: str, *, enforce_recommended: bool = False) -> str:
    if fmt == "json":
        lines = [report.header.raw, *(r.as_json() for r in report.results)]
        return "\n".join(json.dumps(line) for line in lines + ([report.footer.raw] if report.footer else []))
    if fmt == "junit":
        return junit(report, enforce_recommended=enforce_recommended)
    return "\n".join(
        [*table(report.results, markdown=fmt == "markdown"), "", *summary(report, enforce_recommended)]
    )


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
    parts = []
    for tier, short in ((REQUIRED, "req"), (RECOMMENDED, "rec")):
        passed, expected = c[f"{tier}.passed"], c[f"{tier}.xfailed"]
        total = passed + expected + sum(c[f"{tier}.{o}"] for o in ("failed", "errored", "xpassed"))
        parts.append(f"{short} {passed}/{total}" + (f", {expected} expected" if expected else ""))
    mark = (
        "FAIL "
        if c["required.failed"] + c["required.errored"] + c["required.xpassed"] + c["recommended.xpassed"]
        else ""
    )
    return mark + " ".join(parts)


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


# -- failures grouped by symptom -------------------------------------------------------------


def groups(results: Iterable[Result]) -> list[tuple[tuple[str, str, str, str], list[Result]]]:
    """Failures keyed by (tier, outcome, symptom, side at fault), Required first, largest first."""
    found: dict[tuple[str, str, str, str], list[Result]] = collections.defaultdict(list)
    for r in results:
        if r.outcome.bad:
            side = (
                (r.writer if r.fault == "writer" else r.reader if r.fault == "reader" else None)
                or r.writer
                or r.reader
                or ""
            )
            found[(r.tier, r.outcome.value, r.symptom or r.message[:80], side)].append(r)
    return sorted(found.items(), key=lambda kv: (kv[0][0] != REQUIRED, -len(kv[1]), kv[0]))


def failure_lines(results: Sequence[Result], limit: int = 30) -> list[str]:
    out = []
    grouped = groups(results)
    for (tier, outcome, symptom, side), members in grouped[:limit]:
        first = members[0]
        cell = " -> ".join(x for x in (first.writer, first.reader) if x)
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


def summary(report: Report, enforce_recommended: bool = False) -> list[str]:
    head, results, foot = report.header, report.results, report.footer
    out = [
        f"seed {head.seed}, {head.examples} generated payloads, {len(results)} cases"
        + (f" in {foot.seconds} s" if foot else "")
    ]
    out.append(ran(head))
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
