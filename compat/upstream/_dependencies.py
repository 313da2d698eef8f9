"""What a ModelExpress source tree adds to the dependencies of the release it descends from.

A source tree's environment holds the recipe of the released ones (:mod:`.envs`), which
installs only what the two wire modules import. A pull request that makes them import a new
package (``import orjson``) declares it too; that declaration is found by comparing what the
tree declares with what its base release declares (:func:`added`), so nothing is listed by
hand, and the release's own heavy dependencies (model streamers, cloud SDKs, which the wire
never imports) stay out of the environment.

The release's declaration (:func:`released_requires`) is its ``Requires-Dist``: read offline
from the ``modelexpress`` metadata in its released environment (``pip install --no-deps
modelexpress==X`` put it there), else asked of pip (``pip install --dry-run --report``, with
the caller's pip configuration, as the environment builds use), else :class:`DependenciesUnknown`
saying where it looked.

Stdlib only: environment markers are evaluated with ``packaging`` when it is importable (it is
no dependency of refitwire), else a small fallback (:func:`applicable`).
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from email.parser import Parser
from pathlib import Path
from types import ModuleType

from refitwire.compat.upstream._errors import DependenciesUnknown

__all__ = ["DependenciesUnknown", "added", "applicable", "base_release", "project", "released_requires"]

_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_RE = re.compile(r"\bextra\b")
_VERSION_RE = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")
_SITE_PACKAGES = ("lib/python*/site-packages", "Lib/site-packages")
_PIP_TIMEOUT_S = 180


def project(line: str) -> str:
    """The canonical name of the project a requirement line is about ("" when it names none)."""
    match = _NAME_RE.match(line)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def applicable(lines: Iterable[object]) -> list[str]:
    """The requirement lines that a plain install (no extras) on this interpreter installs.

    With ``packaging``: each marker evaluated here, a line kept (without its marker) when it
    holds. Without it: a line whose marker names ``extra`` is dropped (a plain install asks for
    none) and any other keeps its marker, for pip to evaluate when it installs the line into
    the new environment, which runs this same interpreter."""
    markers: ModuleType | None
    try:  # imported by name: optional, and typed or absent wherever mypy runs
        markers = importlib.import_module("packaging.markers")
    except ImportError:
        markers = None
    out = []
    for raw in lines:
        line = str(raw).strip()
        requirement, _, marker = (part.strip() for part in line.partition(";"))
        if not project(requirement):
            continue
        if not marker:
            out.append(requirement)
        elif markers is None:
            if not _EXTRA_RE.search(marker):
                out.append(line)
        else:
            try:
                holds = markers.Marker(marker).evaluate({"extra": ""})
            except ValueError:  # InvalidMarker, UndefinedComparison ...: pip will say
                out.append(line)
                continue
            if holds:
                out.append(requirement)
    return out


def added(tree: Iterable[object], release: Iterable[object], recipe: Iterable[str]) -> tuple[str, ...]:
    """The lines of ``tree`` that apply here and are about a project that neither ``release``
    (applicably) nor ``recipe`` names: what the tree adds. A project the recipe names is the
    recipe's business (the tree's specifier replaces the recipe's line, :mod:`.source`)."""
    known = {project(line) for line in applicable(release)} | {project(line) for line in recipe}
    out: list[str] = []
    for line in applicable(tree):
        if project(line) not in known and line not in out:
            out.append(line)
    return tuple(out)


def _release_key(version: str) -> tuple[tuple[int, ...], bool] | None:
    """``version``'s release numbers (padded) and whether it comes before that release (a
    development or pre-release: ``0.8.0.dev0`` is before ``0.8.0``, ``0.8.0.post1`` after it)."""
    match = _VERSION_RE.match(version.split("+")[0].strip())
    if not match:
        return None
    numbers = tuple(int(x) for x in match.group(1).split("."))
    suffix = match.group(2).lstrip(".-_").lower()
    return numbers + (0,) * (4 - len(numbers)), bool(suffix) and not suffix.startswith("post")


def base_release(version: str, released: Iterable[str]) -> str | None:
    """The newest of ``released`` that ``version`` descends from: at or below it (strictly
    below when ``version`` is a development or pre-release). ``None`` when none is."""
    mine = _release_key(version)
    if mine is None:
        return None
    best: tuple[tuple[int, ...], str] | None = None
    for candidate in released:
        key = _release_key(candidate)
        if key is None or key[1]:  # a release is a final version
            continue
        below = key[0] < mine[0] or (key[0] == mine[0] and not mine[1])
        if below and (best is None or key[0] > best[0]):
            best = (key[0], candidate)
    return best[1] if best else None


def released_requires(version: str, environments: Iterable[Path]) -> tuple[str, ...]:
    """The ``Requires-Dist`` lines of the released ``modelexpress`` ``version``: from its
    metadata in the first of ``environments`` that holds it, else from pip; else
    :class:`DependenciesUnknown`."""
    environments = list(environments)
    for env in environments:
        for pattern in _SITE_PACKAGES:
            for metadata in sorted(env.glob(f"{pattern}/modelexpress-*.dist-info/METADATA")):
                try:
                    meta = Parser().parsestr(metadata.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError):
                    continue
                if project(meta.get("Name") or "") == "modelexpress" and meta.get("Version") == version:
                    return tuple(meta.get_all("Requires-Dist") or ())
    looked = ", ".join(map(str, environments)) or "no environment folder"
    try:
        return _from_pip(version)
    except DependenciesUnknown as exc:
        raise DependenciesUnknown(f"not installed in {looked}, and pip could not say: {exc}") from None


def _from_pip(version: str) -> tuple[str, ...]:
    """What pip's resolver reads for ``modelexpress==version`` (its metadata only: ``--dry-run``)."""
    argv = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
            "--quiet", "--no-input", "--disable-pip-version-check", "--report", "-",
            f"modelexpress=={version}"]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DependenciesUnknown(str(exc)) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise DependenciesUnknown(last)
    try:
        for item in json.loads(done.stdout)["install"]:
            meta = item["metadata"]
            if project(meta["name"]) == "modelexpress" and meta["version"] == version:
                return tuple(str(line) for line in meta.get("requires_dist") or ())
    except (ValueError, KeyError, TypeError) as exc:
        raise DependenciesUnknown(f"an unreadable pip report ({exc!r})") from None
    raise DependenciesUnknown(f"pip's report names no modelexpress {version}")
