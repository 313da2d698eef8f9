"""Small helpers shared by the verbs."""

from __future__ import annotations

import sys
from pathlib import Path

from refitwire.cli import USAGE_EXIT


def read_input(name: str) -> bytes:
    """The bytes of a file, or of stdin for ``-``."""
    return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()


def fail(message: str, code: int = USAGE_EXIT) -> int:
    print(f"refitwire: {message}", file=sys.stderr)
    return code
