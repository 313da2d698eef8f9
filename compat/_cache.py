"""The kit's cache folder: what is costly to make and the same on every run (the size cases'
tables, Hypothesis's tables, the simplest string of a pattern).

Everything kept here can be made again, so a cache that cannot be read or written only costs
the making; each file is written whole or not at all, so two processes building the same file
at once (two test workers) never read half of one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/refitwire`` (default ``~/.cache/refitwire``), read on every call."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "refitwire"


def content_key(*parts: str, code: Iterable[ModuleType | Path] = (), length: int = 16) -> str:
    """A short digest of ``parts`` and of the source of the ``code`` that makes a kept value, so
    a changed input or a changed maker is a new file, never an old one read as current."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    for source in code:
        path = Path(source.__file__ or "") if isinstance(source, ModuleType) else source
        digest.update(path.read_bytes())
    return digest.hexdigest()[:length]


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
