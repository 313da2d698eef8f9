"""Gate a change to the wire schemas: the working tree's schema/ against a git ref.

Locks released files (sha256 in the ref's schema/index.json), compares every candidate
schema transitively with every released version of its document under the evolution policy
(SPEC.md, "Versions and evolution"), proves each breaking finding with a witness blob,
applies a baseline of accepted breaks, then runs the runtime compat matrix with the
candidate included. Exit 0 compatible, 100 breaking, 1 usage or internal error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from refitwire.gate._baseline import load_baseline
from refitwire.gate._errors import GateError
from refitwire.gate._gate import EXIT_ERROR, GateReport, run_gate
from refitwire.gate._report import FORMATS, render

USAGE_EXIT = 1  # the gate's contract: 1 for a usage error, so CI never reads it as compatible


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--against",
        metavar="GIT-REF",
        help="the ref to compare with (default: the merge base of HEAD with the main branch)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--schema-dir", default="schema", help="the schema folder, relative to the repository root"
    )
    parser.add_argument("--baseline", type=Path, help="a JSON file of accepted breaks (see docs/gate.md)")
    parser.add_argument(
        "--matrix",
        choices=("auto", "always", "never"),
        default="auto",
        help="run the runtime matrix when the static check passes (auto), always, or never",
    )
    parser.add_argument(
        "--matrix-command",
        metavar="CMD",
        help="command that replaces 'python -m refitwire matrix' (shell words)",
    )
    parser.add_argument(
        "--require-matrix", action="store_true", help="exit 1 when the runtime matrix could not run"
    )
    parser.add_argument("--no-witness", action="store_true", help="skip the search for witness blobs")
    parser.add_argument(
        "--write-witnesses",
        metavar="DIR",
        type=Path,
        help="write each witness as a JSON vector file into DIR",
    )
    parser.add_argument("--output", "-o", type=Path, help="write the report here instead of stdout")


def run(args: argparse.Namespace) -> int:
    try:
        baseline = load_baseline(args.baseline) if args.baseline else []
        report = run_gate(
            Path.cwd(),
            against=args.against,
            schema_dir=args.schema_dir,
            baseline=baseline,
            matrix=args.matrix,
            matrix_command=shlex.split(args.matrix_command) if args.matrix_command else None,
            require_matrix=args.require_matrix,
            witnesses=not args.no_witness,
        )
    except GateError as exc:
        print(f"refitwire gate: {exc}", file=sys.stderr)
        return EXIT_ERROR
    text = render(report, args.format)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    if args.write_witnesses:
        written = write_witnesses(report, args.write_witnesses)
        print(f"refitwire gate: wrote {written} witness vector(s) to {args.write_witnesses}", file=sys.stderr)
    return report.exit_code


def write_witnesses(report: GateReport, folder: Path) -> int:
    """One JSON file per witness: the blob, who accepts and who rejects it, and the rule it proves."""
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for finding in report.findings:
        for witness in finding.witnesses:
            count += 1
            record = {
                "description": f"{finding.change.rule} at {finding.change.pointer or '/'}: "
                f"{finding.change.detail}",
                "rule": finding.change.rule,
                "pointer": finding.change.pointer,
                "file": finding.file,
                "against": finding.against,
                **witness.as_json(),
            }
            name = f"witness-{count:03d}-{finding.change.rule.lower()}-{witness.direction.lower()}.json"
            (folder / name).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return count
