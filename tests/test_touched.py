"""``tests/touched.py`` names each module no test ran, and each excused module that ran."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import touched


def test_a_module_nobody_ran_fails_and_an_excused_one_that_ran_fails_too() -> None:
    excused = next(iter(touched.EXCUSED))
    modules = {"refitwire.a": "/p/a.py", "refitwire.b": "/p/b.py", excused: "/p/x.py"}
    assert touched.verdict(modules, {"/p/a.py"}) == ["refitwire.b: no test ran it"]
    (line,) = touched.verdict(modules, {"/p/a.py", "/p/b.py", "/p/x.py"})
    assert line.startswith(f"{excused}: excused (") and line.endswith("but ran: drop the excuse")
    assert touched.verdict(modules, {"/p/a.py", "/p/b.py"}) == []


def test_every_module_is_found_where_python_imports_it_from() -> None:
    modules = touched.every_module()
    assert "refitwire.compat._session" in modules and "refitwire.cli.matrix" in modules
    assert all(file.endswith(".py") for file in modules.values() if file)
    assert set(touched.EXCUSED) <= set(modules), "an excuse names a module that is gone"


def test_a_module_only_a_child_process_loads_is_touched_and_one_nobody_loads_is_named(tmp_path: Path) -> None:
    """The hook records what each process loads, child processes included: a test that loads
    nothing of the package itself but starts a python that imports one module sees that module
    touched, and a module no process loaded named."""
    child_only, never = "refitwire.cli.matrix", "refitwire.bench._codec"
    test = tmp_path / "test_child.py"
    test.write_text(
        "import subprocess, sys\n\n\n"
        "def test_child() -> None:\n"
        f"    subprocess.run([sys.executable, '-c', 'import {child_only}'], check=True)\n"
    )
    done = subprocess.run(
        [sys.executable, str(Path(touched.__file__)), "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    named = {line.split(":")[1].strip() for line in done.stdout.splitlines() if line.startswith("touched: ")}
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert never in named and child_only not in named, sorted(named)
