"""Decode a blob into a readable table of tensors and shards (or the neutral JSON form)."""

from __future__ import annotations

import argparse
import base64
import json
from collections.abc import Iterator
from typing import Any

from refitwire import (
    InvalidBlob,
    RendezvousPayload,
    latest,
    to_decoded,
    unwrap_rendezvous_blob,
)
from refitwire.cli._io import fail, read_input
from refitwire.wire import Level, Member, Registry, check_version, decoded_members


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("file", metavar="FILE", help="blob file ('-' for stdin)")
    parser.add_argument(
        "--spec-version",
        choices=registry.known_versions(),
        default=latest(registry),
        help="read as this version",
    )
    parser.add_argument("--json", action="store_true", help="print the decoded form the vectors use")


def run(args: argparse.Namespace) -> int:
    try:
        payload = unwrap_rendezvous_blob(
            read_input(args.file), spec_version=args.spec_version, registry=args.registry
        )
    except OSError as exc:
        return fail(f"{args.file}: {exc.strerror}")
    except InvalidBlob as exc:
        return fail(f"{args.file}: {exc}", code=1)
    if args.json:
        print(json.dumps(to_decoded(payload, args.spec_version, args.registry), indent=2))
    else:
        print(render(payload, args.registry, args.spec_version))
    return 0


def render(payload: RendezvousPayload, registry: Registry, spec_version: str | None = None) -> str:
    """The decoded form as text: the top level's members, then one row per item of the
    deepest level (a shard) beside its parents' members. Every line and column is a member of
    the wire model at ``spec_version`` (default: the newest released), in the schema's order, so
    a new member shows unedited."""
    spec_version = check_version(registry, spec_version)
    model = registry.wire_model("rendezvous", spec_version)
    decoded = to_decoded(payload, spec_version, registry)
    top = decoded_members(model.top)
    width = max(len(m.name) for m in top)
    lines = [
        f"{m.name.ljust(width)}  {len(decoded[m.name]) if m.child else _cell(m, decoded[m.name])}"
        for m in top
    ]
    levels, holder = [], next((m for m in top if m.child is not None), None)
    while holder is not None and holder.child is not None:  # down the arrays of objects
        levels.append(model.level(*holder.child))
        holder = next((m for m in decoded_members(levels[-1]) if m.child is not None), None)
    columns = [
        (depth, m) for depth, level in enumerate(levels) for m in decoded_members(level) if m.child is None
    ]
    names = [m.name for _, m in columns]
    rows = [[m.name if names.count(m.name) == 1 else f"{levels[d].path[-1]}.{m.name}" for d, m in columns]]
    rows += [[_cell(m, items[d][m.name]) for d, m in columns] for items in _rows(decoded, levels)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines += ["", *("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)]
    return "\n".join(lines)


def _rows(obj: dict[str, Any], levels: list[Level]) -> Iterator[list[dict[str, Any]]]:
    """For each item of the deepest level: the item of every level on its way to it."""
    if not levels:
        yield []
        return
    for item in obj[levels[0].path[-1]] or []:
        for rest in _rows(item, levels[1:]):
            yield [item, *rest]


def _cell(member: Member, value: Any) -> str:
    """A value as the table shows it: addresses in hex, the agent metadata by size, arrays as [a,b]."""
    if value is None:
        return "-"
    if member.rule == "ADDR_RANGE" and isinstance(value, int):
        return hex(value)
    if member.rule == "AGENT_META_BASE64" and isinstance(value, str):
        return f"{len(base64.b64decode(value))} bytes"
    if isinstance(value, list):
        return "[" + ",".join(_cell(member.items or member, v) for v in value) + "]"
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value)
