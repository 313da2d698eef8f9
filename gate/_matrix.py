"""The runtime step: the compat matrix with the candidate schemas included, judged cell by cell.

The gate runs ``refitwire matrix --schema-dir DIR --output FILE`` and reads the JSON-lines
report file it writes (one header with the participants and the seed, one line per result,
one footer). The step is:

* ``incomplete`` when a released participant (the reference at a released version, a
  released upstream ``modelexpress``) did not run, unless the caller accepts that;
* ``failed`` when a Required case failed in a cell the change is expected to keep working;
* ``passed`` otherwise; ``errored`` when there is no report to read.

Cells are expected to fail, and are not counted, when an accepted break covers them (a
FORWARD break accepted between a candidate C and a released A covers writer C -> reader A,
BACKWARD the reverse) or when they join two major lines (a new major is checked against
its own line only).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from refitwire.compat import REQUIRED, Outcome, Report, ReportError, read_report

MatrixStatus = Literal["passed", "failed", "not-run", "errored", "incomplete"]


@dataclass(frozen=True)
class MatrixOutcome:
    status: MatrixStatus
    detail: str
    required_failed: int | None = None
    seed: int | None = None
    ran: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    failing: tuple[str, ...] = ()  # per failing cell: "writer -> reader: N case(s), first CASE: message"
    expected: int = 0  # failures inside an accepted break or across major lines
    # per cell: writer, reader, cases (Required), failed, expected, first (the first failure)
    grid: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Scope:
    """Which matrix cells may fail: by (writer spec version, reader spec version)."""

    cells: frozenset[tuple[str, str]] = frozenset()
    readers: frozenset[str] = frozenset()  # candidate versions whose vector reads may fail


def released_participants() -> tuple[str, ...]:
    """The labels of every released participant the runtime step must hear from."""
    from refitwire.compat.upstream.envs import UPSTREAM_VERSIONS
    from refitwire.engine import SPEC_VERSIONS

    return (*(f"reference@{v}" for v in SPEC_VERSIONS), *(f"modelexpress@{v}" for v in UPSTREAM_VERSIONS))


def run_matrix(
    schema_dir: Path,
    command: Sequence[str] | None = None,
    *,
    testees: Sequence[str] = (),
    examples: int | None = None,
    seed: int | None = None,
    scope: Scope = Scope(),
    allow_missing: bool = False,
    timeout: float = 1800.0,
    upstream_src: Path | None = None,
) -> MatrixOutcome:
    """Run the compat matrix over ``schema_dir`` and judge its report."""
    if command is None:
        command = [sys.executable, "-m", "refitwire", "matrix"]
    with tempfile.TemporaryDirectory(prefix="refitwire-gate-") as tmp:
        report = Path(tmp) / "matrix.jsonl"
        argv = [*command, "--format", "json", "--schema-dir", str(schema_dir), "--output", str(report)]
        argv += _under_test(testees, upstream_src)
        argv += ["--examples", str(examples)] if examples is not None else []
        argv += ["--seed", str(seed)] if seed is not None else []
        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return MatrixOutcome("errored", f"could not run the matrix: {exc}")
        try:  # the matrix's own reader: the one place its report format is parsed
            found = read_report(report) if report.is_file() else None
            problem = "" if found is None or found.complete else "a report without its footer"
        except ReportError as exc:
            found, problem = None, f"an unreadable report ({exc})"
    if found is None or problem:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return MatrixOutcome(
            "errored",
            f"matrix exited {done.returncode} with {problem or 'no report'}"
            + (f": {' / '.join(tail)}" if tail else ""),
        )
    return judge(found, scope, allow_missing, schema_dir.name, _under_test(testees, upstream_src))


def _under_test(testees: Sequence[str], upstream_src: Path | None) -> list[str]:
    """The matrix flags that add the implementations under test (kept in the rerun hint too)."""
    argv = [a for t in testees for a in ("--testee", t)]
    return argv + (["--upstream-src", str(upstream_src)] if upstream_src is not None else [])


def judge(
    report: Report,
    scope: Scope,
    allow_missing: bool = False,
    schema_dir: str = "schema",
    under_test: Sequence[str] = (),
) -> MatrixOutcome:
    versions = {p["label"]: p.get("spec_version", "") for p in report.header.participants}
    ran = tuple(versions)
    missing = tuple(p for p in released_participants() if p not in versions)
    seed = report.header.seed
    cells: dict[str, list[str]] = {}
    expected = 0
    grid: dict[tuple[str, str], dict[str, Any]] = {}
    for r in report.results:
        if r.tier != REQUIRED:
            continue
        key = (r.writer or "(vectors)", r.reader or "(vectors)")
        cell = grid.setdefault(
            key, {"writer": key[0], "reader": key[1], "cases": 0, "failed": 0, "expected": 0}
        )
        cell["cases"] += 1
        if r.outcome not in (Outcome.FAILED, Outcome.ERRORED):
            continue
        writer, reader = versions.get(r.writer or ""), versions.get(r.reader or "")
        if _expected_failure(writer, reader, scope):
            expected += 1
            cell["expected"] += 1
            continue
        who = " -> ".join(x for x in (r.writer, r.reader) if x) or "(vectors)"
        cells.setdefault(who, []).append(f"{r.case}: {r.message}"[:240])
        cell["failed"] += 1
        cell.setdefault("first", f"{r.case}: {r.message}"[:240])
    examples = f" --examples {report.header.examples}" if report.header.examples else ""
    added = "".join(f" {shlex.quote(a)}" for a in under_test)
    note = f"seed {seed} (rerun: refitwire matrix --seed {seed}{examples} --schema-dir {schema_dir}{added})"
    count = sum(map(len, cells.values()))
    common: dict[str, Any] = {"seed": seed, "ran": ran, "missing": missing, "expected": expected,
                              "grid": tuple(grid.values())}  # fmt: skip
    if cells:
        detail = f"{count} required case(s) failed in {len(cells)} cell(s); {note}"
        failing = tuple(f"{who}: {len(cases)} case(s), first {cases[0]}" for who, cases in cells.items())
        return MatrixOutcome("failed", detail, count, failing=failing, **common)
    if missing and not allow_missing:
        detail = f"released participant(s) did not run: {', '.join(missing)}; {note}"
        return MatrixOutcome("incomplete", detail, 0, **common)
    extra = f", {expected} expected failure(s) in accepted or cross-major cells" if expected else ""
    left_out = f"; accepted as missing: {', '.join(missing)}" if missing else ""
    detail = f"every required case passed in {len(ran)} participants{extra}{left_out}; {note}"
    return MatrixOutcome("passed", detail, 0, **common)


def _expected_failure(writer: str | None, reader: str | None, scope: Scope) -> bool:
    if writer is None and reader is not None:  # a vector read
        return reader in scope.readers or _major(reader) != _vector_major()
    if writer is not None and reader is not None and _major(writer) != _major(reader):
        return True
    return (writer or "", reader or "") in scope.cells


def _vector_major() -> int | None:
    """The major line the golden vectors belong to: the first released one."""
    from refitwire.engine import SPEC_VERSIONS

    return _major(SPEC_VERSIONS[0])


def _major(version: str) -> int | None:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None
