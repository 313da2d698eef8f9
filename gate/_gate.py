"""The gate: the working tree's schema/ against a git ref, under the evolution policy.

Steps: check the release (locked files, new index entries, file names and stamps, unknown
folders), compare every candidate (a schema file under schema/<document>/ that the ref's
index does not list) with every released version of its major line and every earlier
candidate (transitive), keep only what this change introduces (a change already present
between released versions is not reported again), find a witness for each breaking
finding, apply the baseline, then run the runtime matrix, whose expectations the accepted
findings scope, and report any disagreement.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from refitwire.gate import _release, _spec
from refitwire.gate._base import UnderTest, run_against_base
from refitwire.gate._baseline import Accepted
from refitwire.gate._change import Change
from refitwire.gate._document import Document, load_document
from refitwire.gate._errors import GateError
from refitwire.gate._findings import (
    Finding,
    GateReport,
    change_hash,
    compare,
)
from refitwire.gate._git import default_base, list_tree, repo_root, resolve, show
from refitwire.gate._matrix import MatrixOutcome, Scope, run_matrix
from refitwire.gate._rules import Rule, rule
from refitwire.gate._walk import diff
from refitwire.wire import Registry, parse_version, pointer

MatrixMode = Literal["auto", "always", "never"]


@dataclass(frozen=True)
class _Checkout:
    """The two sides of a gate run: the ref's released schema folder and the working tree's."""

    root: Path
    label: str
    commit: str
    folder: str
    base_files: frozenset[str]
    base_index: dict[str, Any]
    work_dir: Path
    work_index: dict[str, Any]
    packaged: bool = False  # the repository has no schema folder: the kit's own, on both sides

    def show(self, relative: str) -> bytes:
        if self.packaged:
            return (self.work_dir / relative.removeprefix(f"{self.folder}/")).read_bytes()
        return show(self.commit, relative, self.root)


def _packaged(root: Path, folder: str) -> _Checkout:
    """Both sides are the kit's packaged schemas: an implementation's repository (ModelExpress)
    has none, and what the gate then judges is the implementation under test, in the matrix."""
    from importlib import resources

    work_dir = Path(str(resources.files("refitwire.schema")))
    index = _release.load_index("the kit's schema/index.json", (work_dir / "index.json").read_bytes())
    files = frozenset(
        f"{folder}/{p.relative_to(work_dir).as_posix()}" for p in work_dir.rglob("*") if p.is_file()
    )
    label = "the kit's packaged schemas (no schema folder in this repository)"
    return _Checkout(root, label, "", folder, files, index, work_dir, index, packaged=True)


def _open(cwd: Path, against: str | None, schema_dir: str, implementation: bool = False) -> _Checkout:
    folder = schema_dir.strip("/")
    try:
        root = repo_root(cwd)
    except GateError:
        if implementation and against is None and not (cwd / folder / "index.json").is_file():
            return _packaged(cwd, folder)  # an implementation outside git: judged without a base
        raise
    if against is None and not (root / folder / "index.json").is_file():
        return _packaged(root, folder)
    label, commit = default_base(root) if against is None else (against, resolve(against, root))
    base_files = frozenset(list_tree(commit, folder, root))
    where = f"{label}:{folder}/index.json"
    if f"{folder}/index.json" not in base_files:
        if not (root / folder / "index.json").is_file():
            return _packaged(root, folder)
        raise GateError(where, "no schema index at that ref: nothing released to compare with")
    base_index = _release.load_index(where, show(commit, f"{folder}/index.json", root))
    work_dir = root / folder
    try:
        work_index = _release.load_index(f"{folder}/index.json", (work_dir / "index.json").read_bytes())
    except OSError as exc:
        raise GateError(f"{folder}/index.json", exc.strerror or "cannot read") from None
    return _Checkout(root, label, commit, folder, base_files, base_index, work_dir, work_index)


def _released(c: _Checkout) -> tuple[list[Finding], dict[str, list[Document]]]:
    """The released documents at the ref, and what the change does to them and to the index."""
    raw: list[tuple[Change, str]] = []
    released: dict[str, list[Document]] = {}
    for kind, entries in c.base_index["documents"].items():
        now = {e["version"]: e for e in c.work_index.get("documents", {}).get(kind, [])}
        for i, entry in enumerate(entries):
            relative = f"{c.folder}/{entry['path']}"
            if relative not in c.base_files:
                raise GateError(f"{c.label}:{relative}", "listed in the index but missing at the ref")
            old = load_document(f"{c.label}:{relative}", c.show(relative))
            released.setdefault(kind, []).append(old)
            raw += _release.locked(old, entry, c.work_dir, c.folder, kind, i, now.get(entry["version"]))
    raw += _release.new_entries(c.base_index, c.work_index, c.work_dir, c.folder)
    raw += _release.unknown_folders(set(c.base_files), c.work_dir, c.folder, c.base_index, c.work_index)
    return [Finding(change, file) for change, file in raw], released


def _candidates(c: _Checkout) -> tuple[list[Finding], list[tuple[str, str, str, Document]]]:
    """(kind, version, file, document) of every unreleased schema file, oldest first, with stamp findings."""
    released_paths = {e["path"] for entries in c.base_index["documents"].values() for e in entries}
    kinds = [
        *c.base_index["documents"],
        *(k for k in c.work_index.get("documents", {}) if k not in c.base_index["documents"]),
    ]
    findings, found = [], []
    for kind in kinds:
        for path in sorted((c.work_dir / kind).glob("*.json")) if (c.work_dir / kind).is_dir() else []:
            if f"{kind}/{path.name}" in released_paths:
                continue
            relative = f"{c.folder}/{kind}/{path.name}"
            version = _release.version_of_file(relative)
            document = load_document(relative, path.read_bytes())
            findings += [Finding(ch, f) for ch, f in _release.stamps(document, relative, kind, version)]
            found.append((kind, version, relative, document))
    found.sort(key=lambda x: (x[0], parse_version(x[1]) or ()))
    return findings, found


def _major(document: Document) -> tuple[int, ...]:
    return (parse_version(document.version or "") or (0,))[:1]


def _compare_lines(
    candidates: list[tuple[str, str, str, Document]],
    released: dict[str, list[Document]],
    witnesses: bool,
    registry: Registry,
) -> tuple[list[Finding], list[tuple[str, str]], int]:
    """Each candidate against every earlier version of its major line (findings, comparisons,
    and how many changes were left out because the releases had already made them)."""
    findings: list[Finding] = []
    comparisons: list[tuple[str, str]] = []
    earlier: dict[str, list[Document]] = {k: list(v) for k, v in released.items()}
    hidden = 0
    for kind, version, relative, new in candidates:
        key: tuple[int, ...] = parse_version(version) or ()
        newest = max((parse_version(d.version or "") or () for d in released.get(kind, [])), default=())
        if key <= newest:
            shown = ".".join(map(str, newest))
            detail = f"{version} is not newer than released {shown}"
            if key[:1] < newest[:1]:
                detail += f" (the {key[0]}.x line is frozen once {shown} is released)"
            findings.append(
                Finding(
                    Change(Rule.VERSION_NOT_NEWER, "/x-spec-version", "", detail, None, version), relative
                )
            )
        previous = earlier.setdefault(kind, [])
        line = [d for d in previous if _major(d) == key[:1]]
        in_line = [d for d in line if d in released.get(kind, [])]
        latest = max(in_line, key=lambda d: parse_version(d.version or "") or (), default=None)
        for old in line:
            comparisons.append((old.source, relative))
            changes = diff(old, new)
            if latest is not None and old is not latest:  # what the releases since ``old`` already did
                known = {change_hash(ch) for ch in diff(old, latest)}
                fresh = [ch for ch in changes if change_hash(ch) not in known]
                hidden, changes = hidden + len(changes) - len(fresh), fresh
            findings += compare(old, new, relative, witnesses, changes, registry=registry)
        if not line and previous:
            findings += _major_bump(previous[-1], new, relative)
            comparisons.append((previous[-1].source, relative))
        previous.append(new)
    return findings, comparisons, hidden


def run_gate(
    cwd: Path,
    against: str | None = None,
    schema_dir: str = "schema",
    baseline: Sequence[Accepted] = (),
    matrix: MatrixMode = "auto",
    matrix_command: Sequence[str] | None = None,
    require_matrix: bool = False,
    witnesses: bool = True,
    today: datetime.date | None = None,
    *,
    testees: Sequence[str] = (),
    examples: int | None = None,
    seed: int | None = None,
    allow_missing: bool = False,
    upstream_src: Path | None = None,
    registry: Registry,
    log: Callable[[str], None] = lambda _: None,
) -> GateReport:
    """Run the whole gate in the checkout holding ``cwd``. GateError on bad input. ``registry``: the
    kit's own (the CLI's), whose released readers check every witness. In an implementation's
    repository (no schema folder) with an implementation under test, the runtime step judges
    what the change adds against its base (``_base``); ``log`` hears its progress."""
    checkout = _open(cwd, against, schema_dir, implementation=bool(testees or upstream_src))
    findings, released = _released(checkout)
    stamped, candidates = _candidates(checkout)
    compared, comparisons, hidden = _compare_lines(candidates, released, witnesses, registry)
    compared += _spec_rules(checkout, candidates, witnesses, registry)
    findings = _apply_baseline(findings + stamped + compared, baseline, today or datetime.date.today())
    static_ok = not any(f.failing for f in findings)
    notes: list[str] = []
    if matrix == "never" or (matrix == "auto" and not static_ok and not _runtime_proves(findings)):
        why = "--matrix never" if matrix == "never" else "the static check failed"
        outcome = MatrixOutcome("not-run", why)
    elif checkout.packaged and (testees or upstream_src):
        under = UnderTest(tuple(testees), upstream_src, cwd.resolve())
        outcome, notes = run_against_base(
            cwd, against, under, schema_dir=checkout.work_dir, command=matrix_command, examples=examples,
            seed=seed, released=registry.released_versions(), allow_missing=allow_missing, log=log,
        )  # fmt: skip
    else:
        outcome = run_matrix(
            checkout.work_dir, matrix_command, testees=testees, examples=examples, seed=seed,
            scope=_scope(findings), allow_missing=allow_missing, upstream_src=upstream_src,
            released=registry.released_versions(),
        )  # fmt: skip
    if outcome.status != "not-run":
        under_test = [
            *(f"--testee {t}" for t in testees),
            *([f"--upstream-src {upstream_src}"] if upstream_src else []),
        ]
        if candidates:
            where = candidates[0][2]
        elif under_test:  # a code-only change: the implementation under test, not the schemas, broke
            where = "; ".join(under_test)
        else:
            where = f"{checkout.folder}/index.json"
        findings += _disagreement(
            findings, outcome, where, schemas_changed=bool(candidates) or not under_test
        )
    return GateReport(
        checkout.label, checkout.commit, tuple(c[2] for c in candidates), tuple(comparisons), tuple(findings),
        outcome, require_matrix, hidden, tuple(notes),
    )  # fmt: skip


def _spec_rules(
    c: _Checkout, candidates: list[tuple[str, str, str, Document]], witnesses: bool, registry: Registry
) -> list[Finding]:
    """SPEC.md's rules of every released version against the ref's, the lock of each in the
    index, and each candidate's rules against the newest release of its line."""
    relative = f"{c.folder}/{_spec.SPEC_FILE}"
    if c.packaged or relative not in c.base_files:
        return []  # nothing released to compare with: the kit's own copy, or no SPEC.md at the ref
    path = c.work_dir / _spec.SPEC_FILE
    found = _spec.judge(
        (f"{c.label}:{relative}", c.show(relative)), (relative, path.read_bytes() if path.is_file() else None),
        (c.base_index, c.work_index, f"{c.folder}/index.json"),
        [(v, d.schema) for _, v, _, d in candidates], witnesses, registry,
    )  # fmt: skip
    return [
        Finding(f.change, f.file, f.against, f.witnesses, f.no_witness, searched=witnesses) for f in found
    ]


