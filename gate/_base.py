"""The gate from an implementation's repository: only what the change adds, judged against its base.

``refitwire gate --upstream-src .`` (or ``--testee CMD``) in a repository without a schema folder
(ModelExpress) has no schemas of its own to compare, so what it judges is the implementation. A
tree has failures of long standing (Recommended ones, tolerated by every release); charging them
to a pull request would make the check red on the main branch. So the matrix runs twice with one
seed and example count: on the base (the merge base of HEAD with the main branch, or
``--against REF``), materialised from git into a temporary folder, and on the working tree. The
base's report is kept in the per-user cache (``gate-bases``, listed and pruned by ``refitwire
cache``), keyed by all that makes it: the base commit, the kit (its version and code), the schemas
it carries, the seed, the example count and the implementations asked. The verdict is the
difference, computed by ``refitwire.compat``'s comparison with a base (the one the conformance
``--baseline-report`` route uses): an untouched tree is compatible by construction.

Without a base (no git, no main branch, an implementation outside the repository) the gate says
so and judges the Required tier alone.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refitwire.compat import (
    HANDSHAKE_CASE,
    REQUIRED,
    BaseGroup,
    BaseMismatch,
    Report,
    cache_home,
    compare_with_base,
    group_against_base,
    participants_under_test,
)
from refitwire.gate._errors import GateError
from refitwire.gate._git import default_base, repo_root, resolve
from refitwire.gate._matrix import (
    MatrixOutcome,
    Scope,
    heard,
    judge,
    matrix_report,
    run_matrix,
    under_test_flags,
)

#: The cache (under the kit's cache home) of the bases' reports; ``refitwire cache`` lists it.
CACHE = "gate-bases"


@dataclass(frozen=True)
class Base:
    """The commit a change is judged against, in the repository at ``root``."""

    label: str  # how the user named it: "merge-base(HEAD, origin/main)", or the --against ref
    commit: str
    root: Path


@dataclass(frozen=True)
class UnderTest:
    """The implementations a run asks, as the matrix's flags take them, and where it starts."""

    testees: tuple[str, ...]
    upstream_src: Path | None
    cwd: Path

    def moved(self, root: Path, tree: Path) -> UnderTest | str:
        """The same implementations in ``tree`` (the base's copy of ``root``), or why they cannot be."""
        source = None
        if self.upstream_src is not None:
            inside = _inside(self.upstream_src, root)
            if inside is None:
                return f"--upstream-src {self.upstream_src} lies outside the repository {root}"
            source = tree / inside
            if not source.exists():
                return f"--upstream-src {inside} does not exist at the base"
        # A command naming a file of the checkout by its absolute path names the base's copy.
        testees = tuple(t.replace(str(root), str(tree)) for t in self.testees)
        return UnderTest(testees, source, tree / (_inside(self.cwd, root) or "."))

    def flags(self, root: Path) -> list[str]:
        """The flags, with paths relative to ``root`` (the same for the base and the change)."""
        out = [a for t in self.testees for a in ("--testee", t.replace(str(root), "<repo>"))]
        if self.upstream_src is not None:
            out += ["--upstream-src", _inside(self.upstream_src, root) or str(self.upstream_src)]
        return out


def find_base(cwd: Path, against: str | None) -> Base | str:
    """The base to judge against, or why there is none (a ``--against`` that names nothing is an
    error: the user asked for it)."""
    try:
        root = repo_root(cwd)
    except GateError:
        return f"{cwd} is not in a git repository"
    if against is not None:
        return Base(against, resolve(against, root), root)
    try:
        label, commit = default_base(root)
    except GateError as exc:
        return exc.detail
    return Base(label, commit, root)


def base_report(
    base: Base,
    under_test: UnderTest,
    *,
    seed: int,
    examples: int,
    command: Sequence[str] | None,
    schema_dir: Path,
    log: Callable[[str], None],
) -> Report | MatrixOutcome | str:
    """The base's report: from the cache, else run on the base's tree (then kept). An ``errored``
    outcome when the run gave no report; a string saying why the base cannot be run."""
    key = cache_key(base, under_test, seed, examples, command, schema_dir)
    kept = cache_home() / CACHE / f"{base.commit[:12]}-{key}.jsonl"
    if kept.is_file():
        try:
            from refitwire.compat import read_report

            log(f"the base's report, cached: {kept}")
            return read_report(kept)
        except (OSError, ValueError):
            kept.unlink(missing_ok=True)  # a damaged copy is made again
    kept.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="base-", dir=kept.parent) as tmp:
        tree = Path(tmp) / "tree"
        _materialise(base, tree)
        moved = under_test.moved(base.root, tree)
        if isinstance(moved, str):
            return moved
        log(f"running the base {base.label} ({base.commit[:12]}) in a copy of its tree")
        partial = Path(tmp) / "report.jsonl"
        started = time.monotonic()
        found = matrix_report(
            schema_dir, command, testees=moved.testees, upstream_src=moved.upstream_src, cwd=moved.cwd,
            examples=examples, seed=seed, only_under_test=True, keep=partial,
        )  # fmt: skip
        log(f"the base's run took {time.monotonic() - started:.0f} s")
        if isinstance(found, Report) and not _started_badly(found):  # a start that timed out is not kept
            shutil.move(partial, kept)
    return found


