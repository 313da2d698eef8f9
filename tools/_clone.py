"""The tools read and write the checkout they are in, whatever ``refitwire`` is installed.

Importing this module puts the checkout's own packages first on the import path (the folders
``pyproject.toml`` maps them from, ``[tool.setuptools] package-dir``), so ``python tools/X.py``
of a clone runs that clone's code, even where the interpreter has another checkout, or a
release, installed.

The schemas a tool reads are named explicitly, never found through the imported package:
:func:`registry` is this checkout's ``schema/`` folder (``$REFITWIRE_SCHEMA_DIR``'s when it is
set). So a tool imported where ``refitwire`` already was, from an install of this code (a
test run against a non-editable install outside the checkout), reads this checkout's schemas
with that code. :func:`writable` stops a tool that is about to write into the checkout files
computed from another schema folder, or by a ``refitwire`` imported from outside the checkout
(:data:`IMPORTED_ELSEWHERE`): run it as ``python tools/<tool>.py`` to write.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _layout import package_dirs

if TYPE_CHECKING:
    from refitwire.wire import Registry

ROOT = Path(__file__).resolve().parents[1]


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


def _use_this_checkout() -> Path | None:
    """Import this checkout's packages from now on, unless ``refitwire`` already is imported: then
    where it was imported from when that is not this checkout (its packages stay as they are,
    never a mix of the two)."""
    loaded = sys.modules.get("refitwire")
    if loaded is not None:
        where = Path(str(loaded.__file__)).resolve().parent
        return None if where == package_dirs()["refitwire"] else where
    if not any(isinstance(finder, _Checkout) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Checkout(package_dirs()))
    return None


def registry() -> Registry:
    """The schemas the tools read: this checkout's ``schema/`` folder, or ``$REFITWIRE_SCHEMA_DIR``'s
    when it is set (a candidate's folder), whichever ``refitwire`` the tool runs with."""
    from refitwire import wire

    return wire.default_registry() if os.environ.get(wire.ENV_VAR) else wire.registry_at(ROOT / "schema")


def refresh(path: Path, rebuild: Callable[[str], str], what: str, check: bool) -> int:
    """A generated part of the file ``path`` made anew by ``rebuild`` (its whole text in, out):
    with ``check``, exit status 1 and a line naming the tool when it is stale; else written
    (into this checkout only, :func:`writable`). 0 when it was current or is written now."""
    if not check:
        writable()
    text = path.read_text(encoding="utf-8")
    fresh = rebuild(text)
    if fresh == text:
        return 0
    if check:
        print(f"{path.name}: {what} is stale (run python tools/{Path(sys.argv[0]).name})")
        return 1
    path.write_text(fresh, encoding="utf-8")
    print(f"{path.name}: {what} rewritten")
    return 0


def table_lines(lines: list[str], header: str) -> tuple[int, int]:
    """Where the Markdown table opened by the line ``header`` lies in ``lines``: its first line
    and the blank line after it (the generated tables end there)."""
    start = lines.index(header)
    return start, lines.index("", start)


def writable() -> None:
    """Stop unless what the tools computed is this checkout's: its schemas, read by its own code
    (they are about to write into it)."""
    from refitwire import wire

    if IMPORTED_ELSEWHERE is not None:
        raise SystemExit(f"refitwire is imported from {IMPORTED_ELSEWHERE}, not from this checkout ({ROOT}): "
                         "run the tool as python tools/<tool>.py to write into it")  # fmt: skip
    if registry().folder != ROOT / "schema":
        raise SystemExit(f"the schemas are read from {registry().folder} ({wire.ENV_VAR}), not from this "
                         f"checkout's {ROOT / 'schema'}: unset {wire.ENV_VAR} to write into it")  # fmt: skip


#: The folder of a ``refitwire`` imported before this module from outside this checkout (an
#: install of it), or None: the tools then read this checkout's schemas with that code, and write nothing.
IMPORTED_ELSEWHERE = _use_this_checkout()
