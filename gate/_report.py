"""Renderers of a gate report: text, json (JSON lines), junit, github, sarif. No logic lives here.

Every format places a finding in its file: SARIF results and GitHub annotations carry the
line and column of the finding's JSON pointer (``_locate``); JUnit is written by the one
shared writer (``refitwire.compat.report._junit``), one suite per comparison.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from refitwire.compat import JUnitCase as Case
from refitwire.compat import JUnitStatus as Status
from refitwire.compat import JUnitSuite as Suite
from refitwire.compat import render_junit
from refitwire.gate._findings import Finding, GateReport
from refitwire.gate._locate import locate
from refitwire.gate._rules import DIRECTION_TEXT, RULES, Rule, rule
from refitwire.wire import show_pointer

FORMATS = ("text", "json", "junit", "github", "sarif")
#: Findings a baseline entry cannot accept: they are about the baseline or the gate itself.
_NOT_ACCEPTABLE = frozenset({Rule.BASELINE_STALE, Rule.BASELINE_EXPIRED, Rule.MATRIX_DISAGREES})


def render(report: GateReport, fmt: str, tool: str = "gate", root: Path | None = None) -> str:
    renderers: dict[str, Callable[[GateReport, str, Path], str]] = {
        "text": _text,
        "json": _json_lines,
        "junit": _junit,
        "github": _github,
        "sarif": _sarif,
    }
    return renderers[fmt](report, tool, root or Path.cwd())


def _status(finding: Finding) -> str:
    if finding.accepted:
        return "ACCEPTED"
    if finding.unproven:
        return "UNPROVEN"
    return "BREAKING" if finding.change.breaking else "ok"


def _matrix_lines(report: GateReport) -> list[str]:
    m = report.matrix
    label = {"passed": "passed", "failed": "FAILED", "errored": "ERRORED", "not-run": "not run",
             "incomplete": "INCOMPLETE"}[m.status]  # fmt: skip
    lines = [f"runtime matrix: {label}: {m.detail}"]
    if m.ran:
        lines.append(f"  ran: {', '.join(m.ran)}")
    if m.missing:
        lines.append(f"  did not run: {', '.join(m.missing)}")
    word = "group" if m.against_base else "failing"
    lines += [f"  {word}: {cell}" for cell in m.failing[:_SHOWN]]
    if len(m.failing) > _SHOWN:
        lines.append(f"  ... and {len(m.failing) - _SHOWN} more (see --format json)")
    lines += [f"  {line}" for line in m.not_counted]
    return lines


def _directions(finding: Finding) -> str:
    return ", ".join(f"{DIRECTION_TEXT[d]} ({d})" for d in finding.change.directions) or "no blob (policy)"


def _compact(value: Any, shown: int = 4000) -> str:
    """``value`` on one line; a witness of megabytes (a blob over a size limit) is cut, saying its size."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=False)
    if len(text) <= shown:
        return text
    return f"{text[: shown // 2]}... ({len(text)} characters in all; --write-witnesses DIR writes the blob)"


def finding_json(finding: Finding) -> dict[str, Any]:
    change, entry = finding.change, rule(finding.change.rule)
    return {
        "type": "finding",
        "rule": change.rule,
        "category": entry.category,
        "severity": entry.severity,
        "breaking": change.breaking,
        "failing": finding.failing,
        "unproven": finding.unproven,
        "file": finding.file,
        "against": finding.against,
        "pointer": change.pointer,
        "path": change.path,
        "change": finding.hash,
        "detail": change.detail,
        "directions": [{"direction": d, "text": DIRECTION_TEXT[d]} for d in change.directions],
        "witnesses": [w.as_json() for w in finding.witnesses],
        "no_witness": [{"direction": d, "text": "no witness found"} for d in finding.no_witness],
        "witness_search": "done" if finding.searched else "skipped",
        "baseline_entry": finding.baseline_entry()
        if finding.failing and change.rule not in _NOT_ACCEPTABLE and not entry.remedy
        else None,
        "remedy": entry.remedy or None,
        "accepted": None
        if finding.accepted is None
        else {
            "reason": finding.accepted.reason,
            "link": finding.accepted.link,
            "expires": str(finding.accepted.expires),
        },
    }


def _summary(report: GateReport) -> dict[str, int]:
    return {
        "findings": len(report.findings),
        "failing": sum(f.failing and not f.unproven for f in report.findings),
        "unproven": sum(f.unproven for f in report.findings),
        "accepted": sum(f.accepted is not None for f in report.findings),
        "info": sum(not f.change.breaking for f in report.findings),
        "already_released": report.already_released,
    }


# -- text ----------------------------------------------------------------------------------------