def _started_badly(report: Report) -> bool:
    return any(r.case == HANDSHAKE_CASE for r in report.results)


def _materialise(base: Base, into: Path) -> None:
    """The base commit's files (``git archive``: no checkout, no worktree left in the repository)."""
    done = subprocess.run(["git", "archive", "--format=tar", base.commit], cwd=base.root,
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GateError(base.label, why[-1] if why else "git archive failed")
    into.mkdir(parents=True)
    if not done.stdout.strip(b"\0"):  # a commit of no files: git writes no archive, or only padding
        return
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(into, filter="data")


def cache_key(
    base: Base, under_test: UnderTest, seed: int, examples: int, command: Sequence[str] | None, schemas: Path
) -> str:
    """A digest of everything the base's report depends on: the commit, the kit (version and code),
    the schemas it judges by, the seed, the examples, the implementations and the matrix command."""
    import refitwire
    import refitwire.compat

    digest = hashlib.sha256()
    try:
        version = importlib.metadata.version("refitwire")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    parts = [base.commit, version, str(seed), str(examples), json.dumps(under_test.flags(base.root)),
             json.dumps(list(command or []))]  # fmt: skip
    for part in parts:
        digest.update(part.encode() + b"\0")
    for folder in (Path(refitwire.__file__).parent, Path(refitwire.compat.__file__).parent, schemas):
        for path in sorted(folder.rglob("*")):
            if (
                path.is_file()
                and path.suffix in (".py", ".json", ".md", ".js")
                and "__pycache__" not in path.parts
            ):
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def judge_change(
    head: Report,
    base: Report,
    against: str,
    rerun: str,
    released_versions: Sequence[str],
    allow_missing: bool,
) -> MatrixOutcome:
    """The verdict of the change: what the head fails that the base did not (a new Required failure,
    or a Required case failing for another reason, fails the step), in plain words per cause."""
    try:
        delta = compare_with_base(head, base)
    except BaseMismatch as exc:
        return MatrixOutcome("errored", f"the base's report cannot be compared: {exc}")
    ran, missing = heard(head, released_versions)
    groups = group_against_base(delta)
    tested = participants_under_test(head) | participants_under_test(base)
    seed = head.header.seed
    where = f"against the base {against}"
    common: dict[str, Any] = {"seed": seed, "ran": ran, "missing": missing,
              "against_base": tuple(g.as_json() for g in groups)}  # fmt: skip
    listed = tuple(plain(g, tested, rerun) for g in groups)
    known = len(delta.known)
    if not delta.ok():
        required = sum(g.count for g in groups if g.kind != "fixed" and g.tier == REQUIRED)
        causes = sum(1 for g in groups if g.kind != "fixed" and g.tier == REQUIRED)
        detail = (f"{where}, the change adds {required} Required failure(s) of {causes} cause(s)"
                  f" ({known} failure(s) the base has too are not counted); seed {seed}")  # fmt: skip
        return MatrixOutcome("failed", detail, required, failing=listed, **common)
    if missing and not allow_missing:
        detail = f"released participant(s) did not run: {', '.join(missing)}; seed {seed}"
        return MatrixOutcome("incomplete", detail, 0, failing=listed, **common)
    news = sum(g.count for g in groups if g.kind == "new")
    detail = (f"{where}, the change adds no Required failure ({news} new Recommended, listed; {known} "
              f"failure(s) the base has too are not counted); seed {seed}")  # fmt: skip
    return MatrixOutcome("passed", detail, 0, failing=listed, **common)


def plain(group: BaseGroup, tested: frozenset[str], rerun: str) -> str:
    """A group in plain words: what changed, how often, in which cell and direction, and the case
    whose blob shows it, with the command that reruns it alone."""
    kind = {"new": "NEW", "changed": "NOW FAILING FOR ANOTHER REASON", "fixed": "FIXED"}[group.kind]
    was = f" (the base failed it because: {group.was})" if group.was else ""
    cells = "; ".join(cell_words(c, tested) for c in group.cells[:3])
    more = f"; and {len(group.cells) - 3} more cell(s)" if len(group.cells) > 3 else ""
    case = group.cases[0]
    return (f"{kind} {group.tier} x{group.count}: {group.cause}{was}. Where: {cells}{more}. "
            f"Case {case}: {rerun} --case {case}")  # fmt: skip


def cell_words(cell: tuple[str, str], tested: frozenset[str]) -> str:
    """A writer -> reader cell in words: who is under test and which way the blob went."""
    writer, reader = cell
    if writer and reader:
        if writer in tested and reader not in tested:
            return f"{writer} (the change) writes, {reader} reads: a blob the change writes"
        if reader in tested and writer not in tested:
            return f"{writer} writes, {reader} (the change) reads: a blob a release writes"
        return f"{writer} writes, {reader} reads"
    if writer:
        return f"{writer} (the change) alone: a blob it writes, or a payload it should refuse"
    return (
        f"{reader} (the change) reads the golden vectors"
        if reader in tested
        else f"{reader} reads the vectors"
    )


def _inside(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


#: Generated payloads per run when the gate judges an implementation against its base: both runs
#: ask the same ones, and a pull request's check should answer in seconds once the base is cached.
DEFAULT_EXAMPLES = 50


def run_against_base(
    cwd: Path,
    against: str | None,
    under_test: UnderTest,
    *,
    schema_dir: Path,
    command: Sequence[str] | None,
    examples: int | None,
    seed: int | None,
    released: Sequence[str],
    allow_missing: bool,
    log: Callable[[str], None],
) -> tuple[MatrixOutcome, list[str]]:
    """The runtime step of an implementation's repository, and the notes the report says first."""
    import secrets

    notes: list[str] = []
    if seed is None:
        seed = secrets.randbelow(2**31)
        notes.append(
            f"seed {seed}, chosen for this run (the base and the change alike; --seed {seed} repeats it)"
        )
    examples = DEFAULT_EXAMPLES if examples is None else examples
    flags = under_test_flags(under_test.testees, under_test.upstream_src)
    rerun = shlex.join(["refitwire", "matrix", "--only-under-test", "--seed", str(seed),
                        "--examples", str(examples), *flags])  # fmt: skip
    base = find_base(cwd, against)
    if not isinstance(base, Base):  # no base: the Required tier alone
        notes.append(f"no base to compare with ({base}): judged on the Required tier only")
        outcome = run_matrix(
            schema_dir, command, testees=under_test.testees, upstream_src=under_test.upstream_src,
            examples=examples, seed=seed, released=released, allow_missing=allow_missing,
            required_only=True, only_under_test=True,
        )  # fmt: skip
        return outcome, notes
    notes.append(
        f"judged against the base {base.label} ({base.commit[:12]}): only what the change adds counts"
    )

    def change() -> Report | MatrixOutcome:
        log("running the change (the working tree)")
        started = time.monotonic()
        found = matrix_report(schema_dir, command, testees=under_test.testees, upstream_src=under_test.upstream_src,
                              examples=examples, seed=seed, only_under_test=True)  # fmt: skip
        log(f"the change's run took {time.monotonic() - started:.0f} s")
        return found

    # The change's run does not depend on the base's: it runs beside a base that is not cached yet
    # (each run waits on its participants' replies most of the time, so two share two cores well).
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(change)
        found = base_report(base, under_test, seed=seed, examples=examples, command=command,
                            schema_dir=schema_dir, log=log)  # fmt: skip
        head = running.result()
    if isinstance(found, str):  # the base's tree lacks what is under test: the Required tier alone
        notes.append(f"no base to compare with ({found}): judged on the Required tier only")
        if isinstance(head, MatrixOutcome):
            return head, notes
        return judge(
            head, Scope(), released, allow_missing, schema_dir.name, flags, required_only=True
        ), notes
    if isinstance(found, MatrixOutcome):
        return MatrixOutcome("errored", f"the base's run: {found.detail}"), notes
    if isinstance(head, MatrixOutcome):
        return head, notes
    if _started_badly(head):  # not started in either: nothing was judged, so nothing is compatible
        failed = next(r for r in head.results if r.case == HANDSHAKE_CASE)
        who = failed.writer or failed.reader or "the implementation under test"
        return MatrixOutcome("errored", f"{who} did not start in the change: {elided(failed.message)}"), notes
    against_text = f"{base.label} ({base.commit[:12]})"
    return judge_change(head, found, against_text, rerun, released, allow_missing), notes


def elided(text: str, keep: int = 1000) -> str:
    """``text`` whole, or its first and last ``keep`` characters with what was left out counted
    between them: a reason is never cut mid-string without saying so (a testee's error may
    quote a long reply)."""
    if len(text) <= 2 * keep:
        return text
    return f"{text[:keep]} ... ({len(text) - 2 * keep} characters left out) ... {text[-keep:]}"
