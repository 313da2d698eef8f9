"""Run every participant against every other and print the writer x reader matrix.

Participants: the reference at each spec version, the frozen generations, the released
upstream readers and writers (from their own environments), the JavaScript example, any
--testee given, and a ModelExpress source tree (--upstream-src, run beside the released
versions). Exit 0 when no Required case fails and no expected failure passes (with
--enforce-recommended, no Recommended case fails either); with --baseline-report, when
no Required failure is new against that report. A run that checked nothing exits 1 and
says why.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import shlex
import sys
from pathlib import Path
from typing import Any

from refitwire.cli import USAGE_EXIT
from refitwire.cli._errors import Usage
from refitwire.cli._io import fail
from refitwire.compat import (
    HANDSHAKE_CASE,
    BaseMismatch,
    Outcome,
    Participant,
    Plan,
    Report,
    ReportError,
    candidates,
    compare_with_base,
    describe_case,
    errored_run,
    generations,
    javascript,
    knows_case,
    load_expected_failures,
    read_report,
    reference,
    render_base_comparison,
    render_report,
    render_summary,
    report_ok,
    run_report,
    third_party,
    upstream,
    upstream_source,
    without_base_failures,
)
from refitwire.wire import Registry

FORMATS = ("text", "wide", "markdown", "json", "junit", "html")  # text: a grid for 100 columns


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--output", metavar="FILE", help="also write the JSON-lines report here, line by line"
    )
    parser.add_argument("--seed", type=int, help="seed for the generated payloads (default: random, printed)")
    parser.add_argument(
        "--examples", type=int, help="generated payloads per run (default 200, or the base's)"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    parser.add_argument("--startup-timeout", type=float, default=120.0, metavar="S",
                        help="seconds each participant may take to start and answer the handshake, from its "
                             "own start, apart from --timeout (default 120)")  # fmt: skip
    parser.add_argument("--no-check-messages", action="store_true", help="skip validating protocol messages")
    parser.add_argument("--enforce-recommended", action="store_true",
                        help="a Recommended failure fails the run (exit 1) and the JUnit report")  # fmt: skip
    parser.add_argument("--case", metavar="ID", help="rerun one case alone and show every answer in full")
    parser.add_argument("--no-upstream", action="store_true", help="leave out the released upstream packages")
    parser.add_argument(
        "--upstream-src",
        type=Path,
        metavar="PATH",
        help="a ModelExpress checkout (or unpacked sdist): its own reader and writer join, "
        "beside the released versions (their environments are built when missing)",
    )
    parser.add_argument(
        "--upstream-spec-version",
        metavar="VERSION",
        help="the spec version the --upstream-src tree implements and declares (default: the newest "
        "candidate of --schema-dir, else the released trees' version); the members it adds are "
        "handed to the tree's writer where its API takes them",
    )
    parser.add_argument(
        "--baseline-report",
        type=Path,
        metavar="FILE",
        help="judge only what is new against this JSON-lines report of the base "
        "(its seed and examples are reused)",
    )
    parser.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help="expected failures (the compat/expected-failures format) of the testee and "
        "source tree named here, whatever they call themselves",
    )
    parser.add_argument("--schema-dir", type=Path, metavar="DIR",
                        help="a schema/ folder: its unreleased versions are known (matrix: they join as "
                             "candidates)")  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
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
    parser.add_argument("--only-under-test", action="store_true",
                        help="run only the cells joining a --testee or --upstream-src participant with "
                             "another (what the gate compares with its base)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        frozen, unavailable = generations(args.registry)
        participants = reference(args.registry) + frozen
        source = source_participant(args)
        found, upstream_ran = upstream_participants(
            args, unavailable, build=args.build_upstream or bool(source)
        )
        participants += found
        js, missing = javascript()
        participants += js
        unavailable += missing
        testees = [third_party(cmd) for cmd in args.testee] + source
        participants += testees
        schema_dir = args.schema_dir.resolve() if args.schema_dir else None
        if schema_dir:
            participants += candidates(schema_dir, args.registry)
        focus = [p.label for p in testees] if args.only_under_test and testees else None
        plan = Plan(participants, unavailable=unavailable, schema_dir=schema_dir, upstream=upstream_ran,
                    focus=focus, **plan_options(args, testees))  # fmt: skip
    except Usage as exc:
        return fail(str(exc))
    return finish(plan, args)


def source_participant(args: argparse.Namespace) -> list[Participant]:
    """The --upstream-src tree as a participant (its environment built when missing), or none."""
    if args.upstream_src is None:
        return []
    from refitwire.compat.upstream.envs import EnvBuildError

    try:
        found = upstream_source(
            args.upstream_src,
            log=lambda m: print(f"refitwire: {m}", file=sys.stderr),
            spec_version=getattr(args, "upstream_spec_version", None),
            schema_dir=args.schema_dir.resolve() if getattr(args, "schema_dir", None) else None,
            registry=args.registry,
        )
    except ValueError as exc:  # SourceError
        raise Usage(f"--upstream-src {exc}") from None
    except EnvBuildError as exc:
        raise Usage(f"--upstream-src: its environment could not be built: {exc}") from None
    print(f"refitwire: source tree {args.upstream_src} runs as {found.label}", file=sys.stderr)
    return [found]


def upstream_participants(
    args: argparse.Namespace, unavailable: list[str], build: bool = False
) -> tuple[list[Participant], str]:
    """The released modelexpress participants, and what the report says about them."""
    if args.no_upstream:
        return [], "left out (--no-upstream)"
    from refitwire.compat.upstream.envs import EnvBuildError

    try:
        found, missing = upstream(build=build)
    except EnvBuildError as exc:
        found, missing = [], [f"modelexpress {exc.version}: environment could not be built ({exc.step})"]
    unavailable += missing
    if found and not missing:
        return found, "ran"
    return found, "partly built, partly ran" if found else "not built (not run)"


def plan_options(args: argparse.Namespace, testees: list[Participant]) -> dict[str, Any]:
    """The plan's settings from the flags; with --baseline-report, the base's seed and examples
    unless given. ``testees``: the participants named on the command line."""
    base = load_base(args.baseline_report) if args.baseline_report else None
    seed = args.seed if args.seed is not None else base.header.seed if base else secrets.randbelow(2**32)
    examples = args.examples if args.examples is not None else base.header.examples if base else 200
    listed = {}
    if args.expected_failures is not None:
        try:
            table = load_expected_failures(args.expected_failures)
        except ValueError as exc:
            raise Usage(f"--expected-failures {exc}") from None
        listed = {t.label: table for t in testees}
    return {
        "registry": args.registry,
        "seed": seed,
        "examples": examples,
        "timeout_s": args.timeout,
        "startup_timeout_s": args.startup_timeout,
        "check_messages": not args.no_check_messages,
        "limits": args.size_limit,
        "only": args.case,
        "expected_failures": listed,
    }


def load_base(path: Path) -> Report:
    try:
        return read_report(path)
    except (OSError, ReportError) as exc:
        raise Usage(f"--baseline-report {path}: {exc}") from None


def finish(plan: Plan, args: argparse.Namespace) -> int:
    print(f"refitwire: seed {plan.seed} (rerun with --seed {plan.seed})", file=sys.stderr)
    if args.case and not knows_case(plan, args.case):
        print(f"refitwire: no case {args.case} (seed {plan.seed}, {plan.examples} examples)", file=sys.stderr)
        return USAGE_EXIT
    described: list[str] = []

    def describe(started: list[Any]) -> None:
        described.extend(describe_case(plan, started, args.case))

    with _open(args.output) as out:  # each line written once; the typed report is never read back
        report = run_report(plan, out, then=describe if args.case else None)
    print(f"refitwire: {where_written(args.output)}", file=sys.stderr)
    delta = None
    if args.baseline_report:  # judged against the base (its own failures are counted, not relisted, there)
        try:
            delta = compare_with_base(report, load_base(args.baseline_report))
        except BaseMismatch as exc:
            return fail(f"--baseline-report {args.baseline_report}: {exc}")
    if args.case:
        print("\n".join(described))
        print()
    if args.case and args.format == "text":  # one case: its verdicts, without the matrix
        print("\n".join(render_summary(report, args.enforce_recommended)))
    elif args.format == "html":  # one self-contained page, as `refitwire report --html` writes it
        from refitwire.compat import html_page

        print(html_page(report, enforce_recommended=args.enforce_recommended))
    else:  # against a base, the base's own failures are counted in its report, not listed again here
        shown = without_base_failures(report, delta) if delta is not None else report
        print(render_report(shown, args.format, enforce_recommended=args.enforce_recommended))
    nothing = checked_nothing(report)
    if nothing:
        return fail(f"the run checked nothing: {nothing}", 1)
    crashes = errored_run(report.footer)
    if crashes:  # no verdict: the kit's own bug, not the testee's (each traceback is in the report)
        return fail(
            f"the run errored: the kit crashed on {crashes} case(s), a bug in refitwire, not in the "
            "implementation under test (the tracebacks are in the report, symptom 'the kit crashed')",
            1,
        )
    if delta is not None:
        print("\n".join(render_base_comparison(delta, str(args.baseline_report), args.enforce_recommended)))
        return 0 if delta.ok(args.enforce_recommended) else 1
    return 0 if report_ok(report.footer, enforce_recommended=args.enforce_recommended) else 1


def where_written(output: str | None) -> str:
    """Where the JSON-lines report went, and the command that makes a page of it; or how to keep one."""
    if output is None:
        return "the JSON-lines report was not kept (--output FILE keeps it for refitwire report FILE)"
    path = Path(output)
    page = shlex.quote(str(path.with_suffix(".html")))
    return f"report written to {path.resolve()} (as a page: refitwire report {shlex.quote(output)} --html {page})"


def checked_nothing(report: Report) -> str:
    """Why a finished run checked nothing (no case passed or failed), or "" when it checked something."""
    judged = (Outcome.PASSED, Outcome.FAILED, Outcome.XFAILED, Outcome.XPASSED)
    if any(r.outcome in judged for r in report.results):
        return ""
    starts = [f"{r.reader or r.writer}: {r.message}" for r in report.results if r.case == HANDSHAKE_CASE]
    if starts:
        return f"{len(starts)} participant(s) did not start ({'; '.join(starts)[:600]})"
    if not report.results:
        return "no case applied to the participants that started (is --case right?)"
    return f"all {len(report.results)} case(s) errored or were skipped"


@contextlib.contextmanager
def _open(path: str | None) -> Any:
    if path is None:
        yield None
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        yield out


__all__ = [
    "Usage", "add_arguments", "add_common", "checked_nothing", "finish", "plan_options", "run",
    "source_participant", "upstream_participants", "where_written",
]  # fmt: skip
