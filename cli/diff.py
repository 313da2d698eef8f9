"""Compare two schema documents and name every change with a stable rule ID.

OLD and NEW are files or REF:path in the git history. Each change is printed with its rule
ID, JSON pointer, the direction it breaks and a severity, and every breaking change with a
witness blob (or "no witness found"). Exit 0 when nothing breaks, 100 when something does,
1 on bad input (an unreadable or malformed schema, a broken git ref), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from refitwire.gate import (
    EXIT_ERROR,
    FORMATS,
    GateError,
    GateReport,
    MatrixOutcome,
    compare,
    load_document,
    read_source,
    render,
)
from refitwire.wire import Registry


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("old", metavar="OLD", help="the old schema document (file or REF:path)")
    parser.add_argument("new", metavar="NEW", help="the new schema document (file or REF:path)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--no-witness", action="store_true", help="skip the search for witness blobs")


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    try:
        old = load_document(args.old, read_source(args.old, cwd))
        new = load_document(args.new, read_source(args.new, cwd))
    except GateError as exc:
        print(f"refitwire diff: {exc}", file=sys.stderr)
        return EXIT_ERROR
    findings = compare(old, new, args.new, witnesses=not args.no_witness, registry=args.registry)
    report = GateReport(
        args.old,
        "",
        (args.new,),
        ((args.old, args.new),),
        tuple(findings),
        MatrixOutcome("not-run", "diff compares schemas only"),
    )
    print(render(report, args.format, tool="diff", root=cwd))
    return report.exit_code