def _runtime_proves(findings: list[Finding]) -> bool:
    """Whether every failing finding is a SPEC rule the static step has no blob for: then the
    runtime matrix runs anyway (``auto``), since the implementations are where such a rule shows."""
    failing = [f for f in findings if f.failing]
    return bool(failing) and all(f.unproven and rule(f.change.rule).category == "SPEC" for f in failing)


def _major_bump(old: Document, new: Document, relative: str) -> list[Finding]:
    changes = diff(old, new)
    out = []
    if old.wire_id == new.wire_id or not any(c.rule == Rule.WIRE_ID_CHANGED for c in changes):
        detail = f"new major {new.version} keeps wire id {new.wire_id!r}"
        out.append(
            Finding(
                Change(Rule.MAJOR_WITHOUT_NEW_WIRE_ID, "/x-wire-id", "", detail, old.wire_id, new.wire_id),
                relative,
                old.version,
            )
        )
    breaking = sorted({c.rule for c in changes if c.breaking})
    if breaking:
        detail = f"{len(breaking)} kind(s) of breaking change across the major boundary: " + ", ".join(
            breaking
        )
        out.append(Finding(Change(Rule.MAJOR_VERSION_BREAK, "", "", detail), relative, old.version))
    return out


def _apply_baseline(
    findings: list[Finding], baseline: Sequence[Accepted], today: datetime.date
) -> list[Finding]:
    used: set[int] = set()
    out = []
    for finding in findings:
        change = finding.change
        matching = [
            e for e in baseline
            if change.breaking and e.matches(change.rule, change.pointer, finding.file, finding.against, finding.hash)
        ]  # fmt: skip
        used.update(e.index for e in matching)
        live = [e for e in matching if not e.expired(today)]
        out.append(replace(finding, accepted=live[0]) if live else finding)
    for entry in baseline:
        where = pointer("accepted", entry.index)
        if entry.expired(today):
            detail = f"{entry.rule} at {json.dumps(entry.pointer)} expired on {entry.expires}"
            out.append(
                Finding(
                    Change(Rule.BASELINE_EXPIRED, where, "", detail, str(entry.expires), str(today)),
                    entry.source,
                )
            )
        elif entry.index not in used:
            detail = f"{entry.rule} at {json.dumps(entry.pointer)} (change {entry.change}) matches no finding"
            out.append(Finding(Change(Rule.BASELINE_STALE, where, "", detail), entry.source))
    return out


