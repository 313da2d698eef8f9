"""Renderers of a gate report: text, json (JSON lines), junit, github, sarif. No logic lives here."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree as ET

from refitwire.gate._gate import Finding, GateReport
from refitwire.gate._rules import DIRECTION_TEXT, RULES, rule

FORMATS = ("text", "json", "junit", "github", "sarif")


def render(report: GateReport, fmt: str, tool: str = "gate") -> str:
    renderers: dict[str, Callable[[GateReport, str], str]] = {
        "text": _text,
        "json": _json_lines,
        "junit": _junit,
        "github": _github,
        "sarif": _sarif,
    }
    return renderers[fmt](report, tool)


def _matrix_line(report: GateReport) -> str:
    m = report.matrix
    label = {"passed": "passed", "failed": "FAILED", "errored": "ERRORED", "not-run": "not run"}[m.status]
    return f"runtime matrix: {label}: {m.detail}"


def _directions(finding: Finding) -> str:
    return ", ".join(f"{DIRECTION_TEXT[d]} ({d})" for d in finding.change.directions) or "no blob (policy)"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def finding_json(finding: Finding) -> dict[str, Any]:
    change, entry = finding.change, rule(finding.change.rule)
    return {
        "type": "finding",
        "rule": change.rule,
        "category": entry.category,
        "severity": entry.severity,
        "breaking": change.breaking,
        "failing": finding.failing,
        "file": finding.file,
        "against": finding.against,
        "pointer": change.pointer,
        "path": change.path,
        "detail": change.detail,
        "directions": [{"direction": d, "text": DIRECTION_TEXT[d]} for d in change.directions],
        "witnesses": [w.as_json() for w in finding.witnesses],
        "no_witness": [{"direction": d, "text": "no witness found"} for d in finding.no_witness],
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
        "failing": sum(f.failing for f in report.findings),
        "accepted": sum(f.accepted is not None for f in report.findings),
        "info": sum(not f.change.breaking for f in report.findings),
    }


# -- text ----------------------------------------------------------------------------------------


def _text(report: GateReport, tool: str) -> str:
    at = f" ({report.commit[:12]})" if report.commit else ""
    lines = [f"refitwire {tool}: against {report.against}{at}"]
    if report.candidates:
        lines.append("candidates: " + ", ".join(report.candidates))
    for old, new in report.comparisons:
        lines.append(f"compared: {old} -> {new}")
    ordered = sorted(report.findings, key=lambda f: (not f.failing, not f.change.breaking))
    for finding in ordered:
        lines.append("")
        lines += _text_finding(finding)
    lines += ["", _matrix_line(report)]
    counts = _summary(report)
    lines.append(
        f"verdict: {report.verdict} (exit {report.exit_code}): {counts['failing']} failing, "
        f"{counts['accepted']} accepted, {counts['info']} compatible"
    )
    return "\n".join(lines)


def _text_finding(finding: Finding) -> list[str]:
    change, entry = finding.change, rule(finding.change.rule)
    status = "ACCEPTED" if finding.accepted else ("BREAKING" if change.breaking else "ok")
    against = f" against {finding.against}" if finding.against else ""
    lines = [
        f"{status} {change.rule} [{entry.category}, {entry.severity}] {finding.file}{against}",
        f"  pointer {change.pointer or '/'}   instance path {change.path}",
        f"  {change.detail}",
    ]
    if change.breaking:
        lines.append(f"  breaks: {_directions(finding)}")
    for w in finding.witnesses:
        lines.append(f"  witness ({w.direction}, {DIRECTION_TEXT[w.direction]}):")
        lines.append(f"    accepted by {w.writer}; rejected by {w.reader}: {w.rejection}")
        lines.append(f"    {_compact(w.blob)}")
    for d in finding.no_witness:
        lines.append(f"  no witness found ({d}, {DIRECTION_TEXT[d]})")
    if finding.accepted:
        a = finding.accepted
        lines.append(f"  accepted until {a.expires}: {a.reason} ({a.link})")
    return lines


# -- json lines ------------------------------------------------------------------------------------


def _json_lines(report: GateReport, tool: str) -> str:
    records: list[dict[str, Any]] = [
        {
            "type": "header",
            "tool": f"refitwire {tool}",
            "against": report.against,
            "commit": report.commit,
            "candidates": list(report.candidates),
            "comparisons": [list(c) for c in report.comparisons],
        }
    ]
    records += [finding_json(f) for f in report.findings]
    m = report.matrix
    records.append(
        {"type": "matrix", "status": m.status, "detail": m.detail, "required_failed": m.required_failed}
    )
    records.append(
        {
            "type": "footer",
            "verdict": report.verdict,
            "exit_code": report.exit_code,
            "matrix": m.status,
            **_summary(report),
        }
    )
    return "\n".join(json.dumps(r) for r in records)


# -- junit ---------------------------------------------------------------------------------------


def _junit(report: GateReport, tool: str) -> str:
    suites = ET.Element("testsuites", name=f"refitwire {tool}")
    groups: dict[tuple[str, str], list[Finding]] = {}
    for old, new in report.comparisons:
        groups.setdefault((new, old), [])
    for finding in report.findings:
        groups.setdefault((finding.file, finding.against or ""), []).append(finding)
    for (file, against), findings in groups.items():
        name = f"{file} against {against}" if against else file
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=name,
            tests=str(max(1, len(findings))),
            failures=str(sum(f.failing for f in findings)),
            errors="0",
            skipped="0",
        )
        if not findings:
            ET.SubElement(suite, "testcase", classname=file, name="no changes")
        for finding in findings:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=file,
                name=f"{finding.change.rule} {finding.change.pointer or '/'}",
            )
            text = "\n".join(_text_finding(finding))
            if finding.failing:
                failure = ET.SubElement(
                    case, "failure", message=finding.change.detail, type=finding.change.rule
                )
                failure.text = text
            else:
                ET.SubElement(case, "system-out").text = text
    m = report.matrix
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="runtime matrix",
        tests="1",
        failures=str(int(m.status == "failed")),
        errors=str(int(m.status == "errored")),
        skipped=str(int(m.status == "not-run")),
    )
    case = ET.SubElement(suite, "testcase", classname="runtime matrix", name="refitwire matrix")
    if m.status == "not-run":
        ET.SubElement(case, "skipped", message=m.detail)
    elif m.status == "failed":
        ET.SubElement(case, "failure", message=m.detail)
    elif m.status == "errored":
        ET.SubElement(case, "error", message=m.detail)
    suites.set("tests", str(sum(int(s.get("tests", "0")) for s in suites)))
    suites.set("failures", str(sum(int(s.get("failures", "0")) for s in suites)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")


# -- github workflow commands --------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(report: GateReport, tool: str) -> str:
    lines = []
    for finding in report.findings:
        level = "error" if finding.failing else "notice"
        message = "\n".join(_text_finding(finding)[1:])
        title = f"{finding.change.rule}" + (f" against {finding.against}" if finding.against else "")
        file = finding.file if finding.file.endswith(".json") else ""
        where = f"file={_escape_property(file)}," if file else ""
        lines.append(f"::{level} {where}title={_escape_property(title)}::{_escape_data(message)}")
    m = report.matrix
    level = {"passed": "notice", "failed": "error", "errored": "error", "not-run": "warning"}[m.status]
    lines.append(f"::{level} title=runtime matrix::{_escape_data(_matrix_line(report))}")
    counts = _summary(report)
    lines.append(f"refitwire {tool}: {report.verdict} (exit {report.exit_code}), {counts['failing']} failing")
    return "\n".join(lines)


# -- sarif -----------------------------------------------------------------------------------------


def _sarif(report: GateReport, tool: str) -> str:
    results = []
    for finding in report.findings:
        change = finding.change
        message = change.detail
        if change.breaking:
            message += f" (breaks: {_directions(finding)})"
        for w in finding.witnesses:
            message += f"\nwitness {w.direction}: {_compact(w.blob)} rejected by {w.reader}: {w.rejection}"
        for d in finding.no_witness:
            message += f"\nno witness found ({d})"
        result: dict[str, Any] = {
            "ruleId": change.rule,
            "level": "error" if finding.failing else "note",
            "message": {"text": message},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": finding.file}},
                    "logicalLocations": [{"fullyQualifiedName": change.pointer or "/", "kind": "member"}],
                }
            ],
            "properties": finding_json(finding),
        }
        if finding.accepted is not None:
            result["suppressions"] = [{"kind": "external", "justification": finding.accepted.reason}]
        results.append(result)
    m = report.matrix
    notification = {
        "level": "note" if m.status == "passed" else ("warning" if m.status == "not-run" else "error"),
        "message": {"text": _matrix_line(report)},
    }
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": f"refitwire-{tool}",
                        "rules": [
                            {
                                "id": r.id,
                                "name": r.id,
                                "shortDescription": {"text": r.doc},
                                "defaultConfiguration": {"level": "error" if r.breaking else "note"},
                                "properties": {"category": r.category, "directions": list(r.directions)},
                            }
                            for r in RULES.values()
                        ],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": report.exit_code != 1,
                        "exitCode": report.exit_code,
                        "toolExecutionNotifications": [notification],
                    }
                ],
                "results": results,
                "properties": {"verdict": report.verdict, "matrix": m.status, "against": report.against},
            }
        ],
    }
    return json.dumps(sarif, indent=2)
