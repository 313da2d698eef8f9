"""Run the whole suite against one implementation, in the roles it declares.

Both ways against the reference and every frozen generation: the golden vectors, then
seeded generated payloads. Exit 0 when every Required case passes, 1 otherwise; failing
cases are named with their IDs and where the output differs.
"""

from __future__ import annotations

import argparse

from refitwire.cli.matrix import add_common, finish, plan_options
from refitwire.compat import _participants as parts
from refitwire.compat._run import Plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--testee", required=True, metavar="CMD", help="the command that starts the testee")
    add_common(parser)


def run(args: argparse.Namespace) -> int:
    testee = parts.third_party(args.testee)
    testee = parts.Participant(f"testee: {testee.label}", testee.command, testee.kind)
    participants = [testee, *parts.reference(), *parts.generations()]
    return finish(Plan(participants, focus=testee.label, **plan_options(args)), args)
