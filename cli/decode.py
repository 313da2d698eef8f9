"""Decode a blob into a readable table of tensors and shards (or the neutral JSON form)."""

from __future__ import annotations

import argparse
import json

from refitwire import (
    LATEST,
    InvalidBlob,
    RendezvousPayload,
    to_decoded,
    unwrap_rendezvous_blob,
)
from refitwire.cli._io import fail, read_input
from refitwire.wire import known_versions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="blob file ('-' for stdin)")
    parser.add_argument(
        "--spec-version", choices=known_versions(), default=LATEST, help="read as this version"
    )
    parser.add_argument("--json", action="store_true", help="print the decoded form the vectors use")


def run(args: argparse.Namespace) -> int:
    try:
        payload = unwrap_rendezvous_blob(read_input(args.file), spec_version=args.spec_version)
    except OSError as exc:
        return fail(f"{args.file}: {exc.strerror}")
    except InvalidBlob as exc:
        return fail(f"{args.file}: {exc}", code=1)
    if args.json:
        print(json.dumps(to_decoded(payload, args.spec_version), indent=2))
    else:
        print(render(payload))
    return 0


def render(payload: RendezvousPayload) -> str:
    step = "unknown" if payload.publisher_step is None else str(payload.publisher_step)
    lines = [
        f"agent      {payload.agent_name}",
        f"endpoint   {payload.metadata_endpoint or '(none)'}",
        f"metadata   {len(payload.agent_metadata)} bytes",
        f"step       {step}",
        f"tensors    {len(payload.tensors)}",
        "",
    ]
    rows = [("tensor", "dtype", "full_shape", "agent", "dev", "addr", "offset", "shape", "digest")]
    for t in payload.tensors:
        for s in t.shards:
            rows.append((
                t.name, t.dtype, _dims(t.full_shape), s.agent_name, str(s.device_id), hex(s.addr),
                _dims(s.shard_offset), _dims(s.shape), s.digest or "-",
            ))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _dims(dims: tuple[int, ...]) -> str:
    return "[" + ",".join(map(str, dims)) + "]"
