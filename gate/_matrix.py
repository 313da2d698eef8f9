"""The runtime step: run ``refitwire matrix --format json`` with the candidate schemas included.

The matrix (``refitwire.compat``) adds each unreleased version in ``--schema-dir`` as a
candidate participant; the gate runs it and reads the footer line of its JSON-lines report
(``{"type": "footer", "required_failed": int, ...}``). No footer is an error, never a pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MatrixStatus = Literal["passed", "failed", "not-run", "errored"]


@dataclass(frozen=True)
class MatrixOutcome:
    status: MatrixStatus
    detail: str
    required_failed: int | None = None


def run_matrix(
    schema_dir: Path, command: Sequence[str] | None = None, timeout: float = 1800.0
) -> MatrixOutcome:
    """Run the compat matrix over ``schema_dir`` and read its footer.

    ``command`` replaces ``python -m refitwire matrix`` (a test double or another runner);
    ``--format json --schema-dir DIR`` is appended either way.
    """
    if command is None:
        command = [sys.executable, "-m", "refitwire", "matrix"]
    argv = [*command, "--format", "json", "--schema-dir", str(schema_dir)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return MatrixOutcome("errored", f"could not run the matrix: {exc}")
    footer = None
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("type") == "footer":
            footer = record
    if footer is None or not isinstance(footer.get("required_failed"), int):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return MatrixOutcome(
            "errored",
            f"matrix exited {done.returncode} without a footer line"
            + (f": {' / '.join(tail)}" if tail else ""),
        )
    failed = footer["required_failed"]
    if failed:
        return MatrixOutcome("failed", f"{failed} required matrix cell(s) failed", failed)
    return MatrixOutcome("passed", "every required matrix cell passed", 0)
