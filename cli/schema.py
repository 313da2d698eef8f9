"""List the released schema documents, print one, or make a version (new, release).

``new VERSION`` scaffolds VERSION from the newest file of each document in the checkout's
schema/ folder; ``release VERSION`` writes its index entries (docs/gate.md, "Releasing").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from refitwire._registry import released, schema_bytes
from refitwire._spec import DOCUMENTS, LATEST
from refitwire.cli._io import fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every released document with its version and sha256")
    show = actions.add_parser("show", help="print one schema document")
    show.add_argument("document", choices=DOCUMENTS)
    show.add_argument("version", nargs="?", default=LATEST)
    for action, text in (
        ("new", "scaffold VERSION from the newest version"),
        ("release", "write VERSION's index entries"),
    ):
        sub = actions.add_parser(action, help=text)
        sub.add_argument("version", metavar="VERSION")
        sub.add_argument(
            "--schema-dir", type=Path, default=Path("schema"), help="the checkout's schema folder"
        )


def run(args: argparse.Namespace) -> int:
    if args.action in ("new", "release"):
        return _make(args)
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


def _make(args: argparse.Namespace) -> int:
    from refitwire.gate._errors import GateError
    from refitwire.gate._scaffold import new_version, release

    try:
        if args.action == "new":
            for path in new_version(args.schema_dir, args.version):
                print(f"wrote {path}")
            print(f"next: edit the {args.version} files and the SPEC.md row, then run `refitwire gate`")
        else:
            for entry in release(args.schema_dir, args.version):
                print(f"released {entry['path']} sha256 {entry['sha256']}")
            print("next: commit schema/ with the index; the gate checks the release on the pull request")
    except GateError as exc:
        return fail(str(exc), 1)
    return 0
