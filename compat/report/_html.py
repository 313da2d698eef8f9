"""The report as one self-contained page: the writer x reader grid, each cell's cases, badges.

Everything is built from the JSON-lines report alone (a CI artifact, a report from another
machine): the page's data is one JSON document inlined beside its style and script, and
the page fetches nothing when it is viewed. A case's input is the one the run recorded in the
report (beside the case's first failing result), never rebuilt from the seed; the rerun command
is there for every case either way. A report without its footer renders as incomplete, never as
passed. The gate's report (its own JSON lines) renders through :func:`gate_page`.
"""

from __future__ import annotations

import collections
import html
import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from refitwire.compat._results import LISTED_PER_GROUP, Outcome, Result, listing
from refitwire.compat.report import _badge, _render
from refitwire.compat.report._report import Report
from refitwire.compat.runner import _kinds

MAX_INPUTS = 400  # distinct cases whose recorded input the page carries


def page(report: Report, *, enforce_recommended: bool = False) -> str:
    """The HTML page of a matrix or conformance report."""
    data = model(report, enforce_recommended=enforce_recommended)
    return assemble(data["title"], data)


def gate_page(records: Sequence[dict[str, Any]]) -> str:
    """The HTML page of a gate report (the records of ``refitwire gate --format json``)."""
    head = next((r for r in records if r.get("type") == "header"), {})
    foot = next((r for r in records if r.get("type") == "footer"), None)
    title = f"{head.get('tool', 'refitwire gate')} against {head.get('against', '?')}"
    data: dict[str, Any] = {
        "kind": "gate",
        "title": title,
        "verdict": "incomplete" if foot is None else foot["verdict"],
        "header": head,
        "findings": [_texts(r) for r in records if r.get("type") == "finding"],
        "matrix": next((r for r in records if r.get("type") == "matrix"), None),
        "footer": foot,
    }
    return assemble(title, data)


def _texts(finding: dict[str, Any]) -> dict[str, Any]:
    """A finding with its witness blobs and baseline entry as JSON text, made here: the page's
    script reads numbers as doubles, and a witness's 2^63 must be copied exactly."""
    witnesses = [{**w, "blob_text": _compact(w.get("blob"))} for w in finding.get("witnesses", [])]
    entry = finding.get("baseline_entry")
    return {**finding, "witnesses": witnesses, "baseline_text": _compact(entry) if entry else None}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def assemble(title: str, data: dict[str, Any]) -> str:
    """The page: inline style, inline data (``<`` escaped so no text ends the script), inline script."""
    assets = resources.files("refitwire.compat") / "page"
    style = (assets / "report.css").read_text(encoding="utf-8")
    script = (assets / "report.js").read_text(encoding="utf-8")
    inline = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return (
        "<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
        "<meta name=viewport content='width=device-width, initial-scale=1'>\n"
        # Nothing from elsewhere: no script, style, image or font may load from the network.
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{style}</style>\n</head>\n<body>\n"
        "<noscript>This page shows its report with a script; the JSON-lines report reads without one."
        "</noscript>\n<main id=app></main>\n"
        f"<script id=report-data type=application/json>{inline}</script>\n"
        f"<script>\n{script}</script>\n</body>\n</html>"
    )


# -- the matrix or conformance report as data ---------------------------------------------------


def model(report: Report, *, enforce_recommended: bool = False) -> dict[str, Any]:
    head, foot = report.header, report.footer
    focus = head.raw.get("focus") or []
    by_cell: dict[tuple[str, str], list[Result]] = collections.defaultdict(list)
    for result in report.results:
        by_cell[(result.writer or _render.VECTORS, result.reader or _render.VECTORS)].append(result)
    shown: dict[str, None] = {}  # the cases listed, in order: the page carries their recorded inputs
    cells = []
    for (w, r), members in sorted(by_cell.items(), key=lambda kv: (_order(kv[0][0]), _order(kv[0][1]))):
        c = collections.Counter(f"{x.tier}.{x.outcome.value}" for x in members)
        groups = [_group(key, rs, report, shown) for key, rs in _render.groups(members)]
        groups += [_group(key, rs, report, shown) for key, rs in _expected_groups(members)]
        cells.append({"w": w, "r": r, "counts": dict(c), "standing": _render.standing(c),
                      "text": _render.cell_text(c), "groups": groups})  # fmt: skip
    verdict = "incomplete" if foot is None else "passed" if _passed(report, enforce_recommended) else "failed"
    kit = head.raw.get("kit")
    return {
        "kind": "conformance" if focus else "matrix",
        "title": f"refitwire {'conformance' if focus else 'matrix'}: {verdict}",
        "verdict": verdict,
        "header": _header(report),
        "footer": None if foot is None else {**foot.raw, "cases": len(report.results)},
        "cases": len(report.results),
        "writers": sorted({w for w, _ in by_cell}, key=_order),
        "readers": sorted({r for _, r in by_cell}, key=_order),
        "participants": [_participant(p) for p in head.participants],
        "cells": cells,
        "standings": standings(report),
        "summary": _render.summary(report, enforce_recommended),
        # what the page opens with: the group to fix first (else the largest tolerated one), its cell
        "first_fix": _lead(_render.first_fix(report, enforce_recommended), by_cell),
        "first_improvement": _lead(_render.first_improvement(report), by_cell),
        "inputs": _inputs(report, shown),
        "inputs_note": _inputs_note(report, kit),
    }


