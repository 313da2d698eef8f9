"""List the released schema documents, print one, or make a version (new, release).

``new VERSION`` scaffolds VERSION from the newest file of each document in the checkout's
schema/ folder; ``release VERSION`` writes its index entries (docs/gate.md, "Releasing").
``export DIR`` writes the schema folder the kit ships (a pip-installed kit has no checkout to
scaffold in): ``refitwire schema export DIR`` then ``refitwire schema new VERSION --schema-dir DIR``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from refitwire import latest
from refitwire.cli._io import fail
from refitwire.wire import Registry, released, schema_bytes


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every released document with its version and sha256")
    show = actions.add_parser("show", help="print one schema document")
    show.add_argument("document", choices=registry.documents)
    show.add_argument("version", nargs="?", default=latest(registry))
    export = actions.add_parser("export", help="write the packaged schema folder into DIR (a new folder)")
    export.add_argument("dir", metavar="DIR", type=Path)
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
    if args.action == "export":
        return _export(args.dir)
    if args.action == "list":
        for document, entries in released(args.registry)["documents"].items():
            for entry in entries:
                print(f"{document:12} {entry['version']:7} {entry['sha256']}  {entry['path']}")
        return 0
    path = f"{args.document}/{args.version}.json"
    if not any(e["path"] == path for e in released(args.registry)["documents"][args.document]):
        return fail(f"no released {args.document} schema at version {args.version}")
    sys.stdout.write(schema_bytes(path, args.registry).decode("utf-8"))
    return 0


def _make(args: argparse.Namespace) -> int:
    from refitwire.gate import GateError, new_version, release

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


def _export(folder: Path) -> int:
    """Copy every packaged schema file (documents, index, SPEC.md, vectors, protocol) into ``folder``."""
    from importlib import resources

    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        return fail(f"{folder}: exists and is not an empty folder")
    count = 0

    def copy(node: Any, into: Path) -> None:
        nonlocal count
        for entry in node.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    copy(entry, into / entry.name)
            elif not entry.name.endswith((".py", ".pyc")):
                into.mkdir(parents=True, exist_ok=True)
                (into / entry.name).write_bytes(entry.read_bytes())
                count += 1

    copy(resources.files("refitwire.schema"), folder)
    print(f"wrote {count} files to {folder}")
    print(f"next: refitwire schema new VERSION --schema-dir {folder}")
    return 0
