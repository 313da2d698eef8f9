"""Where the upstream environments live (:mod:`.envs` builds them there and re-exports these).

``$REFITWIRE_ENVS`` if set, else ``.compat-envs/`` in refitwire's own source checkout (an
editable install), else a per-user cache (``$XDG_CACHE_HOME/refitwire/compat-envs``, by default
under ``~/.cache``), never a folder inside whatever repository the command runs in.
``$REFITWIRE_ENVS`` may list several folders (``os.pathsep``): each is searched, and builds go
into the first.

Apart from :mod:`.envs`, which holds the recipe and the build: where the environments are is
a question of its own (the tests and tools ask it, and :mod:`.source` reads a released
environment's metadata without building anything). Stdlib only.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_VAR", "cache_dir", "cache_dirs"]

#: Overrides the cache directory.
ENV_VAR = "REFITWIRE_ENVS"


def _checkout_root() -> Path | None:
    """The source checkout holding this file (``compat/upstream/_locations.py``), if any."""
    here = Path(__file__).resolve()
    if len(here.parents) < 3:
        return None
    root = here.parents[2]
    if (root / "pyproject.toml").is_file() and (root / ".git").exists():
        return root
    return None


def cache_dirs() -> list[Path]:
    """Where environments are looked for, in order (not created here); builds go to the first."""
    override = [part for part in os.environ.get(ENV_VAR, "").split(os.pathsep) if part]
    if override:
        return [Path(part).expanduser().resolve() for part in override]
    root = _checkout_root()
    if root is not None:
        return [root / ".compat-envs"]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return [Path(base).expanduser().resolve() / "refitwire" / "compat-envs"]


def cache_dir() -> Path:
    """Where environments are built (the first of :func:`cache_dirs`)."""
    return cache_dirs()[0]
