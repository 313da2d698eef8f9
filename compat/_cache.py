"""The kit's cache folder: what is costly to make and the same on every run (the size cases'
tables, the reference's calibration, Hypothesis's tables, the simplest string of a pattern).

Everything kept here can be made again, so a cache that cannot be read or written only costs
the making; each file is written whole or not at all, so two processes building the same file
at once (two test workers) never read half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/refitwire`` (default ``~/.cache/refitwire``), read on every call."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "refitwire"


def write_whole(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file in its folder; False when it cannot."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)  # a full disk: no half-written file left behind
        return False
    return True
