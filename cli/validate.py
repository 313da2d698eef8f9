"""Check blobs against every spec version; name each broken rule and its JSON pointer.

Exit 0 when every file is valid under --spec-version (default: the latest), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from refitwire import LATEST, SPEC_VERSIONS, InvalidBlob
from refitwire._validate import parse, violations
from refitwire.cli._io import fail, read_input


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="blob files ('-' for stdin)")
    parser.add_argument("--document", choices=("rendezvous", "shard-table"), default="rendezvous")
    parser.add_argument("--spec-version", choices=SPEC_VERSIONS, default=LATEST)
    parser.add_argument("--json", action="store_true", help="one JSON object per file")


def run(args: argparse.Namespace) -> int:
    worst = 0
    for name in args.files:
        try:
            blob = read_input(name)
        except OSError as exc:
            return fail(f"{name}: {exc.strerror}")
        report = check_file(blob, args.document)
        if report[args.spec_version]:
            worst = 1
        print(json.dumps({"file": name, **_as_json(report)}) if args.json else _as_text(name, report))
    return worst


def check_file(blob: bytes, document: str) -> dict[str, list[Any]]:
    """Violations per spec version (an empty list means the blob conforms)."""
    try:
        parsed = parse(blob)
    except InvalidBlob as exc:
        return {v: list(exc.violations) for v in SPEC_VERSIONS}
    return {v: violations(parsed, document, v) for v in SPEC_VERSIONS}


def _as_text(name: str, report: dict[str, list[Any]]) -> str:
    conforms = [v for v, found in report.items() if not found]
    lines = [f"{name}: {'conforms to ' + ', '.join(conforms) if conforms else 'INVALID under every version'}"]
    for version, found in report.items():
        lines += [f"  {version}: {violation}" for violation in found]
    return "\n".join(lines)


def _as_json(report: dict[str, list[Any]]) -> dict[str, Any]:
    return {
        "conforms": [v for v, found in report.items() if not found],
        "violations": {
            v: [
                {"rule": x.rule, "pointer": x.pointer, "detail": x.detail, "value": repr(x.value)}
                for x in found
            ]
            for v, found in report.items()
            if found
        },
    }
