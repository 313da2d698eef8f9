"""Check blobs against every spec version; name each broken rule and its JSON pointer.

Exit 0 when every file is valid under --spec-version (default: the latest), 1 otherwise
(an unreadable file is reported and the others are still checked). --json prints one JSON
object per line and file: pointers as RFC 6901 (the root is ""), values as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from refitwire import InvalidBlob
from refitwire.cli._io import fail, read_input
from refitwire.engine import blob_limit, latest, parse, violations
from refitwire.wire import Registry


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
    for version, found in report.items():
        lines += [f"  {version}: {violation}" for violation in found]
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


def as_json_value(value: Any) -> Any:
    """The offending value as JSON: JSON values as they are, raw bytes as text, and the
    non-finite numbers (which JSON cannot hold) by name."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {str(key): as_json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json_value(item) for item in value]
    return str(value)
