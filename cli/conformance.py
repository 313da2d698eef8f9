"""Run the whole suite against one implementation, in the roles it declares.

Both ways against the reference at each version, every frozen generation and (when their
environments are built) the released modelexpress versions: the golden vectors, payloads
a writer must refuse, the size limit, then seeded generated payloads. The implementation is
a --testee command or a ModelExpress source tree (--upstream-src; its digest is checked
too). Exit 0 when every Required case passes, 1 otherwise (--enforce-recommended: every
Recommended case too; --baseline-report: only failures new against that report count);
failures are grouped by symptom, each with example case IDs that --case reruns alone.
"""

from __future__ import annotations

import argparse
import sys

from refitwire.cli import USAGE_EXIT
from refitwire.cli._errors import Usage
from refitwire.cli._io import fail
from refitwire.cli.matrix import (
    add_common,
    finish,
    plan_options,
    source_participant,
    upstream_participants,
)
from refitwire.compat import Participant, Plan, case_needs_peers, generations, reference, third_party
from refitwire.wire import Registry


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument("--testee", metavar="CMD", help="the command that starts the testee")
    add_common(parser)
    parser.add_argument("--no-size-limit", dest="size_limit", action="store_false",
                        help="skip the two 64 MiB size-limit cases")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if not args.testee and not args.upstream_src:  # a usage error, worded as the parser words them
        print(
            "refitwire conformance: error: one of --testee CMD or --upstream-src PATH is required",
            file=sys.stderr,
        )
        raise SystemExit(USAGE_EXIT)
    try:
        under_test = source_participant(args)
        if args.testee:
            testee = third_party(args.testee)
            under_test.insert(
                0, Participant(f"testee: {testee.label}", testee.command, testee.kind, testee.provisional)
            )
        unavailable: list[str] = []
        if case_needs_peers(args.case):
            upstream, upstream_ran = upstream_participants(args, unavailable, build=bool(args.upstream_src))
        else:  # a case asked of the testee alone: nothing released is looked for, built or started
            upstream, upstream_ran = [], f"not needed (--case {args.case} is asked of the testee alone)"
        schema_dir = args.schema_dir.resolve() if args.schema_dir else None
        participants = [*under_test, *reference(args.registry), *generations(args.registry)[0], *upstream]
        plan = Plan(participants, focus=[p.label for p in under_test], unavailable=unavailable,
                    upstream=upstream_ran, schema_dir=schema_dir, **plan_options(args, under_test))  # fmt: skip
    except Usage as exc:
        return fail(str(exc))
    return finish(plan, args)
