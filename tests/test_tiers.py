"""The tier markers are honest: a test that starts what a marker names without carrying it fails.

Planted tests run in their own pytest process with this suite's conftest; every command
they start is a harmless ``python -c pass ...`` whose words name what a real one would.
"""

from __future__ import annotations

import configparser
import itertools
import os
import re
import sys
from pathlib import Path

import pytest
from _tiers import tiers_of_command

pytest_plugins = ["pytester"]

TESTS = Path(__file__).parent
ROOTS = ("/envs/",)


@pytest.mark.parametrize(
    ("words", "tiers"),
    [
        (["/envs/modelexpress-0.7.0/bin/python", "-m", "x"], {"upstream"}),
        (["node", str(TESTS / "compat/browser/probe.mjs"), "page.html"], {"browser"}),
        (["python", "-m", "refitwire.refit._publisher", "--fd", "3"], {"nixl"}),
        (["python", "-m", "refitwire", "refit", "--demo"], {"nixl"}),
        (["python", "-m", "refitwire", "matrix", "--examples", "3"], {"upstream", "slow"}),
        (["python", "-m", "refitwire", "matrix", "--no-upstream"], set()),
        (["python", "-m", "refitwire", "conformance", "--testee", "node t.js"], {"upstream"}),
        (["python", "-m", "refitwire", "conformance", "--testee", "node t.js", "--no-upstream"], set()),
        (["refitwire", "gate", "--against", "HEAD"], {"upstream", "slow"}),
        (["python", "-m", "refitwire", "gate", "--matrix", "never"], set()),
        (["python", "-m", "refitwire", "gate", "--matrix-command", "python fake.py"], set()),
        (["python", "-m", "refitwire", "validate", "blob.json"], set()),
        (["python", "tests/compat/faulty_testee.py", "none"], set()),
    ],
)
def test_a_command_line_needs_the_tiers_it_starts(words: list[str], tiers: set[str]) -> None:
    assert tiers_of_command(words, ROOTS) == tiers


PLANTED = """
import os, subprocess, sys
import pytest

def start(*words):
    subprocess.run([sys.executable, "-c", "pass", *words], check=True)

def test_opens_a_browser_unmarked():
    start("--chromium")

@pytest.mark.browser
def test_opens_a_browser_marked():
    start("--chromium")

def test_starts_a_refit_process_unmarked():
    start("-m", "refitwire.refit._receiver")

def test_runs_a_full_gate_unmarked():
    start("-m", "refitwire", "gate", "--against", "HEAD")

@pytest.mark.slow
@pytest.mark.upstream
def test_runs_a_full_gate_marked():
    start("-m", "refitwire", "gate", "--against", "HEAD")

def test_starts_an_upstream_python_unmarked():
    with pytest.raises(OSError):  # never there: the start is what counts
        subprocess.run([os.path.join(os.environ["REFITWIRE_ENVS"], "modelexpress-0.7.0", "bin", "python")])

def test_starts_nothing():
    start("-m", "refitwire", "gate", "--matrix", "never")
"""


def test_an_unmarked_test_that_starts_a_tier_fails_and_names_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    monkeypatch.setenv("REFITWIRE_ENVS", str(pytester.path / "envs"))
    pytester.makeconftest((TESTS / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_planted=PLANTED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-m", "")
    result.assert_outcomes(passed=3, failed=4)
    result.stdout.fnmatch_lines_random(
        [
            "*::test_opens_a_browser_unmarked needs the marker(s) browser (*--chromium)*",
            "*::test_starts_a_refit_process_unmarked needs the marker(s) nixl (*refitwire.refit._receiver)*",
            "*::test_runs_a_full_gate_unmarked needs the marker(s) slow (*), upstream (*)*",
            "*::test_starts_an_upstream_python_unmarked needs the marker(s) upstream (*modelexpress-0.7.0*)*",
        ]
    )


SHARED = """
import os, pytest

@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    with open(os.environ["SETUPS"], "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")

@pytest.mark.parametrize("n", range(6))
def test_uses_it(bank, n):
    pass

@pytest.mark.parametrize("name", ["bank"])
def test_asks_for_it(request, name):
    request.getfixturevalue(name)
"""


def test_a_module_sharing_a_fixture_sets_it_up_once_on_two_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The xdist groups take effect (pytest 9.2 with pytest-xdist 3.8 silently dropped them)."""
    pytest.importorskip("xdist")
    setups = pytester.path / "setups.txt"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    monkeypatch.setenv("SETUPS", str(setups))
    pytester.makeconftest((TESTS / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_shared=SHARED, test_other="def test_a(): pass\ndef test_b(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup")
    result.assert_outcomes(passed=9)
    assert len(setups.read_text().split()) == 1, setups.read_text()


SWEEP = """
import pytest

A = {"id": "v-a", "document": "rendezvous", "blob": "x", "tags": ["grammar"],
     "expect": {"1.0.0": {"valid": False, "rule": "JSON", "pointer": ""}}}
B = {**A, "id": "v-b", "blob": "y", "description": "other bytes, same class"}
C = {**A, "id": "v-c", "expect": {"1.0.0": {"valid": False, "rule": "TYPE", "pointer": "/x"}}}

@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
@pytest.mark.parametrize("vector", [A, B, C], ids=lambda v: v["id"])
def test_sweep(vector, version):
    pass

def test_plain():
    pass
"""


def test_the_quick_tier_keeps_one_vector_of_each_class_per_test_and_version(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    pytester.makeconftest((TESTS / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_sweep=SWEEP)
    quick = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "-v", "-m", "not exhaustive"
    )
    quick.assert_outcomes(passed=5, deselected=2)
    assert "v-b" not in quick.stdout.str() and "v-c-1.1.0" in quick.stdout.str()
    every = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-m", "")
    every.assert_outcomes(passed=7)


def test_tox_runs_every_test_once_the_quick_tier_and_then_its_complement() -> None:
    """``tox -e tests`` runs the quick tier (pyproject.toml's addopts) under tests/touched.py, then
    its second selection: that must be exactly the tests the quick tier leaves out."""
    tomllib = pytest.importorskip("tomllib")
    root = TESTS.parent
    addopts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    (quick,) = re.findall(r"-m '([^']+)'", addopts)
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(root / "tox.ini")
    commands = tox["testenv:tests"]["commands"]
    assert "tests/touched.py" in commands
    (rest,) = re.findall(r'-m "([^"]+)"', commands)
    names = sorted(set(re.findall(r"[a-z_]+", quick + " " + rest)) - {"and", "or", "not"})
    for values in itertools.product([False, True], repeat=len(names)):
        marks = dict(zip(names, values, strict=True))
        assert eval(quick, {}, marks) != eval(rest, {}, marks), marks  # a marker expression is Python's
