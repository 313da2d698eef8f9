"""What the gate finds: each change with its evidence (witnesses, baseline entry), and the
gate's report with its exit code and verdict."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from refitwire.gate._baseline import Accepted
from refitwire.gate._change import Change
from refitwire.gate._document import Document
from refitwire.gate._matrix import MatrixOutcome
from refitwire.gate._rules import Direction
from refitwire.gate._walk import diff
from refitwire.gate._witness import Witness, find_witness, refuted
from refitwire.wire import Registry

EXIT_COMPATIBLE, EXIT_ERROR, EXIT_BREAKING = 0, 1, 100


def change_hash(change: Change) -> str:
    """What a baseline entry accepts: the change's rule, place and both sides, hashed."""
    record = [change.rule, change.pointer, change.path, change.old, change.new]
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Finding:
    """One change (or lock, baseline or matrix problem), where it is and its evidence."""

    change: Change
    file: str
    against: str | None = None
    witnesses: tuple[Witness, ...] = ()
    no_witness: tuple[Direction, ...] = ()
    accepted: Accepted | None = None
    searched: bool = True  # False: the witness search was skipped (--no-witness)

    @property
    def failing(self) -> bool:
        return self.change.breaking and self.accepted is None

    @property
    def unproven(self) -> bool:
        """The rules flag a blob-level break, and no witness was found (or searched for) in any direction."""
        skipped = not self.searched and bool(self.change.directions)
        return self.failing and (bool(self.no_witness) or skipped) and not self.witnesses

    @property
    def hash(self) -> str:
        return change_hash(self.change)

    def baseline_entry(self) -> dict[str, Any]:
        """The entry that accepts exactly this finding (reason, link and expiry to fill in)."""
        entry = {
            "rule": self.change.rule,
            "pointer": self.change.pointer,
            "change": self.hash,
            "file": self.file,
        }
        return {**entry, "reason": "...", "link": "...", "expires": "YYYY-MM-DD"}


@dataclass(frozen=True)
class GateReport:
    against: str
    commit: str
    candidates: tuple[str, ...]
    comparisons: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]
    matrix: MatrixOutcome
    require_matrix: bool = False
    already_released: int = 0  # changes already present between released versions, not reported again
    notes: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        if any(f.failing for f in self.findings):
            return EXIT_BREAKING
        if self.matrix.status in ("errored", "incomplete") or (
            self.require_matrix and self.matrix.status == "not-run"
        ):
            return EXIT_ERROR
        return EXIT_COMPATIBLE

    @property
    def verdict(self) -> str:
        code = self.exit_code
        if code == EXIT_BREAKING and all(f.unproven for f in self.findings if f.failing):
            return "unproven"
        if code == EXIT_ERROR and self.matrix.status == "incomplete":
            return "incomplete"
        return {EXIT_COMPATIBLE: "compatible", EXIT_BREAKING: "breaking"}.get(code, "error")


def evidence(
    change: Change, old: Document, new: Document, registry: Registry, finder: Finder | None = None
) -> tuple[tuple[Witness, ...], tuple[Direction, ...]]:
    """Witnesses for each direction ``change`` claims to break, and the directions without one.

    Every witness ``finder`` (default: :func:`find_witness`) gives is checked again here before it
    is kept (``refuted``: a writer of its version writes it under every rule, the other version's
    reader rejects it at the change's place): one that fails is no witness, and its direction is
    unproven, never breaking on the strength of a blob no writer could write."""
    found, missing = [], []
    for direction in change.directions if change.breaking else ():
        witness = (finder or find_witness)(change, old, new, direction, registry)
        writer, reader = (old, new) if direction == "BACKWARD" else (new, old)
        if witness is None or refuted(change, writer, reader, witness.blob, registry) is not None:
            missing.append(direction)
        else:
            found.append(witness)
    return tuple(found), tuple(missing)


#: What finds a witness: (change, old, new, direction, registry) -> a witness or None.
Finder = Callable[[Change, Document, Document, Direction, Registry], "Witness | None"]


def compare(
    old: Document,
    new: Document,
    file: str,
    witnesses: bool = True,
    changes: Sequence[Change] | None = None,
    *,
    registry: Registry,
) -> list[Finding]:
    """Findings of one old -> new comparison (of ``changes``, default: every change); witnesses are
    checked by the readers ``registry`` holds."""
    out = []
    for change in diff(old, new) if changes is None else changes:
        found, missing = evidence(change, old, new, registry) if witnesses else ((), ())
        out.append(Finding(change, file, old.version, found, missing, searched=witnesses))
    return out
