"""``pytest --check-touched``: fail unless the run touches every module of the package.

A module is touched when a test process imports it or a test starts it (``python -m MODULE``
or the module's file as a script, seen through the ``subprocess.Popen`` audit event). Run it
on the quick tier (``pytest --check-touched``, ``-n 2`` works too) to show that the default
selection still reaches every module; the modules are those of ``[tool.setuptools] packages``
in pyproject.toml, so a new module is checked without being listed here.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import pkgutil
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTION = "--check-touched"


def started(words: Iterable[str]) -> set[str]:
    """The modules a command line runs: ``-m MODULE``, or a ``.py`` file (kept as its path)."""
    words = list(words)
    found = {words[i + 1] for i, w in enumerate(words[:-1]) if w == "-m"}
    return found | {str(Path(w).resolve()) for w in words if w.endswith(".py")}


def _packages() -> list[str]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: the installed package's own folders instead
        return ["refitwire"]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["setuptools"]["packages"])


def every_module() -> dict[str, str]:
    """Each module of the package and its file."""
    modules: dict[str, str] = {}
    for package in _packages():
        spec = _spec(package)
        if spec is None or spec.submodule_search_locations is None:
            continue
        modules[package] = str(Path(spec.origin or "").resolve())
        for info in pkgutil.iter_modules(spec.submodule_search_locations, package + "."):
            if not info.ispkg:
                found = _spec(info.name)
                modules[info.name] = str(Path(found.origin or "").resolve()) if found else ""
    return modules


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except Exception:  # a package whose extra is not installed: its modules stay listed by name
        return None


def untouched(touched: set[str]) -> list[str]:
    return sorted(
        name for name, file in every_module().items() if name not in touched and file not in touched
    )
