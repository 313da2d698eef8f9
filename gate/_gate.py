"""The gate: the working tree's schema/ against a git ref, under the evolution policy.

Steps: lock the released files (their sha256 in the ref's index), compare every candidate
(a schema file under schema/<document>/ that the ref's index does not list) with every
released version of its document and every earlier candidate (transitive), find a witness
for each breaking finding, apply the baseline, then run the runtime matrix when the
static check passed (or always, on request) and report any disagreement between them.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from refitwire.gate._baseline import Accepted
from refitwire.gate._diff import Change, Document, diff, load_document, version_key
from refitwire.gate._errors import GateError
from refitwire.gate._git import default_base, list_tree, repo_root, resolve, show
from refitwire.gate._matrix import MatrixOutcome, run_matrix
from refitwire.gate._rules import Direction
from refitwire.gate._witness import Witness, find_witness

MatrixMode = Literal["auto", "always", "never"]

EXIT_COMPATIBLE, EXIT_ERROR, EXIT_BREAKING = 0, 1, 100


@dataclass(frozen=True)
class Finding:
    """One change (or lock, baseline or matrix problem), where it is and its evidence."""

    change: Change
    file: str
    against: str | None = None
    witnesses: tuple[Witness, ...] = ()
    no_witness: tuple[Direction, ...] = ()
    accepted: Accepted | None = None

    @property
    def failing(self) -> bool:
        return self.change.breaking and self.accepted is None


@dataclass(frozen=True)
class GateReport:
    against: str
    commit: str
    candidates: tuple[str, ...]
    comparisons: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]
    matrix: MatrixOutcome
    require_matrix: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def static_passed(self) -> bool:
        return not any(f.failing for f in self.findings if f.change.rule != "MATRIX_DISAGREES")

    @property
    def exit_code(self) -> int:
        if any(f.failing for f in self.findings):
            return EXIT_BREAKING
        if self.matrix.status == "errored" or (self.require_matrix and self.matrix.status == "not-run"):
            return EXIT_ERROR
        return EXIT_COMPATIBLE

    @property
    def verdict(self) -> str:
        code = self.exit_code
        return {EXIT_COMPATIBLE: "compatible", EXIT_BREAKING: "breaking"}.get(code, "error")


def evidence(
    change: Change, old: Document, new: Document
) -> tuple[tuple[Witness, ...], tuple[Direction, ...]]:
    """Witnesses for each direction ``change`` claims to break, and the directions without one."""
    found, missing = [], []
    for direction in change.directions if change.breaking else ():
        witness = find_witness(change, old, new, direction)
        if witness is None:
            missing.append(direction)
        else:
            found.append(witness)
    return tuple(found), tuple(missing)


def compare(old: Document, new: Document, file: str, witnesses: bool = True) -> list[Finding]:
    """Findings of one old -> new comparison within a major version."""
    out = []
    for change in diff(old, new):
        found, missing = evidence(change, old, new) if witnesses else ((), ())
        out.append(Finding(change, file, old.version, found, missing))
    return out


def _load_index(source: str, data: bytes) -> dict[str, Any]:
    try:
        index = json.loads(data)
        documents = index["documents"]
        for entries in documents.values():
            for entry in entries:
                entry["version"], entry["path"], entry["sha256"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GateError(source, f"not a schema index: {exc!r}") from None
    return dict(index)


def _version_of(document: Document, relative: str) -> str:
    version = document.version or Path(relative).stem
    if version_key(version) is None:
        raise GateError(document.source, f"cannot tell its version (x-spec-version {version!r})")
    return version


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
) -> GateReport:
    """Run the whole gate in the checkout holding ``cwd``. GateError on bad input."""
    root = repo_root(cwd)
    if against is None:
        label, commit = default_base(root)
    else:
        label, commit = against, resolve(against, root)
    folder = schema_dir.strip("/")
    base_index = _load_index(f"{label}:{folder}/index.json", show(commit, f"{folder}/index.json", root))
    work_dir = root / folder
    try:
        work_index = _load_index(f"{folder}/index.json", (work_dir / "index.json").read_bytes())
    except OSError as exc:
        raise GateError(f"{folder}/index.json", exc.strerror or "cannot read") from None
    base_files = set(list_tree(commit, folder, root))

    findings: list[Finding] = []
    released: dict[str, list[Document]] = {}
    released_paths: set[str] = set()
    for kind, entries in base_index["documents"].items():
        work_entries = {e["version"]: e for e in work_index.get("documents", {}).get(kind, [])}
        for i, entry in enumerate(entries):
            relative = f"{folder}/{entry['path']}"
            released_paths.add(entry["path"])
            if relative not in base_files:
                raise GateError(f"{label}:{relative}", "listed in the index but missing at the ref")
            old = load_document(f"{label}:{relative}", show(commit, relative, root))
            released.setdefault(kind, []).append(old)
            findings += _lock(old, entry, work_dir / entry["path"], relative, folder, kind, i, work_entries)
    candidates: list[tuple[str, str, Document]] = []
    for kind in base_index["documents"]:
        for path in sorted((work_dir / kind).glob("*.json")) if (work_dir / kind).is_dir() else []:
            relative_to_dir = f"{kind}/{path.name}"
            if relative_to_dir in released_paths:
                continue
            relative = f"{folder}/{relative_to_dir}"
            document = load_document(relative, path.read_bytes())
            candidates.append((kind, relative, document))
    candidates.sort(key=lambda c: (c[0], version_key(_version_of(c[2], c[1])) or ()))

    comparisons: list[tuple[str, str]] = []
    earlier: dict[str, list[Document]] = {k: list(v) for k, v in released.items()}
    for kind, relative, new in candidates:
        version = _version_of(new, relative)
        key = version_key(version) or ()
        newest = max(
            (version_key(_version_of(d, d.source)) or () for d in released.get(kind, [])), default=()
        )
        if key <= newest:
            findings.append(
                Finding(
                    Change(
                        "VERSION_NOT_NEWER",
                        "/x-spec-version",
                        "/",
                        f"{version} is not newer than released {'.'.join(map(str, newest))}",
                        None,
                        version,
                    ),
                    relative,
                )
            )
        previous = earlier.setdefault(kind, [])
        same_major = [d for d in previous if (version_key(_version_of(d, d.source)) or (0,))[:1] == key[:1]]
        for old in same_major:
            comparisons.append((old.source, relative))
            findings += compare(old, new, relative, witnesses)
        if not same_major and previous:
            findings += _major_bump(previous[-1], new, relative)
            comparisons.append((previous[-1].source, relative))
        previous.append(new)

    findings = _apply_baseline(findings, baseline, today or datetime.date.today())
    static_ok = not any(f.failing for f in findings)
    if matrix == "never" or (matrix == "auto" and not static_ok):
        why = "--matrix never" if matrix == "never" else "the static check failed"
        outcome = MatrixOutcome("not-run", why)
    else:
        outcome = run_matrix(work_dir, matrix_command)
        findings += _disagreement(static_ok, outcome, f"{folder}/")
    return GateReport(
        label,
        commit,
        tuple(c[1] for c in candidates),
        tuple(comparisons),
        tuple(findings),
        outcome,
        require_matrix,
    )


def _lock(
    old: Document,
    entry: dict[str, Any],
    path: Path,
    relative: str,
    folder: str,
    kind: str,
    i: int,
    work_entries: dict[str, Any],
) -> list[Finding]:
    out = []
    if not path.is_file():
        out.append(
            Finding(
                Change(
                    "RELEASED_FILE_REMOVED",
                    "",
                    "/",
                    f"released {kind} {entry['version']} is gone",
                    entry["sha256"],
                    None,
                ),
                relative,
            )
        )
    else:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            try:
                changes = [
                    f"{c.rule} at {c.pointer or '/'}" for c in diff(old, load_document(relative, data))
                ]
            except GateError as exc:
                changes = [f"no longer a schema document ({exc.detail})"]
            detail = f"sha256 {digest[:12]} != released {entry['sha256'][:12]}; " + (
                "; ".join(changes) if changes else "no schema-level change (bytes only)"
            )
            out.append(
                Finding(Change("RELEASED_FILE_MODIFIED", "", "/", detail, entry["sha256"], digest), relative)
            )
    now = work_entries.get(entry["version"])
    if now != entry:
        out.append(
            Finding(
                Change(
                    "RELEASED_FILE_MODIFIED",
                    f"/documents/{kind}/{i}",
                    "/",
                    f"index entry of released {kind} {entry['version']} changed",
                    entry,
                    now,
                ),
                f"{folder}/index.json",
            )
        )
    return out


def _major_bump(old: Document, new: Document, relative: str) -> list[Finding]:
    changes = diff(old, new)
    out = []
    if not any(c.rule == "WIRE_ID_CHANGED" for c in changes) or old.wire_id == new.wire_id:
        out.append(
            Finding(
                Change(
                    "MAJOR_WITHOUT_NEW_WIRE_ID",
                    "/x-wire-id",
                    "/",
                    f"new major {new.version} keeps wire id {new.wire_id!r}",
                    old.wire_id,
                    new.wire_id,
                ),
                relative,
                old.version,
            )
        )
    breaking = [c for c in changes if c.breaking]
    if breaking:
        out.append(
            Finding(
                Change(
                    "MAJOR_VERSION_BREAK",
                    "",
                    "/",
                    f"{len(breaking)} breaking change(s) across the major boundary: "
                    + ", ".join(sorted({c.rule for c in breaking})),
                ),
                relative,
                old.version,
            )
        )
    return out


def _apply_baseline(
    findings: list[Finding], baseline: Sequence[Accepted], today: datetime.date
) -> list[Finding]:
    used: set[int] = set()
    out = []
    for finding in findings:
        change = finding.change
        for entry in baseline:
            if entry.matches(change.rule, change.pointer, finding.file, finding.against) and change.breaking:
                used.add(entry.index)
                if not entry.expired(today):
                    finding = replace(finding, accepted=entry)
                break
        out.append(finding)
    for entry in baseline:
        where = f"/accepted/{entry.index}"
        if entry.expired(today):
            out.append(
                Finding(
                    Change(
                        "BASELINE_EXPIRED",
                        where,
                        "/",
                        f"{entry.rule} at {entry.pointer or '/'} expired on {entry.expires}",
                        str(entry.expires),
                        str(today),
                    ),
                    "baseline",
                )
            )
        elif entry.index not in used:
            out.append(
                Finding(
                    Change(
                        "BASELINE_STALE",
                        where,
                        "/",
                        f"{entry.rule} at {entry.pointer or '/'} matches no finding",
                    ),
                    "baseline",
                )
            )
    return out


def _disagreement(static_ok: bool, outcome: MatrixOutcome, where: str) -> list[Finding]:
    if outcome.status == "failed" and static_ok:
        detail = f"rules say compatible, the runtime matrix says breaking ({outcome.detail})"
    elif outcome.status == "passed" and not static_ok:
        detail = "rules say breaking, the runtime matrix passed (it may not exercise the change)"
    else:
        return []
    return [
        Finding(
            Change(
                "MATRIX_DISAGREES", "", "/", detail, "compatible" if static_ok else "breaking", outcome.status
            ),
            where,
        )
    ]