def _lead(fix: dict[str, Any] | None, by_cell: dict[tuple[str, str], list[Result]]) -> dict[str, Any] | None:
    """A group of :func:`_render.first_fix`, with its headline and the index of its cell in ``cells``."""
    if fix is None:
        return None
    order = sorted(by_cell, key=lambda wr: (_order(wr[0]), _order(wr[1])))
    return {**fix, "headline": _render.fix_headline(fix), "cell_index": order.index(tuple(fix["cell"]))}


def _order(label: str) -> tuple[bool, str]:
    """Both axes: participants by label, the vectors last."""
    return label == _render.VECTORS, label


def _header(report: Report) -> dict[str, Any]:
    head, raw = report.header, report.header.raw
    facts = {key: raw.get(key) for key in ("started_at", "kit", "spec_versions", "python")}
    return {**facts, "seed": head.seed, "examples": head.examples, "upstream": head.upstream,
            "unavailable": list(head.unavailable), "focus": raw.get("focus") or []}  # fmt: skip


def _passed(report: Report, enforce_recommended: bool) -> bool:
    return not any(_render.unexpected(r, enforce_recommended) for r in report.results)


def _participant(p: dict[str, Any]) -> dict[str, Any]:
    version = str(p["version"])
    local = version.partition("+")[2]  # a source checkout's version carries its commit: 1.2.3+gabc1234
    commit = local[1:] if local.startswith("g") else ""
    return {**p, "released": p["kind"] == "upstream", "commit": commit}


def _expected_groups(members: Iterable[Result]) -> list[tuple[tuple[str, str, str, str], list[Result]]]:
    """Expected failures, apart: by tier and listed reason."""
    found: dict[tuple[str, str, str, str], list[Result]] = collections.defaultdict(list)
    for r in members:
        key = listing(r) if r.outcome == Outcome.XFAILED else None
        if key is not None:
            found[key].append(r)
    return sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def _group(
    key: tuple[str, str, str, str], members: list[Result], report: Report, shown: dict[str, None]
) -> dict[str, Any]:
    tier, outcome, symptom, side = key
    cases = []
    for r in members[:LISTED_PER_GROUP]:
        shown.setdefault(r.case, None)
        cases.append({
            "case": r.case, "tier": r.tier, "outcome": r.outcome.value, "message": r.message,
            "fault": r.fault, "expected": r.expected_failure, "input": _kinds.bare(r.case),
            "rerun": _render.rerun_command(report.header, r.case),
        })  # fmt: skip
    return {"tier": tier, "outcome": outcome, "symptom": symptom, "side": side,
            "fault": members[0].fault, "count": len(members), "cases": cases}  # fmt: skip


def _inputs_note(report: Report, kit: str | None) -> str:
    if any(r.input is not None for r in report.results):
        return f"Inputs as the run recorded them in the report (refitwire {kit or 'of unknown version'})."
    if any(r.outcome.bad or r.outcome == Outcome.XFAILED for r in report.results):
        return (f"The report records no inputs (made by refitwire {kit or 'of unknown version'}): each case's "
                "rerun command prints them.")  # fmt: skip
    return "No case failed: no inputs to show."


def _inputs(report: Report, shown: dict[str, None]) -> dict[str, Any]:
    """The inputs the report recorded for the (bare) cases the page lists, by case."""
    found: dict[str, Any] = {}
    for r in report.results:
        if r.input is not None:
            found.setdefault(_kinds.bare(r.case), r.input)
    listed = list(dict.fromkeys(_kinds.bare(case) for case in shown))[:MAX_INPUTS]
    return {case: found[case] for case in listed if case in found}


# -- per participant ------------------------------------------------------------------------------


def standings(report: Report) -> list[dict[str, Any]]:
    """Per participant: its cases, what counts against it (the side at fault), its badge."""
    involved: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    against: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in report.results:
        for label in {r.writer, r.reader} - {None}:
            involved[str(label)][f"{r.tier}.{r.outcome.value}"] += 1
        if r.outcome.bad or r.outcome == Outcome.XFAILED:
            against[_render.blamed(r)][f"{r.tier}.{r.outcome.value}"] += 1
    out = []
    for p in report.header.participants:
        label = p["label"]
        mine, bad = involved[label], against[label]
        entry = {
            "label": label,
            "cases": sum(mine.values()),
            "required_failed": sum(bad[f"required.{o}"] for o in ("failed", "errored", "xpassed")),
            "recommended_failed": sum(bad[f"recommended.{o}"] for o in ("failed", "errored", "xpassed")),
            "expected": bad["required.xfailed"] + bad["recommended.xfailed"],
            "errored": bad["required.errored"] + bad["recommended.errored"],
            "complete": report.complete,
        }
        entry["badge"] = _badge.svg(entry)
        out.append(entry)
    return out


def badges(report: Report) -> dict[str, str]:
    """One SVG badge per participant (label -> SVG text), for a README."""
    return {s["label"]: str(s["badge"]) for s in standings(report)}
