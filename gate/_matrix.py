"""The runtime step: the compat matrix with the candidate schemas included, judged cell by cell.

The gate runs ``refitwire matrix --schema-dir DIR --output FILE`` and reads the JSON-lines
report file it writes (one header with the participants and the seed, one line per result,
one footer). The step is:

* ``incomplete`` when a released participant (the reference at a released version, a
  released upstream ``modelexpress``) did not run, unless the caller accepts that;
* ``failed`` when a Required case failed in a cell the change is expected to keep working, or
  a case of any tier failed in a writer -> reader cell that joins a participant under test
  (a candidate, a source tree, a ``--testee``) with a released one: a candidate writer whose
  blobs a released reader rejects is a finding even where upstream tolerates such blobs;
* ``passed`` otherwise; ``errored`` when there is no report to read.

Cells are expected to fail, and are not counted, when an accepted break covers them (a
FORWARD break accepted between a candidate C and a released A covers writer C -> reader A,
BACKWARD the reverse) or when they join two major lines (a new major is checked against
its own line only). Every other failure (both sides released, or a vector read, at a tier
below Required) is summarized per symptom with the reason it does not count: none is dropped.
"""

from __future__ import annotations

import collections
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from refitwire.compat import REQUIRED, Outcome, Report, ReportError, read_report
from refitwire.wire import parse_version

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
    # per cell: writer, reader, cases (every tier), failed, expected, other (shown, not counted), first
    grid: tuple[dict[str, Any], ...] = ()
    not_counted: tuple[str, ...] = ()  # failures no side of which is under test, summarized, with why
    # judged against a base: each group of what the change adds, changes or fixes (compat's Group)
    against_base: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Scope:
    """Which matrix cells may fail: by (writer spec version, reader spec version)."""

    cells: frozenset[tuple[str, str]] = frozenset()
    readers: frozenset[str] = frozenset()  # candidate versions whose vector reads may fail


def released_participants(versions: Sequence[str]) -> tuple[str, ...]:
    """The labels of every released participant the runtime step must hear from, for the released
    spec ``versions`` (a matrix report's header states the ones its run knew)."""
    from refitwire.compat.upstream.envs import UPSTREAM_VERSIONS

    return (
        *(f"reference@{v}" for v in versions),
        *(f"modelexpress@{v}" for v in UPSTREAM_VERSIONS),
    )


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
    released: Sequence[str],
    required_only: bool = False,
    only_under_test: bool = False,
) -> MatrixOutcome:
    """Run the compat matrix over ``schema_dir`` and judge its report (``required_only``: no base to
    compare with, so only a Required failure counts; the others are shown)."""
    found = matrix_report(schema_dir, command, testees=testees, examples=examples, seed=seed, timeout=timeout,
                          upstream_src=upstream_src, only_under_test=only_under_test)  # fmt: skip
    if isinstance(found, MatrixOutcome):
        return found
    under_test = under_test_flags(testees, upstream_src)
    return judge(found, scope, released, allow_missing, schema_dir.name, under_test, required_only)


def matrix_report(
    schema_dir: Path,
    command: Sequence[str] | None = None,
    *,
    testees: Sequence[str] = (),
    examples: int | None = None,
    seed: int | None = None,
    timeout: float = 1800.0,
    upstream_src: Path | None = None,
    cwd: Path | None = None,
    only_under_test: bool = False,
    keep: Path | None = None,
) -> Report | MatrixOutcome:
    """The matrix's report (its JSON lines copied to ``keep``), or an ``errored`` outcome saying why
    there is none. ``cwd``: where the run starts (a ``--testee`` command's own folder);
    ``only_under_test``: only the cells joining an implementation under test with another."""
    if command is None:
        command = [sys.executable, "-m", "refitwire", "matrix"]
    with tempfile.TemporaryDirectory(prefix="refitwire-gate-") as tmp:
        report = Path(tmp) / "matrix.jsonl"
        argv = [*command, "--format", "json", "--schema-dir", str(schema_dir), "--output", str(report)]
        argv += under_test_flags(testees, upstream_src)
        argv += ["--only-under-test"] if only_under_test else []
        argv += ["--examples", str(examples)] if examples is not None else []
        argv += ["--seed", str(seed)] if seed is not None else []
        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False, cwd=cwd)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return MatrixOutcome("errored", f"could not run the matrix: {exc}")
        try:  # the matrix's own reader: the one place its report format is parsed
            found = read_report(report) if report.is_file() else None
            problem = "" if found is None or found.complete else "a report without its footer"
        except ReportError as exc:
            found, problem = None, f"an unreadable report ({exc})"
        if found is not None and not problem and keep is not None:
            keep.write_bytes(report.read_bytes())
    if found is None or problem:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return MatrixOutcome(
            "errored",
            f"matrix exited {done.returncode} with {problem or 'no report'}"
            + (f": {' / '.join(tail)}" if tail else ""),
        )
    return found


