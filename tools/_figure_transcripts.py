"""The conformance runs compat/IMPLEMENTERS.md shows as transcripts, for tools/figures.py.

Each is a command a reader can paste in a checkout (a broken testee of ``tests/compat/``), run
here, and what it printed (its seconds, counts and messages as they came), so a transcript
never holds a time or a count that no run printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROUNDS = "python tests/compat/faulty_testee.py rounds-large-addresses"
#: Each transcript: the arguments after ``refitwire``, and the line its shown part starts at
#: (None: the whole output; else the part before is shown as ``...``: the matrix of cells).
TRANSCRIPTS: dict[str, tuple[list[str], str | None]] = {
    "faulty-run": (["conformance", "--testee", ROUNDS, "--seed", "5", "--examples", "50", "--no-size-limit"], "seed "),
    "faulty-case": (
        ["conformance", "--testee", ROUNDS, "--seed", "5", "--examples", "50", "--no-size-limit",
         "--case", "read:v-9179267ad442"],
        None,
    ),
}  # fmt: skip


def shown(argv: list[str]) -> str:
    """The command line as a reader types it (an argument with spaces in double quotes)."""
    return " ".join(["refitwire", *(f'"{a}"' if " " in a else a for a in argv)])


def measure_transcript(name: str, refitwire: list[str], root: Path) -> dict[str, Any]:
    """Run transcript ``name`` in the checkout ``root`` (its testee's path is relative to it),
    with ``python`` the interpreter running this script."""
    argv, _ = TRANSCRIPTS[name]
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    started = time.monotonic()
    done = subprocess.run([*refitwire, *argv], cwd=root, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=3600)  # fmt: skip
    return {"stdout": done.stdout, "exit": done.returncode, "wall": round(time.monotonic() - started, 1)}


def transcript_text(name: str, found: dict[str, Any], stamp: str) -> str:
    """The fenced transcript with its exit status and the machine after it."""
    argv, start = TRANSCRIPTS[name]
    lines = found["stdout"].rstrip("\n").splitlines()
    if start is not None:
        at = next((i for i, line in enumerate(lines) if line.startswith(start)), None)
        if at is None:
            raise SystemExit(f"{name}: no line starts with {start!r} in what {shown(argv)} printed")
        lines = ["...", *lines[at:]]
    body = "\n".join([f"$ {shown(argv)}", *lines])
    return f"\n```\n{body}\n```\n(exit {found['exit']}, {found['wall']:.0f} s of wall clock) {stamp}\n"
