"""Loaded at the start of every Python process ``tests/touched.py`` runs, and of every process
those start (this folder is on their ``PYTHONPATH``): at exit, a process writes the files of
the modules it loaded from the folders in ``$REFITWIRE_TOUCHED_FOLDERS`` to a file of its own
under ``$REFITWIRE_TOUCHED_DIR``. Loading a module runs its body, so these are the modules of
which some line ran: what touched.py judges, without tracing every line."""

from __future__ import annotations

import atexit
import os
import sys


def _record() -> None:
    out, folders = os.environ.get("REFITWIRE_TOUCHED_DIR"), os.environ.get("REFITWIRE_TOUCHED_FOLDERS")
    if not out or not folders:
        return
    roots = tuple(os.path.join(os.path.realpath(folder), "") for folder in folders.split(os.pathsep))
    files = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    mine = sorted(
        {real for f in files if isinstance(f, str) and (real := os.path.realpath(f)).startswith(roots)}
    )
    if mine:
        path = os.path.join(out, f"{os.getpid()}-{os.urandom(4).hex()}.txt")
        with open(path, "w", encoding="utf-8") as stream:
            stream.write("\n".join(mine))


atexit.register(_record)
