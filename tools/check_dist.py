"""Build the sdist and the wheel, check them, and install them the ways README.md says.

    python tools/check_dist.py [--keep DIR]

Run by ``tox -e dist`` (CI), in an environment with ``build`` and ``twine`` and no refitwire.
Each step prints its seconds; any failure exits 1 naming the step and what it found.

0. No page, workflow or template (:func:`install_documents`) installs refitwire by name from a
   package index (:func:`index_installs`): no index holds a release of it.
1. ``python -m build --sdist`` of this checkout, unpacked into a folder that stands for a
   user's checkout (it holds the package's sources and nothing of this one's state).
2. There, README.md's install block (``<!-- dist-check: install -->``: a fresh virtual
   environment, ``python -m build``, the wheel with the kit extra) and then its quickstart
   block (``<!-- dist-check: quickstart -->``), run by bash as written, in one shell, as a
   user pastes them. The wheel so built comes from an sdist, as pip builds one.
3. ``twine check --strict`` of what that built, and a wheel straight from this checkout.
4. Both wheels hold exactly the files git tracks under the folders ``pyproject.toml`` maps the
   packages from (``[tool.setuptools] package-dir``), byte for byte, and nothing else: a file
   the package-data patterns miss (a new schema folder, a template's new source type, a page
   asset) is named here, not found missing by a user.
5. README.md's pinned-commit block (``<!-- dist-check: pinned-commit -->``), with
   ``REFITWIRE_REPO`` this checkout as a ``file://`` git URL and ``REFITWIRE_REF`` its HEAD,
   then the quickstart again from that install.
6. The ModelExpress workflow's (docs/upstream-ci/modelexpress-wire.yml) install step, run as
   the workflow runs it on the folder its checkout step names, holding this checkout at HEAD.

Steps 5 and 6 install refitwire into the environment of step 2 once it is uninstalled there
(the dependencies are the same; installing them twice more would only add minutes) and are
each held to have installed what they name (the package's ``direct_url.json``). They install the last commit, not
uncommitted changes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the package supports 3.10; tox.ini installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
WORKFLOW = ROOT / "docs" / "upstream-ci" / "modelexpress-wire.yml"
BLOCK = re.compile(r"<!-- dist-check: (?P<name>[a-z-]+) -->\s*\n```(?:sh|bash)\n(?P<body>.*?)\n```", re.S)


class Failed(Exception):
    """A step found the distribution or the documented route broken."""


#: An install command (``pip``, ``"$KIT/bin/pip"``, ``python -m pip``, ``pipx``, ``uv pip``) and its arguments.
INSTALL = re.compile(r"\bpip[x3]?['\"]?\s+install\b(?P<args>[^\n`]*)")
#: refitwire named as a requirement an index resolves (a name, extras, a version), not a direct
#: reference (``refitwire[kit] @ git+URL@COMMIT``) or a path.
FROM_INDEX = re.compile(r"refitwire(\[[^\]]*\])?\s*((==|>=|<=|~=|!=|<|>).*)?")


def index_installs(text: str) -> list[tuple[int, str]]:
    """Each (line number, requirement) of ``text`` that installs refitwire from a package index,
    where no release of it is."""
    found = []
    for match in INSTALL.finditer(text):
        try:
            words = shlex.split(match["args"], comments=True)
        except ValueError:  # an unclosed quote in prose: its words as they stand
            words = match["args"].split()
        line = text.count("\n", 0, match.start()) + 1
        found += [(line, word) for word, after in zip(words, [*words[1:], ""])
                  if FROM_INDEX.fullmatch(word.strip("'\"")) and after != "@"]  # fmt: skip
    return found


def install_documents(root: Path = ROOT) -> list[Path]:
    """Every page, workflow and template a user copies install lines from."""
    listed = subprocess.run(["git", "ls-files", "-z", "*.md", "docs", "compat/testees/templates"],
                            cwd=root, capture_output=True, check=True)  # fmt: skip
    return [root / name for name in sorted(set(listed.stdout.decode().split("\0")) - {""})]


def readme_blocks(text: str) -> dict[str, str]:
    """The shell blocks README.md marks for this check, by name (``<!-- dist-check: NAME -->``
    right above a fenced ``sh`` block)."""
    found: dict[str, str] = {}
    for match in BLOCK.finditer(text):
        if match["name"] in found:
            raise Failed(f"README.md marks two blocks dist-check: {match['name']}")
        found[match["name"]] = match["body"]
    return found


def packaged_files(root: Path = ROOT) -> dict[str, Path]:
    """What the wheel must hold: each file git tracks under a package's folder, by its path in the
    wheel (``pyproject.toml``'s ``package-dir`` maps folder to package)."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    folders: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    listed = subprocess.run(["git", "ls-files", "-z", *folders.values()], cwd=root, capture_output=True)
    if listed.returncode != 0:
        raise Failed(f"git ls-files failed (a git checkout is needed): {listed.stderr.decode()[-500:]}")
    # A folder inside another (none now) is the deeper package's: the longest folder wins.
    by_folder = sorted(((folder, name) for name, folder in folders.items()), key=lambda p: -len(p[0]))
    wanted: dict[str, Path] = {}
    for path in listed.stdout.decode().split("\0"):
        if not path:
            continue
        folder, package = next((f, n) for f, n in by_folder if path.startswith(f + "/"))
        wanted["/".join([*package.split("."), path[len(folder) + 1 :]])] = root / path
    return wanted


def wheel_problems(wheel: Path, wanted: dict[str, Path]) -> list[str]:
    """How ``wheel`` differs from the files it must hold (missing, different bytes, unexpected)."""
    with zipfile.ZipFile(wheel) as archive:
        held = {name: archive.read(name) for name in archive.namelist()
                if not name.endswith("/") and ".dist-info/" not in name}  # fmt: skip
    problems = [f"missing from the wheel: {name}" for name in sorted(set(wanted) - set(held))]
    problems += [f"differs from the checkout's file: {name}" for name in sorted(set(wanted) & set(held))
                 if held[name] != wanted[name].read_bytes()]  # fmt: skip
    problems += [
        f"in the wheel, tracked by no package folder: {name}" for name in sorted(set(held) - set(wanted))
    ]
    return problems


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


@contextmanager
def step(name: str, times: dict[str, float]) -> Iterator[None]:
    print(f"== {name}", flush=True)
    started = time.monotonic()
    try:
        yield
    finally:
        times[name] = time.monotonic() - started
        print(f"   {times[name]:.1f} s", flush=True)


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise Failed(
            f"{' '.join(argv[:4])} ... exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done.stdout


def shell(script: str, cwd: Path, env: dict[str, str]) -> str:
    """``script`` run by bash as a user's shell runs a pasted block (stopping at the first failure)."""
    return run(["bash", "-e", "-o", "pipefail", "-c", script], cwd, env)


def _user_env(**extra: str) -> dict[str, str]:
    """This environment without its activated virtual environment: the blocks make their own."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def _head() -> str:
    return run(["git", "rev-parse", "HEAD"], ROOT).strip()


def check(work: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    missing = {"install", "quickstart", "pinned-commit"} - set(blocks)
    if missing:
        raise Failed(f"README.md marks no block dist-check: {', '.join(sorted(missing))}")
    wanted = packaged_files()
    with step("no page, workflow or template installs refitwire from an index", times):
        bad = [f"{path.relative_to(ROOT)}:{line}: {word}" for path in install_documents()
               for line, word in index_installs(path.read_text(encoding="utf-8", errors="replace"))]  # fmt: skip
        if bad:
            raise Failed(
                "these install refitwire from a package index, where it is not:\n  " + "\n  ".join(bad)
            )
    checkout = work / "checkout"
    with step("the sdist of this checkout, unpacked as a user's checkout", times):
        run([sys.executable, "-m", "build", "--sdist", "--outdir", str(work / "sdist"), str(ROOT)], ROOT)
        (sdist,) = (work / "sdist").glob("refitwire-*.tar.gz")
        with tarfile.open(sdist) as archive:
            archive.extractall(work, filter="data")
        (work / sdist.name.removesuffix(".tar.gz")).rename(checkout)
    with step("README.md's install and quickstart blocks, in that checkout", times):
        said = shell(blocks["install"] + "\n" + blocks["quickstart"], checkout, _user_env())
        print("   " + "\n   ".join(said.strip().splitlines()[-4:]))
    with step("the wheel straight from this checkout", times):
        run([sys.executable, "-m", "build", "--wheel", "--outdir", str(work / "tree"), str(ROOT)], ROOT)
    built = sorted((checkout / "dist").glob("refitwire-*"))
    (tree_wheel,) = (work / "tree").glob("refitwire-*.whl")
    with step("twine check --strict", times):
        run([sys.executable, "-m", "twine", "check", "--strict", *map(str, [*built, tree_wheel])], work)
    with step("every packaged file in both wheels, byte for byte", times):
        wheels = [*(p for p in built if p.suffix == ".whl"), tree_wheel]
        if len(wheels) != 2:
            raise Failed(f"README.md's install block built {[p.name for p in built]}, not one wheel")
        for wheel in wheels:
            problems = wheel_problems(wheel, wanted)
            if problems:
                raise Failed(f"{wheel.relative_to(work)}: " + "\n  ".join(problems))
            print(f"   {wheel.relative_to(work)}: {len(wanted)} files, sha256 {_digest(wheel)}")
    # The next two routes install refitwire into the environment the install block made, with
    # refitwire removed first (pip takes an installed 0.1.0 for any 0.1.0 it is asked for; the
    # dependencies are the same), and each is held to have installed what it names.
    head = _head()
    venv = checkout / ".kit"
    # localhost: pip's URL check wants a host in a git+file URL, and git accepts this one.
    env = _user_env(REFITWIRE_REPO=f"file://localhost{ROOT}", REFITWIRE_REF=head)
    with step("README.md's pinned-commit block (this checkout's HEAD), then the quickstart", times):
        run([str(venv / "bin" / "pip"), "uninstall", "-q", "-y", "refitwire"], checkout)
        said = shell(blocks["pinned-commit"] + "\n" + blocks["quickstart"], checkout, env)
        print("   " + "\n   ".join(said.strip().splitlines()[-4:]))
        origin = installed_from(venv)
        if origin.get("vcs_info", {}).get("commit_id") != head:
            raise Failed(f"the pinned-commit block installed {origin}, not commit {head}")
    with step("the workflow's install step on a checkout of HEAD", times):
        run([str(venv / "bin" / "pip"), "uninstall", "-q", "-y", "refitwire"], checkout)
        workflow_install(work / "workflow", venv, env)
    times["total"] = sum(times.values())
    return times


def installed_from(venv: Path) -> dict[str, Any]:
    """Where the refitwire of ``venv`` was installed from (its ``direct_url.json``, PEP 610)."""
    (record,) = venv.glob("lib/python*/site-packages/refitwire-*.dist-info/direct_url.json")
    found: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    return found


def workflow_install(where: Path, kit: Path, env: dict[str, str]) -> None:
    """The workflow's step that installs the kit, run on what its checkout step would check out,
    into ``kit`` (``$KIT``)."""
    import yaml  # tox -e dist installs it; only this step reads YAML

    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["wire"]
    steps = job["steps"]
    checkout = next((s for s in steps if s.get("with", {}).get("ref") == "${{ env.REFITWIRE_REF }}"), None)
    install = next((s for s in steps if s.get("name") == "Install the kit"), None)
    if checkout is None or install is None:
        raise Failed(
            f"{WORKFLOW.name}: no step checks out refitwire at env.REFITWIRE_REF, or none installs the kit"
        )
    folder = where / checkout["with"]["path"]
    where.mkdir()
    run(["git", "clone", "-q", str(ROOT), str(folder)], where)
    run(["git", "checkout", "-q", env["REFITWIRE_REF"]], folder)
    shell(install["run"], where, {**env, "KIT": str(kit)})
    origin = installed_from(kit).get("url", "")
    if origin != folder.as_uri():
        raise Failed(f"the workflow's install step installed refitwire from {origin!r}, not {folder}")
    print("   " + run([str(kit / "bin" / "refitwire"), "schema", "list"], where).splitlines()[-1])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR (empty or new) and leave it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="refitwire-dist-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        times = check(work.resolve())
    except Failed as exc:
        print(f"check_dist: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("check_dist: passed; " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items() if k == "total"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