def _text(report: GateReport, tool: str, root: Path) -> str:
    at = f" ({report.commit[:12]})" if report.commit else ""
    lines = [f"refitwire {tool}: against {report.against}{at}"]
    lines += [f"note: {note}" for note in report.notes]
    if report.candidates:
        lines.append("candidates: " + ", ".join(report.candidates))
    lines += [f"compared: {old} -> {new}" for old, new in report.comparisons]
    for finding in sorted(report.findings, key=lambda f: (not f.failing, not f.change.breaking)):
        lines += ["", *_text_finding(finding, report)]
    lines += ["", *_matrix_lines(report)]
    c = _summary(report)
    lines.append(
        f"verdict: {report.verdict} (exit {report.exit_code}): {c['failing']} failing, {c['unproven']} unproven, "
        f"{c['accepted']} accepted, {c['info']} compatible"
        + (f" ({c['already_released']} already released, not repeated)" if c["already_released"] else "")
    )
    return "\n".join(lines)


def _breaks(finding: Finding, report: GateReport | None) -> list[str]:
    """What a breaking finding breaks: the directions of a schema change, or for the runtime
    matrix's disagreement each cause in its cells (writer -> reader) with the case to rerun."""
    if finding.change.rule == Rule.MATRIX_DISAGREES and report is not None and report.matrix.failing:
        shown = report.matrix.failing[:_SHOWN]
        more = len(report.matrix.failing) - len(shown)
        return ["  breaks:", *(f"    {line}" for line in shown)] + (
            [f"    ... and {more} more cause(s) (see --format json)"] if more > 0 else []
        )
    return [f"  breaks: {_directions(finding)}"]


#: Groups (or cells) the text shows before pointing at the JSON report.
_SHOWN = 20


def _text_finding(finding: Finding, report: GateReport | None = None) -> list[str]:
    change, entry = finding.change, rule(finding.change.rule)
    against = f" against {finding.against}" if finding.against else ""
    lines = [
        f"{_status(finding)} {change.rule} [{entry.category}, {entry.severity}] {finding.file}{against}",
        f"  pointer {json.dumps(change.pointer)}   instance path {show_pointer(change.path)}   change {finding.hash}",
        f"  {change.detail}",
    ]
    if change.breaking:
        lines += _breaks(finding, report)
    for w in finding.witnesses:
        lines.append(f"  witness ({w.direction}, {DIRECTION_TEXT[w.direction]}):")
        lines.append(f"    accepted by {w.writer}; rejected by {w.reader}: {w.rejection}")
        lines.append(f"    {_compact(w.blob)}")
    for d in finding.no_witness:
        lines.append(f"  no witness found ({d}, {DIRECTION_TEXT[d]})")
    if not finding.searched and change.breaking and change.directions:
        lines.append("  witness search skipped (--no-witness): no blob shows this break")
    if finding.failing and entry.remedy:  # accepting it would be the wrong advice
        lines.append(f"  to fix it, {entry.remedy}")
    elif finding.failing and change.rule not in _NOT_ACCEPTABLE:
        hint = "  to accept it, add to the baseline:"
        if finding.unproven:
            hint = "  the rules flag it but no blob separates the versions; if it is safe, accept it in the baseline:"
        if finding.unproven and not finding.searched:
            hint = (
                "  rerun without --no-witness to look for a blob that shows it, or accept it in the baseline:"
            )
        lines.append(hint)
        lines.append(f"    {_compact(finding.baseline_entry())}")
    if finding.accepted:
        a = finding.accepted
        lines.append(f"  accepted until {a.expires}: {a.reason} ({a.link})")
    return lines


# -- json lines ------------------------------------------------------------------------------------


def _json_lines(report: GateReport, tool: str, root: Path) -> str:
    m = report.matrix
    records: list[dict[str, Any]] = [
        {"type": "header", "tool": f"refitwire {tool}", "against": report.against, "commit": report.commit,
         "candidates": list(report.candidates), "comparisons": [list(c) for c in report.comparisons],
         "notes": list(report.notes)},
        *(finding_json(f) for f in report.findings),
        {"type": "matrix", "status": m.status, "detail": m.detail, "required_failed": m.required_failed,
         "seed": m.seed, "ran": list(m.ran), "missing": list(m.missing), "failing": list(m.failing),
         "expected": m.expected, "grid": [dict(c) for c in m.grid], "not_counted": list(m.not_counted),
         "against_base": [dict(g) for g in m.against_base]},
        {"type": "footer", "verdict": report.verdict, "exit_code": report.exit_code, "matrix": m.status,
         **_summary(report)},
    ]  # fmt: skip
    return "\n".join(json.dumps(r) for r in records)


# -- junit ---------------------------------------------------------------------------------------


