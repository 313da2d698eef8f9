"""Check blobs against every spec version; name each broken rule and its JSON pointer.

Exit 0 when every file is valid under --spec-version (default: the latest), 1 otherwise
(an unreadable file is reported and the others are still checked). The text names each
finding once, after the versions it holds under (``1.1.0, 1.2.0: "ABC" at ...``), values as
JSON. --json prints one JSON object per line and file: pointers as RFC 6901 (the root is ""),
values as JSON.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from refitwire import InvalidBlob, latest, violations
from refitwire.cli._io import fail, read_input
from refitwire.wire import Registry, as_json_value, blob_limit, parse


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="blob files ('-' for stdin)")
    parser.add_argument("--document", choices=("rendezvous", "shard-table"), default="rendezvous")
    parser.add_argument("--spec-version", choices=registry.known_versions(), default=latest(registry))
    parser.add_argument("--json", action="store_true", help="one JSON object per file")


def run(args: argparse.Namespace) -> int:
    worst = 0
    for name in args.files:
        try:
            blob = read_input(name)
        except OSError as exc:
            worst = fail(f"{name}: {exc.strerror}", code=1)
            if args.json:
                print(json.dumps({"file": name, "error": exc.strerror}))
            continue
        report = check_file(blob, args.document, args.registry)
        if report[args.spec_version]:
            worst = 1
        if args.json:
            print(json.dumps({"file": name, **_as_json(report)}, allow_nan=False))
        else:
            print(_as_text(name, report))
    return worst


def check_file(blob: bytes, document: str, registry: Registry) -> dict[str, list[Any]]:
    """Violations per spec version (an empty list means the blob conforms)."""
    parsed: dict[int, dict[str, Any] | InvalidBlob] = {}  # parsed once per size limit the versions have
    report: dict[str, list[Any]] = {}
    for version in registry.known_versions(document):
        limit = blob_limit(registry, version)
        if limit not in parsed:
            try:
                parsed[limit] = parse(blob, version, registry=registry)
            except InvalidBlob as exc:
                parsed[limit] = exc
        found = parsed[limit]
        report[version] = (
            list(found.violations)
            if isinstance(found, InvalidBlob)
            else violations(found, document, version, registry)
        )
    return report


def _as_text(name: str, report: dict[str, list[Any]]) -> str:
    conforms = [v for v, found in report.items() if not found]
    lines = [f"{name}: {'conforms to ' + ', '.join(conforms) if conforms else 'INVALID under every version'}"]
    shared: dict[str, list[str]] = {}  # a finding as it reads -> the versions it is found under
    for version, found in report.items():
        for violation in found:
            versions = shared.setdefault(str(violation), [])
            if version not in versions:  # (the same line twice under one version says it once)
                versions.append(version)
    lines += [f"  {', '.join(versions)}: {finding}" for finding, versions in shared.items()]
    return "\n".join(lines)


def _as_json(report: dict[str, list[Any]]) -> dict[str, Any]:
    return {
        "conforms": [v for v, found in report.items() if not found],
        "violations": {
            v: [
                {"rule": x.rule, "pointer": x.pointer, "detail": x.detail, "value": as_json_value(x.value)}
                for x in found
            ]
            for v, found in report.items()
            if found
        },
    }
