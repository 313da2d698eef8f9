"""Run the whole suite against one implementation, in the roles it declares.

Both ways against the reference at each version, every frozen generation and (when their
environments are built) the released modelexpress versions: the golden vectors, payloads
a writer must refuse, the size limit, then seeded generated payloads. Exit 0 when every
Required case passes, 1 otherwise (--enforce-recommended: every Recommended case too);
failures are grouped by symptom, each with example case IDs that --case reruns alone.
"""

from __future__ import annotations

import argparse

from refitwire.cli.matrix import add_common, finish, plan_options, upstream_participants
from refitwire.compat import _participants as parts
from refitwire.compat._run import Plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testee", required=True, metavar="CMD", help="the command that starts the testee")
    add_common(parser)
    parser.add_argument("--no-size-limit", dest="size_limit", action="store_false",
                        help="skip the two 64 MiB size-limit cases")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    testee = parts.third_party(args.testee)
    testee = parts.Participant(f"testee: {testee.label}", testee.command, testee.kind)
    unavailable: list[str] = []
    upstream, upstream_ran = upstream_participants(args, unavailable)
    participants = [testee, *parts.reference(), *parts.generations(), *upstream]
    plan = Plan(participants, focus=testee.label, unavailable=unavailable, upstream=upstream_ran,
                **plan_options(args))  # fmt: skip
    return finish(plan, args)