def under_test_flags(testees: Sequence[str], upstream_src: Path | None) -> list[str]:
    """The matrix flags that add the implementations under test (kept in the rerun hint too)."""
    argv = [a for t in testees for a in ("--testee", t)]
    return argv + (["--upstream-src", str(upstream_src)] if upstream_src is not None else [])


#: Participant kinds (the report header's ``kind``) that are released, and those under test.
_RELEASED_KINDS = frozenset({"reference", "generation", "upstream"})
_UNDER_TEST_KINDS = frozenset({"candidate", "upstream-source", "third-party"})

#: Why a failure in a cell this change does not join is shown but not counted (SPEC.md section 7).
WAIVER = (
    "not counted: no side of these cells is under test (released participants, vector reads); "
    "SPEC.md section 7: Recommended failures are reported and do not fail a run"
)
#: Why, without a base to compare with, a failure below Required is shown but not counted.
NO_BASE_WAIVER = (
    "not counted: with no base to compare with, only Required failures count (SPEC.md section 7: "
    "Recommended failures are reported and do not fail a run)"
)


def _sides(report: Report, released_versions: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(released labels, labels under test) of a report's participants: by their ``kind``, else
    (a report without kinds) by the released labels and ``candidate@``."""
    released, tested = set(), set(report.header.raw.get("focus") or [])
    known = set(released_participants(released_versions))
    for p in report.header.participants:
        label, kind = p["label"], p.get("kind")
        if kind in _RELEASED_KINDS or (kind is None and (label in known or label.startswith("generation@"))):
            released.add(label)
        elif kind in _UNDER_TEST_KINDS or (kind is None and label.startswith("candidate@")):
            tested.add(label)
    return frozenset(released), frozenset(tested - released)


def _judged(r: Any, released: frozenset[str], tested: frozenset[str]) -> bool:
    """Whether a failure counts at any tier: a writer -> reader cell joining one participant under
    test and one released (the candidate's blobs a released reader rejects, or the other way), or
    a writer under test that wrote what it had to refuse (``refuse:RULE``, a blob breaking RULE)."""
    from refitwire.compat import case_kind  # the case kinds' table (the runner's: not at the gate's import)

    if r.writer in tested and r.reader is None and case_kind(r.case) == "refuse":
        return True  # it wrote a blob breaking a rule every released reader checks (READ_VALIDATE)
    if r.writer is None or r.reader is None:
        return False
    return (r.writer in tested and r.reader in released) or (r.reader in tested and r.writer in released)


def judge(
    report: Report,
    scope: Scope,
    released_versions: Sequence[str],
    allow_missing: bool = False,
    schema_dir: str = "schema",
    under_test: Sequence[str] = (),
    required_only: bool = False,
) -> MatrixOutcome:
    """Every failure is counted or shown: a Required failure, and a failure of any tier in a cell
    joining a participant under test with a released one, fail the step (unless an accepted break
    or a major boundary expects them); the rest are summarized with why they do not count."""
    versions = {p["label"]: p.get("spec_version", "") for p in report.header.participants}
    released, tested = _sides(report, released_versions)
    ran, missing = heard(report, released_versions)
    seed = report.header.seed
    cells: dict[str, list[str]] = {}
    tiers: dict[str, collections.Counter[str]] = {}
    expected = 0
    grid: dict[tuple[str, str], dict[str, Any]] = {}
    others: dict[str, list[str]] = {}  # symptom -> failures shown but not counted
    for r in report.results:
        key = (r.writer or "(vectors)", r.reader or "(vectors)")
        cell = grid.setdefault(
            key, {"writer": key[0], "reader": key[1], "cases": 0, "failed": 0, "expected": 0, "other": 0}
        )
        cell["cases"] += 1
        if r.outcome not in (Outcome.FAILED, Outcome.ERRORED):
            continue
        writer, reader = versions.get(r.writer or ""), versions.get(r.reader or "")
        if _expected_failure(writer, reader, scope, released_versions):
            expected += 1
            cell["expected"] += 1
            continue
        who = " -> ".join(x for x in (r.writer, r.reader) if x) or "(vectors)"
        if r.tier != REQUIRED and (required_only or not _judged(r, released, tested)):
            cell["other"] += 1
            others.setdefault(f"{r.tier} {r.symptom or r.outcome.value}", []).append(f"{r.case} [{who}]")
            continue
        tier = "" if r.tier == REQUIRED else f" ({r.tier})"
        cells.setdefault(who, []).append(f"{r.case}{tier}: {r.symptom or r.message}")  # whole, never cut
        tiers.setdefault(who, collections.Counter())[r.tier] += 1
        cell["failed"] += 1
        cell.setdefault("first", f"{r.case}: {r.symptom or r.message}")
    examples = f" --examples {report.header.examples}" if report.header.examples else ""
    added = "".join(f" {shlex.quote(a)}" for a in under_test)
    note = f"seed {seed} (rerun: refitwire matrix --seed {seed}{examples} --schema-dir {schema_dir}{added})"
    count = sum(map(len, cells.values()))
    required = sum(t[REQUIRED] for t in tiers.values())
    not_counted = _not_counted(others, NO_BASE_WAIVER if required_only else WAIVER)
    common: dict[str, Any] = {"seed": seed, "ran": ran, "missing": missing, "expected": expected,
                              "grid": tuple(grid.values()), "not_counted": not_counted}  # fmt: skip
    if cells:
        detail = (f"{count} case(s) failed in {len(cells)} cell(s) ({required} Required, {count - required} "
                  f"Recommended in a cell pairing an implementation under test with a released one); {note}")  # fmt: skip
        failing = tuple(
            f"{who}: {len(cases)} case(s){_tiers(tiers[who])}, first {cases[0]}"
            for who, cases in cells.items()
        )
        return MatrixOutcome("failed", detail, required, failing=failing, **common)
    if missing and not allow_missing:
        detail = f"released participant(s) did not run: {', '.join(missing)}; {note}"
        return MatrixOutcome("incomplete", detail, 0, **common)
    extra = f", {expected} expected failure(s) in accepted or cross-major cells" if expected else ""
    left_out = f"; accepted as missing: {', '.join(missing)}" if missing else ""
    joined = "every required case, and every case joining the change with a release,"
    detail = f"{joined} passed in {len(ran)} participants{extra}{left_out}; {note}"
    return MatrixOutcome("passed", detail, 0, **common)


def heard(report: Report, released_versions: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every participant the run started, the released ones it did not)."""
    ran = tuple(p["label"] for p in report.header.participants)
    return ran, tuple(p for p in released_participants(released_versions) if p not in ran)


def _tiers(counts: collections.Counter[str]) -> str:
    """`` (1 required, 2 recommended)`` where a tier below Required is among them, else nothing."""
    if set(counts) <= {REQUIRED}:
        return ""
    return " (" + ", ".join(f"{n} {tier}" for tier, n in sorted(counts.items())) + ")"


def _not_counted(others: dict[str, list[str]], why: str, shown: int = 5) -> tuple[str, ...]:
    """One line per symptom of the failures that do not count, largest first, with the reason once."""
    if not others:
        return ()
    total = sum(map(len, others.values()))
    ranked = sorted(others.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = [f"{total} failure(s) {why}:"]
    lines += [f"{len(cases)} x {symptom} (e.g. {cases[0]})" for symptom, cases in ranked[:shown]]
    if len(ranked) > shown:
        lines.append(f"... and {len(ranked) - shown} more symptom(s) (see --format json, grid)")
    return tuple(lines)


def _expected_failure(writer: str | None, reader: str | None, scope: Scope, released: Sequence[str]) -> bool:
    if writer is None and reader is not None:  # a vector read: the vectors are the first release's line
        return reader in scope.readers or _major(reader) != (_major(released[0]) if released else None)
    if writer is not None and reader is not None and _major(writer) != _major(reader):
        return True
    return (writer or "", reader or "") in scope.cells


def _major(version: str) -> int | None:
    key = parse_version(version)
    return key[0] if key else None