def _junit(report: GateReport, tool: str, root: Path) -> str:
    groups: dict[str, list[Finding]] = {}
    names = {
        (new, Path(old).name.removesuffix(".json")): f"{new} against {old}" for old, new in report.comparisons
    }
    for old, new in report.comparisons:
        groups.setdefault(f"{new} against {old}", [])
    for finding in report.findings:
        key = names.get((finding.file, finding.against or ""), finding.file)
        groups.setdefault(key, []).append(finding)
    suites = []
    for name, findings in groups.items():
        cases = [
            Case(
                name=f"{f.change.rule} {json.dumps(f.change.pointer)}",
                classname=f.file,
                status="failed" if f.failing else "passed",
                message=("UNPROVEN (no witness): " if f.unproven else "") + f.change.detail
                if f.failing
                else "",
                type=f.change.rule if f.failing else "",
                detail="\n".join(_text_finding(f)) if f.failing else "",
                stdout="" if f.failing else "\n".join(_text_finding(f)),
            )
            for f in findings
        ]
        suites.append(Suite(name, cases or [Case("no changes", name)]))
    m = report.matrix
    status: dict[str, Status] = {
        "passed": "passed",
        "failed": "failed",
        "errored": "errored",
        "incomplete": "errored",
        "not-run": "skipped",
    }
    detail = "\n".join(_matrix_lines(report))
    suites.append(
        Suite(
            "runtime matrix", [Case("refitwire matrix", "runtime matrix", status[m.status], m.detail, detail)]
        )
    )
    return render_junit(suites, name=f"refitwire {tool}")


# -- github workflow commands --------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(report: GateReport, tool: str, root: Path) -> str:
    lines = []
    for finding in report.findings:
        level = "error" if finding.failing else "notice"
        message = "\n".join(_text_finding(finding, report)[1:])
        title = ("UNPROVEN " if finding.unproven else "") + finding.change.rule
        title += f" against {finding.against}" if finding.against else ""
        where = f"file={_escape_property(finding.file)},"
        position = locate(root, finding.file, finding.change.pointer)
        if position:
            where += f"line={position[0]},col={position[1]},"
        lines.append(f"::{level} {where}title={_escape_property(title)}::{_escape_data(message)}")
    m = report.matrix
    levels = {
        "passed": "notice",
        "failed": "error",
        "errored": "error",
        "incomplete": "error",
        "not-run": "warning",
    }
    lines.append(
        f"::{levels[m.status]} title=runtime matrix::{_escape_data(chr(10).join(_matrix_lines(report)))}"
    )
    c = _summary(report)
    lines.append(
        f"refitwire {tool}: {report.verdict} (exit {report.exit_code}), {c['failing']} failing, {c['unproven']} unproven"
    )
    return "\n".join(lines)


# -- sarif -----------------------------------------------------------------------------------------


def _location(root: Path, finding: Finding) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": finding.file, "uriBaseId": "%SRCROOT%"}}
    position = locate(root, finding.file, finding.change.pointer)
    line, column = position or (1, 1)
    physical["region"] = {"startLine": line, "startColumn": column}
    return {
        "physicalLocation": physical,
        "logicalLocations": [{"fullyQualifiedName": show_pointer(finding.change.pointer), "kind": "member"}],
    }


def _sarif(report: GateReport, tool: str, root: Path) -> str:
    results = []
    for finding in report.findings:
        change = finding.change
        message = change.detail
        if change.breaking:
            message += "\n" + "\n".join(line.strip() for line in _breaks(finding, report))
        for w in finding.witnesses:
            message += f"\nwitness {w.direction}: {_compact(w.blob)} rejected by {w.reader}: {w.rejection}"
        message += "".join(f"\nno witness found ({d})" for d in finding.no_witness)
        if not finding.searched and change.breaking and change.directions:
            message += "\nwitness search skipped (--no-witness)"
        result: dict[str, Any] = {
            "ruleId": change.rule,
            "level": "error" if finding.failing else "note",
            "message": {"text": message},
            "locations": [_location(root, finding)],
            "partialFingerprints": {"refitwireChange/v1": finding.hash},
            "properties": finding_json(finding),
        }
        if finding.accepted is not None:
            result["suppressions"] = [{"kind": "external", "justification": finding.accepted.reason}]
        results.append(result)
    m = report.matrix
    notification = {
        "level": "note" if m.status == "passed" else ("warning" if m.status == "not-run" else "error"),
        "message": {"text": "\n".join(_matrix_lines(report))},
    }
    rules = [
        {"id": r.id, "name": r.id, "shortDescription": {"text": r.doc},
         "defaultConfiguration": {"level": "error" if r.breaking else "note"},
         "properties": {"category": r.category, "directions": list(r.directions)}}
        for r in RULES.values()
    ]  # fmt: skip
    run = {
        "tool": {"driver": {"name": f"refitwire-{tool}", "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}},
        "invocations": [{"executionSuccessful": report.exit_code != 1, "exitCode": report.exit_code,
                         "toolExecutionNotifications": [notification]}],
        "results": results,
        "properties": {"verdict": report.verdict, "matrix": m.status, "against": report.against,
                       "notes": list(report.notes), "matrixDetail": m.detail,
                       "againstBase": [dict(g) for g in m.against_base]},
    }  # fmt: skip
    sarif = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2)
