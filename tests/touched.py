"""Which modules of refitwire a pytest selection runs: fail unless it runs every one of them.

``python tests/touched.py [PYTEST ARGS]`` runs pytest (by default the quick tier, ``-n 2``)
with ``tests/_touched_hook`` on ``PYTHONPATH``: its ``sitecustomize`` makes the test processes,
and every Python process they start (the CLI, the testees, the refit's ranks, the frozen
generations run as scripts), write at exit which modules of the package they loaded. Loading
a module runs its body, so a module is touched when some process ran a line of it. The modules
are those of ``[tool.setuptools] packages``, found where Python imports them from (a checkout
or an installed wheel), so a new module is checked without being listed here. Exit 1 naming
each module no process ran (or an excused one that did, so the excuses never outlive their
reason); otherwise pytest's own status.

Why not coverage.py, which this used before: its line tracing made the quick tier 80% slower
(161 s against 89 s on two cores) to answer a question about modules, not lines. A process
killed before it exits records nothing, as it recorded nothing under coverage.py either.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = Path(__file__).resolve().with_name("_touched_hook")  # its sitecustomize records each process
QUICK = ["-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup"]
#: Modules the quick tier cannot run, by what they need. Each is run by the tier named.
EXCUSED = {
    "refitwire.refit._upstream_writer": "run by a released modelexpress's own python (upstream tier)",
    "refitwire.bench._upstream_probe": "run by a released modelexpress's own python (upstream tier)",
    "refitwire.bench._nixl_peer": "a NIXL agent's process (nixl tier)",
}


def _packages() -> list[str]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: the installed package's own folders instead
        return ["refitwire"]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["setuptools"]["packages"])


def every_module() -> dict[str, str]:
    """Each module of the package and its file (resolved: the processes record real paths)."""
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


def verdict(modules: dict[str, str], ran: set[str]) -> list[str]:
    """One line per module that breaks the rule: not run and not excused, or excused and run."""
    lines = [f"{name}: no test ran it" for name, file in sorted(modules.items())
             if file not in ran and name not in EXCUSED]  # fmt: skip
    lines += [f"{name}: excused ({EXCUSED[name]}) but ran: drop the excuse"
              for name, file in sorted(modules.items()) if file in ran and name in EXCUSED]  # fmt: skip
    return lines


def main(argv: list[str]) -> int:
    modules = every_module()
    folders = sorted({str(Path(file).parent) for file in modules.values() if file})
    with tempfile.TemporaryDirectory(prefix="refitwire-touched-") as tmp:
        path = [str(HOOK), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "REFITWIRE_TOUCHED_DIR": tmp,
               "REFITWIRE_TOUCHED_FOLDERS": os.pathsep.join(folders)}  # fmt: skip
        status = subprocess.run(
            [sys.executable, "-m", "pytest", *(argv or QUICK)], cwd=ROOT, env=env
        ).returncode
        ran = {
            line for record in Path(tmp).iterdir() for line in record.read_text(encoding="utf-8").splitlines()
        }
    if not ran:
        print(f"touched: no process recorded anything (pytest exited {status})")
        return status or 1
    wrong = verdict(modules, ran)
    for line in wrong:
        print(f"touched: {line}")
    if wrong:
        return 1
    print(f"touched: {len(modules) - len(EXCUSED)} modules of refitwire ran, {len(EXCUSED)} excused")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
