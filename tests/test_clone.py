"""The tools (tools/_clone.py) run with a ``refitwire`` imported from an install of this checkout
outside it, as a bare ``pytest`` of a fresh clone has it (the package installed, not editable, in a
virtual environment elsewhere): they import, read this checkout's schemas, and refuse to write."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"

# Imports refitwire first (from the install), as the test processes do, then every tool that
# imports _clone, as the tests that import a tool in-process do.
SCRIPT = """
import json, sys
import refitwire
from refitwire import wire
sys.path.insert(0, sys.argv[1])
import _clone
for name in sys.argv[2:]:
    __import__(name)
try:
    _clone.writable()
    refused = None
except SystemExit as exc:
    refused = str(exc)
print(json.dumps({"refitwire": refitwire.__file__, "elsewhere": str(_clone.IMPORTED_ELSEWHERE),
                  "schemas": str(_clone.registry().folder), "installed_schemas": str(wire.package_root()),
                  "refused": refused}))
"""


def _install(site: Path) -> Path:
    """The package laid out as a wheel installs it (``[tool.setuptools] package-dir``), under ``site``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (table,) = re.findall(r"^package-dir\s*=\s*\{(.*)\}\s*$", text, flags=re.M)
    folders = dict(re.findall(r'"([\w.]+)"\s*=\s*"([^"]+)"', table))
    ignore = shutil.ignore_patterns("__pycache__", "node_modules")
    for name in sorted(folders, key=lambda n: n.count(".")):  # a package before the ones inside it
        shutil.copytree(ROOT / folders[name], site.joinpath(*name.split(".")), ignore=ignore)
    return site / "refitwire"


def _tools() -> list[str]:
    return sorted(p.stem for p in TOOLS.glob("*.py")
                  if p.stem != "_clone" and re.search(r"^import _clone\b", p.read_text(encoding="utf-8"), re.M))  # fmt: skip


def test_the_tools_run_with_refitwire_installed_outside_the_checkout(tmp_path: Path) -> None:
    installed = _install(tmp_path / "site")
    tools = _tools()
    assert {"build_vectors", "build_coverage", "build_rule_catalogue"} <= set(tools)
    env = {k: v for k, v in os.environ.items() if k != "REFITWIRE_SCHEMA_DIR"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(TOOLS), *tools], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert Path(found["refitwire"]).resolve() == installed / "__init__.py"
    assert Path(found["elsewhere"]) == installed
    # the checkout's schemas, named explicitly, never the install's copy of them
    assert Path(found["schemas"]) == ROOT / "schema"
    assert Path(found["installed_schemas"]) == installed / "schema"
    # what the install's code computes is never written into the checkout
    assert found["refused"] and str(installed) in found["refused"], found["refused"]
