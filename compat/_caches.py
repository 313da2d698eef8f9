"""Every cache the kit writes, its size on disk, and their safe removal (``refitwire cache``).

The kit keeps two kinds of things between runs, all of which it can make again:

* under :func:`~refitwire.compat._cache.cache_home` (``$XDG_CACHE_HOME/refitwire``, by default
  ``~/.cache/refitwire``): the size cases' tables and decoded forms (``size-cases``), the
  simplest strings of the schemas' patterns (``patterns``), Hypothesis's storage
  (``hypothesis``) and the released ``modelexpress`` sdists the upstream tests unpack
  (``sdists``);
* the upstream environments (``compat-envs``): one virtual environment per released
  ``modelexpress`` and per ModelExpress source tree, in every folder of
  :func:`refitwire.compat.upstream.envs.cache_dirs` (``$REFITWIRE_ENVS``, else a checkout's
  ``.compat-envs/``, else ``compat-envs`` under the cache home).

A folder found under the cache home that no kit version named here is listed too, under its
own name, so that nothing the kit left there goes unseen.

Removal only touches what the kit made: a cache under the cache home is that folder; in an
environment folder (which ``$REFITWIRE_ENVS`` may point anywhere) only the kit's own entries
(``modelexpress-*`` environments, their failed-build logs and half-built temporaries), never the
folder itself or anything else in it; an environment another process is building (its build
lock held) is skipped and said so. A symbolic link is removed as a link, never followed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from refitwire.compat._cache import cache_home
from refitwire.compat.upstream._locations import cache_dirs

__all__ = ["Cache", "Pruned", "caches", "disk_size", "prune"]

#: What each cache under the cache home holds (the folder's name -> one line).
KNOWN = {
    "size-cases": "the size cases' 64 MiB tables and what each reader version must decode from them",
    "patterns": "the simplest string each schema pattern matches",
    "hypothesis": "Hypothesis's storage: its character tables and example database",
    "sdists": "the released modelexpress sdists the upstream tests unpack",
    "gate-bases": "the gate's reports of an implementation's base, by commit, kit, schemas, seed and examples",
}
ENVS = "compat-envs"
ENVS_WHAT = "one virtual environment per released modelexpress and per ModelExpress source tree"
#: The entries of an environment folder that the kit made (see .envs and ._build_steps).
_ENV_ENTRY = re.compile(r"\.?modelexpress-[^/]+")
_LOCK = re.compile(r"\.modelexpress-(?P<version>.+)\.lock")
_TMP = re.compile(r"\.(?P<name>modelexpress-.+)\.tmp-.*")


@dataclass(frozen=True)
class Cache:
    """One cache: its name (what ``prune NAME`` takes), what it holds and its entries on disk."""

    name: str
    what: str
    folders: tuple[Path, ...]
    entries: tuple[Path, ...] = field(repr=False)

    @property
    def size(self) -> int:
        return disk_size(self.entries)


@dataclass(frozen=True)
class Pruned:
    """What a prune did: the paths removed, their bytes, and those left with the reason."""

    removed: tuple[Path, ...]
    freed: int
    kept: tuple[tuple[Path, str], ...]


def caches() -> list[Cache]:
    """Every cache the kit has written, where the environment says they are now (read per call)."""
    home = cache_home()
    found = []
    for name, what in KNOWN.items():
        folder = home / name
        found.append(Cache(name, what, (folder,), (folder,) if _exists(folder) else ()))
    env_folders = list(dict.fromkeys([*cache_dirs(), home / ENVS]))
    env_folders = [f for f in env_folders if f == env_folders[0] or _exists(f)]
    found.append(Cache(ENVS, ENVS_WHAT, tuple(env_folders), tuple(_env_entries(env_folders))))
    with contextlib.suppress(OSError):
        for other in sorted(home.iterdir()):
            if other.name not in KNOWN and other.name != ENVS:
                found.append(Cache(other.name, "not made by this kit version", (other,), (other,)))
    return found


def _exists(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def _env_entries(folders: Sequence[Path]) -> Iterator[Path]:
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            # a lock file stays: a builder may be waiting on it
            if _ENV_ENTRY.fullmatch(name) and not _LOCK.fullmatch(name):
                yield folder / name


def disk_size(paths: Sequence[Path]) -> int:
    """Bytes the paths take on disk (allocated blocks, as ``du`` counts them; each file once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for path in paths:
        for item in _walk(path):
            try:
                info = os.lstat(item)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += getattr(info, "st_blocks", 0) * 512 or info.st_size
    return total


def _walk(path: Path) -> Iterator[str]:
    yield str(path)
    if path.is_symlink() or not path.is_dir():
        return
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            yield os.path.join(root, name)


def prune(chosen: Sequence[Cache], *, dry_run: bool = False) -> Pruned:
    """Remove the entries of ``chosen`` (see the module's doc for what is never touched)."""
    removed: list[Path] = []
    kept: list[tuple[Path, str]] = []
    freed = 0
    for cache in chosen:
        for entry in cache.entries:
            with _unless_building(entry, cache.name == ENVS) as busy:
                if busy:
                    kept.append((entry, busy))
                    continue
                size = disk_size([entry])
                if not dry_run:
                    try:
                        _remove(entry)
                    except OSError as exc:
                        kept.append((entry, exc.strerror or str(exc)))
                        continue
            removed.append(entry)
            freed += size
    return Pruned(tuple(removed), freed, tuple(kept))


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


@contextlib.contextmanager
def _unless_building(entry: Path, is_env: bool) -> Iterator[str | None]:
    """Hold an environment's build lock while it is removed; yield why it must stay instead
    (another process holds the lock: it is building that environment), else None."""
    tmp = _TMP.fullmatch(entry.name)
    key = (tmp["name"] if tmp else entry.name).removesuffix(".failed.log").removeprefix("modelexpress-")
    lock = entry.parent / f".modelexpress-{key}.lock"
    if not is_env or not lock.exists():
        yield None
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: there are no build locks to ask
        yield None
        return
    try:
        handle = lock.open("a")
    except OSError as exc:
        yield f"its build lock cannot be opened: {exc.strerror}"
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield "being built by another process (its build lock is held)"
            return
        try:
            yield None
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
