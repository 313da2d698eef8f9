"""Where the checkout keeps each package: ``pyproject.toml``'s ``[tool.setuptools] package-dir``.

Read by the tools that lay the package out themselves (:mod:`_clone`'s import finder,
``import_graph``'s tree of links); importing it changes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, Path]:
    """Each package's folder in this checkout, by dotted name (a regular expression over the one
    inline table: ``tomllib`` is not in Python 3.10, which the package supports)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^package-dir\s*=\s*\{(.*)\}\s*$", text, flags=re.M)
    if table is None:
        raise SystemExit(f"{ROOT / 'pyproject.toml'} has no [tool.setuptools] package-dir table")
    return {name: ROOT / folder for name, folder in re.findall(r'"([\w.]+)"\s*=\s*"([^"]+)"', table[1])}
