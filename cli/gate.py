"""Gate a change to the wire schemas: the working tree's schema/ against a git ref.

Locks released files (sha256 in the ref's schema/index.json), compares every candidate
schema transitively with every released version of its document under the evolution policy
(SPEC.md, "Versions and evolution"), proves each breaking finding with a witness blob,
applies a baseline of accepted breaks, then runs the runtime compat matrix with the
candidate included and every released reader. Exit 0 compatible, 100 breaking (or
unproven), 1 bad input (a malformed schema, a broken ref, an unreadable baseline) or a runtime
step that could not hear from every released participant, 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from refitwire.gate import (
    EXIT_ERROR,
    FORMATS,
    Finding,
    GateError,
    GateReport,
    load_baseline,
    render,
    repo_root,
    run_gate,
)
from refitwire.wire import Registry

#: Used when it exists and --baseline is not given.
DEFAULT_BASELINE = "schema/gate-baseline.json"


def add_arguments(parser: argparse.ArgumentParser, registry: Registry) -> None:
    parser.add_argument(
        "--against",
        metavar="GIT-REF",
        help="the ref to compare with (default: the merge base of HEAD with the main branch)",
    )
    parser.add_argument("--format", choices=(*FORMATS, "html"), default="text")
    parser.add_argument(
        "--schema-dir", default="schema", help="the schema folder, relative to the repository root"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help=f"a JSON file of accepted breaks (default: {DEFAULT_BASELINE} when it exists)",
    )
    parser.add_argument(
        "--matrix",
        choices=("auto", "always", "never"),
        default="auto",
        help="run the runtime matrix when the static check passes (auto), always, or never",
    )
    parser.add_argument(
        "--matrix-command",
        metavar="CMD",
        help="command that replaces 'python -m refitwire matrix' (shell words)",
    )
    parser.add_argument(
        "--require-matrix", action="store_true", help="exit 1 when the runtime matrix could not run"
    )
    parser.add_argument(
        "--allow-missing-readers",
        action="store_true",
        help="let the runtime step pass although a released participant could not run (named in the report)",
    )
    parser.add_argument(
        "--testee",
        action="append",
        default=[],
        metavar="CMD",
        help="a candidate implementation for the matrix",
    )
    parser.add_argument(
        "--upstream-src",
        type=Path,
        metavar="PATH",
        help="a ModelExpress checkout whose own reader and writer join the matrix (beside the released ones)",
    )
    parser.add_argument("--examples", type=int, help="generated payloads for the matrix (default: its own)")
    parser.add_argument("--seed", type=int, help="the matrix seed (default: random, printed)")
    parser.add_argument("--no-witness", action="store_true", help="skip the search for witness blobs")
    parser.add_argument(
        "--write-witnesses",
        metavar="DIR",
        type=Path,
        help="write each witness as a blob file (refitwire validate reads it) into DIR",
    )
    parser.add_argument("--output", "-o", type=Path, help="write the report here instead of stdout")
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="FORMAT=FILE",
        type=_also,
        help="also write the same run's report in FORMAT to FILE (repeatable; CI: sarif and junit)",
    )


def _also(text: str) -> tuple[str, Path]:
    fmt, sep, file = text.partition("=")
    if not sep or fmt not in (*FORMATS, "html") or not file:
        raise argparse.ArgumentTypeError(
            f"expected FORMAT=FILE with FORMAT one of {', '.join((*FORMATS, 'html'))}"
        )
    return fmt, Path(file)


def run(args: argparse.Namespace) -> int:
    try:
        root = _root(Path.cwd())
        baseline_path = args.baseline
        if baseline_path is None:
            default = root / DEFAULT_BASELINE
            baseline_path = default if default.is_file() else None
        baseline = load_baseline(baseline_path, _within(baseline_path, root)) if baseline_path else []
        report = run_gate(
            Path.cwd(),
            against=args.against,
            schema_dir=args.schema_dir,
            baseline=baseline,
            matrix=args.matrix,
            matrix_command=shlex.split(args.matrix_command) if args.matrix_command else None,
            require_matrix=args.require_matrix,
            witnesses=not args.no_witness,
            testees=args.testee,
            registry=args.registry,
            examples=args.examples,
            seed=args.seed,
            allow_missing=args.allow_missing_readers,
            upstream_src=args.upstream_src.resolve() if args.upstream_src else None,
            log=lambda message: print(f"refitwire gate: {message}", file=sys.stderr),
        )
    except GateError as exc:
        print(f"refitwire gate: {exc}", file=sys.stderr)
        return EXIT_ERROR
    text = _render(report, args.format, root)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    for fmt, path in args.also:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_render(report, fmt, root) + "\n", encoding="utf-8")
    if args.write_witnesses:
        written = write_witnesses(report, args.write_witnesses)
        print(f"refitwire gate: wrote {written} witness vector(s) to {args.write_witnesses}", file=sys.stderr)
    return report.exit_code


def _root(cwd: Path) -> Path:
    """The repository's top, or ``cwd`` outside git (an implementation judged without a base)."""
    try:
        return repo_root(cwd)
    except GateError:
        return cwd


def _render(report: GateReport, fmt: str, root: Path) -> str:
    """``fmt`` of the report; html is the page of its JSON lines (``refitwire report`` renders the same)."""
    if fmt != "html":
        return render(report, fmt, root=root)
    from refitwire.compat import html_gate_page as gate_page

    return gate_page([json.loads(line) for line in render(report, "json", root=root).splitlines()])


def _within(path: Path, root: Path) -> str:
    """``path`` relative to the repository root when it lies inside it (how reports name files)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def witness_name(finding: Finding, index: int, direction: str, writer: str, reader: str) -> str:
    """``<writer>-accepted-<reader>-rejects-<rule>-<direction>-<n>.json``: the versions it separates."""
    rule = finding.change.rule.lower().replace("_", "-")
    return f"{writer}-accepted-{reader}-rejects-{rule}-{direction.lower()}-{index:03d}.json"


def write_witnesses(report: GateReport, folder: Path) -> int:
    """One plain blob file per witness (what ``refitwire validate`` reads), and ``witnesses.jsonl``
    saying for each which rule it proves, who accepts it and who rejects it."""
    folder.mkdir(parents=True, exist_ok=True)
    count, manifest = 0, []
    for finding in report.findings:
        for witness in finding.witnesses:
            count += 1
            writer = witness.writer_version or "old"
            reader = witness.reader_version or "new"
            name = witness_name(finding, count, witness.direction, writer, reader)
            (folder / name).write_text(json.dumps(witness.blob) + "\n", encoding="utf-8")
            manifest.append(
                {"file": name, "rule": finding.change.rule, "pointer": finding.change.pointer,
                 "change": finding.hash, "schema": finding.file, **witness.as_json()}
            )  # fmt: skip
    with open(folder / "witnesses.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({k: v for k, v in m.items() if k != "blob"}) + "\n" for m in manifest)
    return count
