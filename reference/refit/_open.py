"""Which store a spec names, opened: a ``redis://`` or ``rediss://`` URL (``_redis_store``,
imported only then: it needs ``redis``), else a directory (``_store.DirectoryStore``)."""

from __future__ import annotations

import shutil
import tempfile

from ._store import _URL_SCHEMES, DirectoryStore, RendezvousStore, RunStore

__all__ = ["check_spec", "open_store", "run_store"]


def _scheme(spec: str) -> str | None:
    scheme, sep, _ = spec.partition("://")
    if not sep:
        return None
    if scheme not in _URL_SCHEMES:
        raise ValueError(f"unknown store scheme {scheme + '://'!r}: want a directory, redis:// or rediss://")
    return scheme


def check_spec(spec: str) -> None:
    """Raise ``ValueError`` (never showing a password) if ``spec`` cannot name a store; connects to nothing."""
    if _scheme(spec) is not None:
        from ._redis_store import parse_redis_spec

        parse_redis_spec(spec)


def open_store(spec: str) -> RendezvousStore:
    """The store a spec names: ``redis://``/``rediss://`` URL (needs ``redis``), else a directory."""
    if _scheme(spec) is None:
        return DirectoryStore(spec)
    from ._redis_store import RedisStore

    return RedisStore(spec)


def run_store(spec: str | None) -> RunStore:
    """Resolve a run's ``--store``: none is a fresh temporary directory, removed afterwards;
    a Redis URL without a namespace gets a fresh one of its own, dropped afterwards."""
    if spec is None:
        tmp = tempfile.mkdtemp(prefix="refitwire-refit-")
        return RunStore(tmp, tmp, cleanup=lambda: shutil.rmtree(tmp, ignore_errors=True))
    if _scheme(spec) is None:
        return RunStore(spec, spec)
    from ._redis_store import run_redis_store

    return run_redis_store(spec)
