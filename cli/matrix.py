"""Run every participant against every other and print the writer x reader matrix.

Participants: the reference at each spec version, the frozen generations, the released
upstream readers and writers (from their own environments), the JavaScript example, and
any --testee given. Exit 0 when no Required case fails and no expected failure passes
(with --enforce-recommended, no Recommended case fails either).
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
from pathlib import Path
from typing import Any

from refitwire.compat import _participants as parts
from refitwire.compat import _render, _report, _rerun
from refitwire.compat._run import Plan, start_all, stop_all
from refitwire.compat._session import execute

FORMATS = ("text", "wide", "markdown", "json", "junit", "html")  # text: a grid for 100 columns


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--output", metavar="FILE", help="also write the JSON-lines report here, line by line"
    )
    parser.add_argument("--seed", type=int, help="seed for the generated payloads (default: random, printed)")
    parser.add_argument("--examples", type=int, default=200, help="generated payloads per run (default 200)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    parser.add_argument("--no-check-messages", action="store_true", help="skip validating protocol messages")
    parser.add_argument("--enforce-recommended", action="store_true",
                        help="a Recommended failure fails the run (exit 1) and the JUnit report")  # fmt: skip
    parser.add_argument("--case", metavar="ID", help="rerun one case alone and show every answer in full")
    parser.add_argument("--no-upstream", action="store_true", help="leave out the released upstream packages")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    # Off by default here: two 64 MiB blobs per reader cost seconds each, and the gate runs
    # the matrix for every wire change; conformance runs them for its one testee.
    parser.add_argument("--size-limit", dest="size_limit", action="store_true",
                        help="also send every reader the two 64 MiB size-limit blobs")  # fmt: skip
    parser.add_argument(
        "--testee", action="append", default=[], metavar="CMD", help="add a third-party testee"
    )
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
    found, upstream_ran = upstream_participants(args, unavailable, build=args.build_upstream)
    participants += found
    js, missing = parts.javascript()
    participants += js
    unavailable += missing
    participants += [parts.third_party(cmd) for cmd in args.testee]
    schema_dir = args.schema_dir.resolve() if args.schema_dir else None
    if schema_dir:
        participants += parts.candidates(schema_dir)
    plan = Plan(participants, unavailable=unavailable, schema_dir=schema_dir, upstream=upstream_ran,
                **plan_options(args))  # fmt: skip
    return finish(plan, args)


def upstream_participants(
    args: argparse.Namespace, unavailable: list[str], build: bool = False
) -> tuple[list[parts.Participant], str]:
    """The released modelexpress participants, and what the report says about them."""
    if args.no_upstream:
        return [], "left out (--no-upstream)"
    found, missing = parts.upstream(build=build)
    unavailable += missing
    if found and not missing:
        return found, "ran"
    return found, "partly built, partly ran" if found else "not built (not run)"


def plan_options(args: argparse.Namespace) -> dict[str, Any]:
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    return {
        "seed": seed,
        "examples": args.examples,
        "timeout_s": args.timeout,
        "check_messages": not args.no_check_messages,
        "limits": args.size_limit,
        "only": args.case,
    }


def finish(plan: Plan, args: argparse.Namespace) -> int:
    print(f"refitwire: seed {plan.seed} (rerun with --seed {plan.seed})", file=sys.stderr)
    if args.case and not _rerun.known(plan, args.case):
        print(f"refitwire: no case {args.case} (seed {plan.seed}, {plan.examples} examples)", file=sys.stderr)
        return 2
    with _open(args.output) as out:
        lines = execute(plan, out)
    report = _report.read_report(_json_lines(lines))
    if args.case:
        started, _ = start_all(plan)
        try:
            print("\n".join(_rerun.describe(plan, started, args.case)))
        finally:
            stop_all(started)
        print()
    if args.case and args.format == "text":  # one case: its verdicts, without the matrix
        print("\n".join(_render.summary(report, args.enforce_recommended)))
    elif args.format == "html":  # one self-contained page, as `refitwire report --html` writes it
        from refitwire.compat import _html

        print(_html.page(report, enforce_recommended=args.enforce_recommended))
    else:
        print(_render.render(report, args.format, enforce_recommended=args.enforce_recommended))
    return 0 if _report.ok(report.footer, enforce_recommended=args.enforce_recommended) else 1


@contextlib.contextmanager
def _open(path: str | None) -> Any:
    if path is None:
        yield None
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        yield out


def _json_lines(lines: list[dict[str, Any]]) -> list[str]:
    import json

    return [json.dumps(line) for line in lines]


__all__ = ["add_arguments", "add_common", "finish", "plan_options", "run", "upstream_participants"]
