"""Run every participant against every other and print the writer x reader matrix.

Participants: the reference at each spec version, the frozen generations, the released
upstream readers and writers (from their own environments), the JavaScript example, and
any --testee given. Exit 0 when no Required case fails and no expected failure passes.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path
from typing import Any

from refitwire.compat import _participants as parts
from refitwire.compat import _report
from refitwire.compat._run import Plan
from refitwire.compat._session import execute

FORMATS = ("text", "markdown", "json", "junit")


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--output", metavar="FILE", help="also write the JSON-lines report here")
    parser.add_argument("--seed", type=int, help="seed for the generated payloads (default: random, printed)")
    parser.add_argument("--examples", type=int, default=200, help="generated payloads per run (default 200)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    parser.add_argument("--no-check-messages", action="store_true", help="skip validating protocol messages")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument(
        "--testee", action="append", default=[], metavar="CMD", help="add a third-party testee"
    )
    parser.add_argument("--no-upstream", action="store_true", help="leave out the released upstream packages")
    parser.add_argument(
        "--build-upstream", action="store_true", help="build missing upstream environments first"
    )
    parser.add_argument(
        "--schema-dir",
        type=Path,
        metavar="DIR",
        help="a schema/ folder: its unreleased versions join as candidates",
    )


def run(args: argparse.Namespace) -> int:
    participants = parts.reference() + parts.generations()
    unavailable: list[str] = []
    if not args.no_upstream:
        found, missing = parts.upstream(build=args.build_upstream)
        participants += found
        unavailable += missing
    js, missing = parts.javascript()
    participants += js
    unavailable += missing
    participants += [parts.third_party(cmd) for cmd in args.testee]
    schema_dir = args.schema_dir.resolve() if args.schema_dir else None
    if schema_dir:
        participants += parts.candidates(schema_dir)
    return finish(
        Plan(participants, unavailable=unavailable, schema_dir=schema_dir, **plan_options(args)), args
    )


def plan_options(args: argparse.Namespace) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    return {
        "seed": seed,
        "examples": args.examples,
        "timeout_s": args.timeout,
        "check_messages": not args.no_check_messages,
    }


def finish(plan: Plan, args: argparse.Namespace) -> int:
    print(f"refitwire: seed {plan.seed} (rerun with --seed {plan.seed})", file=sys.stderr)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as out:
            lines = execute(plan, out)
    else:
        lines = execute(plan)
    print(_report.render(lines, args.format))
    return 0 if _report.ok(lines[-1]) else 1
