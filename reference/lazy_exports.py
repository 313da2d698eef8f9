"""Re-exports loaded on first use, named once (internal API, used by the packages' ``__init__``).

A package's ``__init__`` writes its re-exports as imports under ``TYPE_CHECKING``: static
checkers read them as they are, and at run time :func:`lazy_names` reads the same lines, so
the package's ``__getattr__`` (:func:`loader`) imports a module only when one of its names is
first used. Importing the package then costs nothing (``refitwire --help`` imports no codec,
a testee process does not pay for the runner), and nothing the re-exported modules do at
import (reading the schema folder) can fail before a caller is there to report it.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["lazy_names", "loader"]


def lazy_names(init_file: str) -> dict[str, tuple[str, str]]:
    """public name -> (module, its name there), from the ``TYPE_CHECKING`` imports of ``init_file``."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    return {
        alias.asname or alias.name: (statement.module, alias.name)
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }


def loader(package: str, names: dict[str, tuple[str, str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each of ``names`` when first asked."""

    def __getattr__(name: str) -> Any:
        if name in names:
            module, attr = names[name]
            return getattr(importlib.import_module(module), attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
