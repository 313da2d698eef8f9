"""Print the per-shard digest of each file's bytes, like sha256sum: '<32 hex>  <FILE>'."""

from __future__ import annotations

import argparse
import mmap
import sys
from pathlib import Path

from refitwire import tensor_digest
from refitwire.cli._io import fail
from refitwire.wire import Registry


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="files to digest ('-' for stdin)")


def run(args: argparse.Namespace) -> int:
    status = 0
    for name in args.files:
        try:
            digest = _digest_stdin() if name == "-" else _digest_file(Path(name))
        except OSError as exc:
            status = fail(f"{name}: {exc.strerror}", code=1)
            continue
        print(f"{digest}  {name}")
    return status


def _digest_stdin() -> str:
    return tensor_digest(sys.stdin.buffer.read())


def _digest_file(path: Path) -> str:
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            return tensor_digest(b"")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return tensor_digest(memoryview(mapped))
