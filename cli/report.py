"""Render a JSON-lines report (matrix, conformance or gate) as a page, badges or text.

``refitwire report REPORT.jsonl --html OUT`` writes one self-contained page (no network
when it is viewed) built from the report alone; ``--badges DIR`` writes one SVG badge per
participant; the text (a compact grid for a 100-column terminal, ``--format wide`` for the
full table) goes to stdout. With ``--html`` or ``--badges`` the verb's work is the files: each
written one is named on stderr with the report's verdict and first thing to fix, no text is
printed unless ``--format`` asks for it, and the exit status is 0 once they are written.
Without them, exit 0 when the report passed, 1 when it failed or is incomplete (no footer);
2 when the file is not a refitwire report.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from refitwire.cli._io import fail
from refitwire.wire import Registry

FORMATS = ("text", "wide", "markdown", "json", "junit", "none")


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("report", metavar="REPORT", help="a JSON-lines report (--output of matrix or conformance, "
                        "or gate --format json)")  # fmt: skip
    parser.add_argument("--html", metavar="OUT", type=Path, help="write the report as one HTML page here")
    parser.add_argument(
        "--badges", metavar="DIR", type=Path, help="write an SVG badge per participant into DIR"
    )
    parser.add_argument("--format", choices=FORMATS,
                        help="what to print on stdout (default text, or none with --html or --badges)")  # fmt: skip
    parser.add_argument("--enforce-recommended", action="store_true",
                        help="judge as the run did with --enforce-recommended")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from refitwire.compat import (
        ReportError,
        html_badges,
        html_page,
        read_report,
        render_first,
        render_report,
        report_ok,
    )

    try:
        lines = Path(args.report).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return fail(f"report: cannot read {args.report}: {exc}")
    try:
        gate = _gate_records(lines)
    except ValueError as exc:
        return fail(f"report: {args.report}: {exc}")
    if gate is not None:
        return _gate(args, gate)
    try:
        report = read_report(lines)
    except ReportError as exc:
        return fail(f"report: {args.report}: {exc}")
    ok = report_ok(report.footer, enforce_recommended=args.enforce_recommended)
    if args.html:
        _write(args.html, html_page(report, enforce_recommended=args.enforce_recommended))
    if args.badges:
        args.badges.mkdir(parents=True, exist_ok=True)
        for label, svg in html_badges(report).items():
            _write(args.badges / f"{_file_name(label)}.svg", svg)
    fmt = args.format or ("none" if args.html or args.badges else "text")
    if fmt != "none":
        print(render_report(report, fmt, enforce_recommended=args.enforce_recommended))
    if args.html or args.badges:  # the files were the point: written is success, the verdict is news
        verdict = "passed" if ok else "failed" if report.footer else "stopped before it finished"
        lines = render_first(report, args.enforce_recommended)
        lead = next((line for line in lines if not line.startswith("INCOMPLETE")), lines[0])
        print(f"refitwire report: the run {verdict}; {lead}", file=sys.stderr)
        return 0
    return 0 if ok else 1


def _gate_records(lines: list[str]) -> list[dict[str, Any]] | None:
    """The records of a gate report (its header names the gate), else None."""
    first = next((line for line in lines if line.strip()), "")
    try:
        head = json.loads(first)
    except ValueError:
        return None
    if not (isinstance(head, dict) and str(head.get("tool", "")).startswith("refitwire ")):
        return None
    records = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError:
                raise ValueError(f"line {number}: not JSON") from None
    return records


def _gate(args: argparse.Namespace, records: list[dict[str, Any]]) -> int:
    from refitwire.compat import html_gate_page

    if args.html:
        _write(args.html, html_gate_page(records))
    if args.badges:
        return fail("report: --badges needs a matrix or conformance report, not a gate report")
    foot = next((r for r in records if r.get("type") == "footer"), None)
    verdict = (
        f"gate: {foot['verdict']} (exit {foot['exit_code']})" if foot else "gate: INCOMPLETE (no footer)"
    )
    if args.html:  # the page was the point: written is success
        print(f"refitwire report: {verdict}", file=sys.stderr)
        return 0
    if (args.format or "text") != "none":
        print(verdict)
    return 0 if foot is not None and foot.get("exit_code") == 0 else 1


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"refitwire report: wrote {path.resolve()}", file=sys.stderr)


def _file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", label).strip("_") or "participant"
