"""Reports: a JSON-lines stream (header, one line per result, footer), and renderers that replay it."""

from __future__ import annotations

import collections
import json
import platform
import time
from collections.abc import Iterable
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from refitwire.compat._run import Result, Started

REPORT_SCHEMA = "urn:refitwire:schema:report:1"


def header(started: list[Started], plan: Any) -> dict[str, Any]:
    return {
        "type": "header",
        "schema": REPORT_SCHEMA,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seed": plan.seed,
        "examples": plan.examples,
        "focus": plan.focus,
        "python": platform.python_version(),
        "participants": [
            {"label": s.label, "kind": s.participant.kind, "name": s.identity.name, "version": s.identity.version,
             "language": s.identity.language, "spec_version": s.identity.spec_version, "roles": list(s.identity.roles),
             "command": list(s.participant.command)}
            for s in started
        ],
        "unavailable": plan.unavailable,
    }  # fmt: skip


def footer(results: list[Result], started: list[Started], seconds: float) -> dict[str, Any]:
    counts = collections.Counter((r.tier, r.outcome) for r in results)
    return {
        "type": "footer",
        "seconds": round(seconds, 3),
        "counts": {f"{tier}.{outcome}": n for (tier, outcome), n in sorted(counts.items())},
        "required_failed": sum(
            1 for r in results if r.tier == "required" and r.outcome in ("failed", "errored")
        ),
        "recommended_failed": sum(
            1 for r in results if r.tier == "recommended" and r.outcome in ("failed", "errored")
        ),
        "xpassed": sum(1 for r in results if r.outcome == "xpassed"),
        "stderr": {s.label: list(s.testee.stderr)[-20:] for s in started if s.testee.stderr},
    }


def ok(foot: dict[str, Any]) -> bool:
    return bool(foot["required_failed"] == 0 and foot["xpassed"] == 0)


# -- renderers (each replays the stream) ---------------------------------------------------


def render(lines: list[dict[str, Any]], fmt: str) -> str:
    head, results, foot = lines[0], [line for line in lines if line["type"] == "result"], lines[-1]
    if fmt == "json":
        return "\n".join(json.dumps(line) for line in lines)
    if fmt == "junit":
        return _junit(head, results, foot)
    return _table(head, results, foot, markdown=fmt == "markdown")


def _cells(results: Iterable[dict[str, Any]]) -> dict[tuple[str, str], collections.Counter[str]]:
    cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in results:
        key = (r.get("writer") or "(vectors)", r.get("reader") or "(vectors)")
        good = r["outcome"] in ("passed", "xfailed")
        bad = r["outcome"] in ("failed", "errored", "xpassed")
        cells[key][f"{r['tier']}.{'pass' if good else 'fail' if bad else 'skip'}"] += 1
    return cells


def _cell_text(c: collections.Counter[str]) -> str:
    req = f"{c['required.pass']}/{c['required.pass'] + c['required.fail']}"
    rec = f"{c['recommended.pass']}/{c['recommended.pass'] + c['recommended.fail']}"
    mark = "FAIL " if c["required.fail"] else ""
    return f"{mark}req {req} rec {rec}"


def _table(head: dict[str, Any], results: list[dict[str, Any]], foot: dict[str, Any], markdown: bool) -> str:
    cells = _cells(results)
    writers = sorted({w for w, _ in cells}, key=lambda x: (x == "(vectors)", x))
    readers = sorted({r for _, r in cells}, key=lambda x: (x == "(vectors)", x))
    rows = [["writer \\ reader", *readers]]
    rows += [[w, *(_cell_text(cells[(w, r)]) if (w, r) in cells else "-" for r in readers)] for w in writers]
    if markdown:
        out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        out += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        out = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    failures = [r for r in results if r["outcome"] in ("failed", "errored", "xpassed")]
    out += [
        "",
        f"seed {head['seed']}, {head['examples']} generated payloads, {len(results)} cases in {foot['seconds']} s",
    ]
    for note in head["unavailable"]:
        out.append(f"not run: {note}")
    shown = [r for r in failures if r["tier"] == "required"] + [
        r for r in failures if r["tier"] != "required"
    ]
    for r in shown[:40]:
        who = " -> ".join(x for x in (r.get("writer"), r.get("reader")) if x)
        out.append(f"{r['outcome'].upper():8} {r['tier']:11} {r['case']:28} {who}: {r.get('message', '')}")
    if len(shown) > 40:
        out.append(f"... and {len(shown) - 40} more (see --format json)")
    out.append(
        f"required failures: {foot['required_failed']}, "
        f"recommended failures: {foot['recommended_failed']}, unexpected passes: {foot['xpassed']}"
    )
    return "\n".join(out)


def _junit(head: dict[str, Any], results: list[dict[str, Any]], foot: dict[str, Any]) -> str:
    suites: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in results:
        suites[f"{r.get('writer') or 'vectors'} -> {r.get('reader') or 'vectors'}"].append(r)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="refitwire" time="{foot["seconds"]}">',
    ]
    for name, cases in suites.items():
        failures = sum(1 for c in cases if c["outcome"] in ("failed", "xpassed"))
        errors = sum(1 for c in cases if c["outcome"] == "errored")
        skipped = sum(1 for c in cases if c["outcome"] == "skipped")
        out.append(
            f'  <testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}">'
        )
        for c in cases:
            out.append(f"    <testcase classname={quoteattr(c['tier'])} name={quoteattr(c['case'])}>")
            msg = quoteattr(c.get("message", ""))
            if c["outcome"] in ("failed", "xpassed"):
                out.append(f"      <failure message={msg}>{escape(c.get('message', ''))}</failure>")
            elif c["outcome"] == "errored":
                out.append(f"      <error message={msg}>{escape(c.get('message', ''))}</error>")
            elif c["outcome"] == "skipped":
                out.append(f"      <skipped message={msg}/>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out)
