"""The tools read and write the checkout they are in, whatever ``refitwire`` is installed.

Importing this module puts the checkout's own packages first on the import path (the folders
``pyproject.toml`` maps them from, ``[tool.setuptools] package-dir``), so ``python tools/X.py``
of a clone reads that clone's schemas and code, even where the interpreter has another
checkout, or a release, installed: a kit installed elsewhere would otherwise read its own
schemas and write what it finds into this clone. Where ``refitwire`` was already imported from
somewhere else the tool stops, saying so. :func:`writable` stops a tool that would write into
the checkout files computed from another schema folder (``$REFITWIRE_SCHEMA_DIR``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _package_dirs() -> dict[str, Path]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^package-dir\s*=\s*\{(.*)\}\s*$", text, flags=re.M)
    if table is None:
        raise SystemExit(f"{ROOT / 'pyproject.toml'} has no [tool.setuptools] package-dir table")
    return {name: ROOT / folder for name, folder in re.findall(r'"([\w.]+)"\s*=\s*"([^"]+)"', table[1])}


class _Checkout(importlib.abc.MetaPathFinder):
    """Finds the packages ``package-dir`` names in this checkout (subpackages follow their parent)."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders

    def find_spec(
        self, name: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        folder = self.folders.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])  # fmt: skip


def _use_this_checkout() -> None:
    loaded = sys.modules.get("refitwire")
    if loaded is not None:
        where = Path(str(loaded.__file__)).resolve()
        if not where.is_relative_to(ROOT):
            raise SystemExit(f"refitwire is already imported from {where.parent}, not from this checkout "
                             f"({ROOT}): run the tool as python tools/<tool>.py")  # fmt: skip
        return
    if not any(isinstance(finder, _Checkout) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Checkout(_package_dirs()))


def writable() -> None:
    """Stop unless the schemas the tools read are this checkout's (they are about to write into it)."""
    from refitwire import wire

    if wire.default_registry().folder != ROOT / "schema":
        raise SystemExit(f"the schemas are read from {wire.default_registry().folder} ({wire.ENV_VAR}), not from this "
                         f"checkout's {ROOT / 'schema'}: unset {wire.ENV_VAR} to write into it")  # fmt: skip


_use_this_checkout()
