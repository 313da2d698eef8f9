"""List the released schema documents, or print one."""

from __future__ import annotations

import argparse
import sys

from refitwire._registry import released, schema_bytes
from refitwire._spec import DOCUMENTS, LATEST
from refitwire.cli._io import fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every released document with its version and sha256")
    show = actions.add_parser("show", help="print one schema document")
    show.add_argument("document", choices=DOCUMENTS)
    show.add_argument("version", nargs="?", default=LATEST)


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for document, entries in released()["documents"].items():
            for entry in entries:
                print(f"{document:12} {entry['version']:7} {entry['sha256']}  {entry['path']}")
        return 0
    path = f"{args.document}/{args.version}.json"
    if not any(e["path"] == path for e in released()["documents"][args.document]):
        return fail(f"no released {args.document} schema at version {args.version}")
    sys.stdout.write(schema_bytes(path).decode("utf-8"))
    return 0