def _scope(findings: list[Finding]) -> Scope:
    """The matrix cells the accepted findings allow to fail."""
    cells, readers = set(), set()
    for f in findings:
        if f.accepted is None or not f.change.directions:
            continue
        candidate = Path(f.file).name.removesuffix(".json")
        readers.add(candidate)
        for direction in f.change.directions:
            old = f.against or ""
            cells.add((candidate, old) if direction == "FORWARD" else (old, candidate))
    return Scope(frozenset(cells), frozenset(readers))


def _disagreement(
    findings: list[Finding], outcome: MatrixOutcome, where: str, schemas_changed: bool = True
) -> list[Finding]:
    static_ok = not any(f.failing for f in findings)
    proven = any(f.failing and f.witnesses for f in findings)
    if outcome.status == "failed" and static_ok and not schemas_changed:
        detail = (
            f"the schemas did not change; the implementation under test breaks the wire ({outcome.detail})"
        )
    elif outcome.status == "failed" and static_ok:
        detail = f"rules say compatible, the runtime matrix says breaking ({outcome.detail})"
    elif outcome.status == "passed" and proven:
        detail = "rules say breaking, the runtime matrix passed (its payloads may not exercise the change)"
    else:
        return []
    old, new = ("compatible", outcome.status) if static_ok else ("breaking", outcome.status)
    return [Finding(Change(Rule.MATRIX_DISAGREES, "", "", detail, old, new), where)]
