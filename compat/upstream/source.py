"""A ModelExpress *source tree* (a checkout, or an unpacked sdist) as a compat-matrix participant.

A pull request changes the wire in ``rendezvous.py`` and ``verify.py``; to judge it, the
matrix runs that tree's own ``wrap/unwrap_rendezvous_blob`` and ``tensor_digest`` through
``adapter_testee.py --source DIR --version V``, in an environment built like the released
ones (:mod:`.envs`) but with no ``modelexpress`` installed, so nothing but the tree's code
can answer.

What the tree is called: its declared version plus where it came from, as a PEP 440 local
label. A git checkout gives ``0.8.0.dev0+g3db6bdc4`` (its ``pyproject.toml`` may lag behind
the releases; see :func:`locate`) (``.dirty.<hash>`` added when the
package has uncommitted changes); a tree without git, such as an unpacked sdist, gives
``0.7.0+nogit.<hash>``, where ``<hash>`` is 8 hex digits of a sha256 over every ``.py``
file of the package, so two patched copies never share a label.

Its requirements: the recipe of the released environments, with the tree's own specifier
for each of those packages that it declares (``pyproject.toml``, or ``PKG-INFO`` in an
sdist), then every dependency the tree declares that the release it descends from does not
(what the pull request adds, say ``orjson>=3.9`` for a ``rendezvous.py`` that imports it;
:mod:`._dependencies`). torch stays the pinned CPU build. When the release's declaration
cannot be found, the environment gets the recipe alone and ``log`` says so.

Stdlib only: this runs in refitwire's own process (``compat.runner._participants``, the tests), never
in an upstream environment, but ``packaging`` is no dependency of refitwire; markers are
evaluated with it where it happens to be importable.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

from refitwire.compat.upstream import envs
from refitwire.compat.upstream._dependencies import (
    DependenciesUnknown,
    added,
    base_release,
    project,
    released_requires,
)
from refitwire.compat.upstream._errors import SourceError, SourceWarning

__all__ = ["SourceError", "SourceTree", "SourceWarning", "locate"]

#: Where the package sits in the ModelExpress repository.
CLIENT_ROOT = Path("modelexpress_client/python")
_MODULE = Path("modelexpress/refit/reshard/rendezvous.py")


@dataclass(frozen=True)
class SourceTree:
    """A located tree: ``root`` holds the ``modelexpress`` package."""

    root: Path
    version: str  # PEP 440, with the local label saying which code this is
    origin: str  # "git 3db6bdc4", "git 3db6bdc4 with uncommitted changes" or "no git: content hash"
    requirements: tuple[str, ...]
    added: tuple[str, ...] = ()  # the end of ``requirements``: what the tree adds to its release's

    @property
    def label(self) -> str:
        return f"modelexpress@{self.version}"


def locate(
    path: Path,
    base_requirements: tuple[str, ...],
    released: tuple[str, ...] = (),
    *,
    declared_by: Callable[[str], Sequence[str]] | None = None,
    log: Callable[[str], None] | None = None,
) -> SourceTree:
    """The tree at ``path``: the repository root, its ``modelexpress_client/python`` or an sdist.

    ``released``: the modelexpress versions already released. A git checkout's
    ``pyproject.toml`` is only stamped with the version at release time, so between releases
    it may still say an old one (``0.5.0`` while ``0.7.0`` is out); such a tree is the next
    version's development, ``0.8.0.dev0``, after the newest release tag it contains (or, with
    no tags, the newest of ``released``). The newest of ``released`` at or below the tree's
    version is the release it descends from: ``declared_by(version)`` gives what that release
    declares (by default its metadata, :func:`._dependencies.released_requires`; raising
    :class:`._dependencies.DependenciesUnknown` when it cannot). ``log`` hears why nothing was
    added when that fails (by default a :class:`SourceWarning`)."""
    path = path.expanduser().resolve()
    for root in (path, path / CLIENT_ROOT):
        if (root / _MODULE).is_file():
            break
    else:
        raise SourceError(
            f"{path}: not a ModelExpress source tree (no {_MODULE} here or under {CLIENT_ROOT})"
        )
    declared = _declared(root)
    version = str(declared.get("version") or "0")
    digest = _content_hash(root / "modelexpress")
    tracked = _git(["ls-files", "--", _MODULE.as_posix()], root)  # not an sdist unpacked in some repo
    commit = _git(["rev-parse", "--short=8", "HEAD"], root) if tracked else ""
    if commit:
        version = _past_releases(version, root, released)
        dirty = _git(["status", "--porcelain", "--", "modelexpress"], root)
        local, origin = (
            (f"g{commit}.dirty.{digest}", f"git {commit} with uncommitted changes")
            if dirty
            else (f"g{commit}", f"git {commit}")
        )
    else:
        local, origin = f"nogit.{digest}", "no git: content hash"
    sep = "." if "+" in version else "+"
    raw = declared.get("requires")
    requires = [str(line) for line in raw] if isinstance(raw, list) else []
    more = _added(requires, version, base_requirements, released, declared_by, log or _warn)
    wanted = _requirements(base_requirements, requires) + more
    return SourceTree(root, f"{version}{sep}{local}", origin, wanted, more)


def _added(
    requires: list[str],
    version: str,
    recipe: tuple[str, ...],
    released: tuple[str, ...],
    declared_by: Callable[[str], Sequence[str]] | None,
    log: Callable[[str], None],
) -> tuple[str, ...]:
    """What the tree declares beyond the recipe and beyond the release it descends from."""
    recipe = (*recipe, envs.TORCH_REQUIREMENT)  # torch is installed first, pinned, and never again
    beyond = added(requires, (), recipe)
    if not beyond:  # nothing to compare with the release: no look-up (and no pip)
        return ()
    base = base_release(version, released)
    names = ", ".join(project(line) for line in beyond)
    if base is None:
        log(f"modelexpress {version}: no release it descends from among {', '.join(released) or 'none given'}, "
            f"so nothing it declares beyond the recipe is installed ({names})")  # fmt: skip
        return ()
    try:
        if declared_by is None:
            folders = [envs.env_dir(base, folder) for folder in envs.cache_dirs()]
            release: Sequence[str] = released_requires(base, folders)
        else:
            release = declared_by(base)
    except DependenciesUnknown as exc:
        log(f"modelexpress {version}: what its release {base} declares is unknown ({exc}); a dependency the "
            f"tree adds is not installed, so its environment has the recipe alone (build the release's: "
            f"python -m refitwire.compat.upstream.envs --versions {base})")  # fmt: skip
        return ()
    return added(requires, release, recipe)


def _warn(message: str) -> None:
    # Seen where locate was called (locate, _added, this): a library has no stderr of its own.
    warnings.warn(message, SourceWarning, stacklevel=4)


def _key(version: str) -> tuple[int, ...] | None:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", version.strip())
    return tuple(int(x) for x in match.groups()) if match else None


def _past_releases(declared: str, root: Path, released: tuple[str, ...]) -> str:
    """``declared``, unless a release tag in the checkout's history (or a released version) is
    newer: then the next minor's development version, or the tag itself when HEAD is on it."""
    tag = _git(["describe", "--tags", "--abbrev=0", "--match", "v[0-9]*"], root) or _git(
        ["describe", "--tags", "--abbrev=0", "--match", "[0-9]*"], root
    )
    tagged = _key(tag) if tag else None
    known = [k for k in (tagged, *map(_key, released)) if k is not None]
    mine = _key(declared.split("+")[0].split(".dev")[0]) or (0, 0, 0)
    if not known or max(known) <= mine:
        return declared
    newest = max(known)
    if tagged == newest and _git(["rev-list", "--count", f"{tag}..HEAD"], root) == "0":
        return ".".join(map(str, newest))
    return f"{newest[0]}.{newest[1] + 1}.0.dev0"


def _declared(root: Path) -> dict[str, object]:
    """The tree's version and dependencies: from pyproject.toml, else PKG-INFO."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and sys.version_info >= (3, 11):
        import tomllib

        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, ValueError) as exc:
            raise SourceError(f"{pyproject}: {exc}") from None
        if isinstance(project.get("version"), str):
            return {"version": project["version"], "requires": list(project.get("dependencies", []))}
    info = root / "PKG-INFO"
    if info.is_file():
        meta = Parser().parsestr(info.read_text(encoding="utf-8"))
        return {"version": meta.get("Version"), "requires": meta.get_all("Requires-Dist") or []}
    return {}


def _requirements(base: tuple[str, ...], declared: list[str]) -> tuple[str, ...]:
    """``base``, each replaced by the tree's own line for the same project (markers dropped)."""
    own = {project(line): line.split(";")[0].strip() for line in declared if project(line)}
    return tuple(own.get(project(line), line) for line in base)


def _content_hash(package: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(package.rglob("*.py")):
        digest.update(file.relative_to(package).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:8]


def _git(args: list[str], cwd: Path) -> str:
    """git's output in ``cwd``, or "" when it is not a git work tree (or git is missing)."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
