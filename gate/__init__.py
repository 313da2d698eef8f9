"""The wire-change gate: classify schema changes, lock released versions, prove each verdict.

Public: the names in ``__all__``. Modules starting with ``_`` are private; their layout may
change without notice. The commands are ``refitwire diff`` and ``refitwire gate``.
"""

from __future__ import annotations

from refitwire.gate._baseline import Accepted, load_baseline
from refitwire.gate._change import Change
from refitwire.gate._document import Document, load_document
from refitwire.gate._errors import GateError
from refitwire.gate._findings import (
    EXIT_BREAKING,
    EXIT_COMPATIBLE,
    EXIT_ERROR,
    Finding,
    GateReport,
    compare,
    evidence,
)
from refitwire.gate._gate import run_gate
from refitwire.gate._git import read_source, repo_root
from refitwire.gate._matrix import MatrixOutcome
from refitwire.gate._report import FORMATS, render
from refitwire.gate._rules import RULES, Rule
from refitwire.gate._scaffold import new_version, release
from refitwire.gate._walk import diff
from refitwire.gate._witness import Witness, close

__all__ = [
    # running
    "run_gate",
    "compare",
    "diff",
    "evidence",
    "load_document",
    "load_baseline",
    "render",
    "close",
    "new_version",
    "release",
    "read_source",
    "repo_root",
    # records
    "Accepted",
    "Change",
    "Document",
    "Finding",
    "GateReport",
    "MatrixOutcome",
    "Rule",
    "Witness",
    "GateError",
    # constants
    "EXIT_BREAKING",
    "EXIT_COMPATIBLE",
    "EXIT_ERROR",
    "FORMATS",
    "RULES",
]
