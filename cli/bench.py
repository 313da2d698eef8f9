"""Measure decode, quorum read, encode, validation, digest and NIXL reads beside their anchors.

Each figure is printed beside what it is compared with (the released upstream, run from
its own environment when built; json/orjson; memcpy), with ratios and the goals met.
Measurements never run in the test suite except once, at tiny size (--quick).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from refitwire.cli import USAGE_EXIT
from refitwire.wire import Registry


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to prove the bench runs")
    parser.add_argument("--repeats", type=int, default=None, metavar="N", help="repetitions per figure")
    parser.add_argument(
        "--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON"
    )


def run(args: argparse.Namespace) -> int:
    from refitwire.bench import Settings, render_results, run_bench

    if args.repeats is not None and args.repeats < 1:
        print("refitwire: --repeats must be at least 1", file=sys.stderr)
        return USAGE_EXIT
    settings = Settings.tiny(args.repeats) if args.quick else Settings.full(args.repeats)
    result = run_bench(settings, log=lambda msg: print(f"bench: {msg}", file=sys.stderr, flush=True))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    sys.stdout.write(render_results(result))
    return 0
