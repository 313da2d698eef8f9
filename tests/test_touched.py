"""``tests/touched.py`` names each module no test ran, and each excused module that ran."""

from __future__ import annotations

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
