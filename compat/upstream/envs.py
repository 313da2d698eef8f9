"""One isolated virtual environment per released ``modelexpress`` version.

The compat matrix runs the *released* upstream reader and writer as testees, so
each release needs an interpreter where ``modelexpress.refit.reshard.rendezvous``
and ``...verify`` import. The released wheels declare heavy dependencies (model
streamers, cloud SDKs) that those two modules never touch, so an environment is
built with just enough:

1. ``python -m venv <tmp>``;
2. ``pip install torch==2.13.0`` first and alone, so that nothing afterwards can
   pull a multi-GB CUDA build of torch;
3. the packages the two modules really import (see :data:`IMPORT_REQUIREMENTS`);
4. ``pip install --no-deps modelexpress==X``;
5. a smoke import of :data:`SMOKE_MODULES`;
6. a marker file (:data:`MARKER_NAME`) recording the version, the recipe and the
   ``pip freeze``, then an atomic rename of the temporary directory into place.

A failed build removes its temporary directory, so nothing half-installed is ever
found, and raises :class:`EnvBuildError` carrying the tail of the pip output (the
full log is kept beside the cache as ``modelexpress-X.failed.log``). A complete
environment (marker present, same recipe) is reused as is.

Environments live under :func:`cache_dir`: ``$REFITWIRE_ENVS`` if set, else
``.compat-envs/`` in refitwire's own source checkout, else a per-user cache (see
:mod:`._locations`).

A ModelExpress source tree (:mod:`.source`) gets an environment of the same recipe, plus
the dependencies the tree adds to its release's, without the ``modelexpress`` package
(``modelexpress-src-<hash>``, one per set of requirements; see :func:`ensure_source_env`).

pip runs from inside the new environment with the caller's environment
variables and configuration, so locally configured indexes and wheel folders are
honoured, and with ``--no-compile`` to keep the install short. Because the
environment is renamed after it is built, its console scripts (``bin/pip`` ...)
carry stale shebangs: always run ``<env>/bin/python -m ...``.

Stdlib only. Command line::

    python -m refitwire.compat.upstream.envs [--versions 0.6.0 0.7.0] [--cache DIR] [--rebuild]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from refitwire.compat.upstream._build_steps import build_lock, disk_usage, run_step
from refitwire.compat.upstream._dependencies import project
from refitwire.compat.upstream._errors import EnvBuildError
from refitwire.compat.upstream._locations import ENV_VAR, cache_dir, cache_dirs

__all__ = [
    "ENV_VAR",
    "IMPORT_REQUIREMENTS",
    "MARKER_NAME",
    "SMOKE_MODULES",
    "TORCH_REQUIREMENT",
    "UPSTREAM_VERSIONS",
    "EnvBuildError",
    "EnvInfo",
    "cache_dir",
    "cache_dirs",
    "ensure_env",
    "ensure_source_env",
    "env_dir",
    "find_env",
    "main",
]

#: Released versions that have ``refit/reshard`` (0.5.1 and older have none).
UPSTREAM_VERSIONS: tuple[str, ...] = ("0.6.0", "0.7.0")

#: Installed first and alone: the CPU build available locally.
TORCH_REQUIREMENT = "torch==2.13.0"

#: What ``rendezvous`` and ``verify`` need to import (checked by removing each in
#: turn). Importing ``modelexpress.refit.reshard.rendezvous`` runs
#: ``modelexpress/__init__`` (grpc client, generated protobuf, Hugging Face hub
#: helpers). pydantic, although declared, is not needed for these modules. numpy
#: is not imported by them either, but torch warns on import without it. Lower
#: bounds are the wheels' own.
IMPORT_REQUIREMENTS: tuple[str, ...] = (
    "grpcio>=1.66.2",
    "protobuf>=5.27.2,<7",
    "huggingface_hub>=0.20",
    "numpy>=1.24",
)

#: Imported in the new environment before it is accepted.
SMOKE_MODULES: tuple[str, ...] = (
    "modelexpress.refit.reshard.rendezvous",
    "modelexpress.refit.reshard.verify",
)

#: Written last, inside the environment; its presence means "complete".
MARKER_NAME = "refitwire-env.json"

_PIP_INSTALL = (
    "-m",
    "pip",
    "install",
    "--no-compile",
    "--no-input",
    "--disable-pip-version-check",
)
_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)*([A-Za-z0-9.+-]*)$")
_SOURCE_PREFIX = "src-"


@dataclass(frozen=True)
class EnvInfo:
    """What :func:`ensure_env` found or did."""

    version: str
    python: Path
    built: bool
    seconds: float


def _recipe(spec: _Spec | None = None) -> dict[str, object]:
    requirements = spec.requirements if spec else IMPORT_REQUIREMENTS
    return {"torch": TORCH_REQUIREMENT, "requirements": list(requirements), "smoke": list(SMOKE_MODULES)}


def _recipe_id(version: str) -> str:
    """What a complete environment's marker must say. A source environment's key is its recipe's hash."""
    if version.startswith(_SOURCE_PREFIX):
        return version
    text = json.dumps(_recipe(), sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def source_key(requirements: Sequence[str]) -> str:
    """The environment key of a source tree with these requirements: ``src-<hash>``."""
    text = json.dumps({"torch": TORCH_REQUIREMENT, "requirements": list(requirements)}).encode()
    return f"{_SOURCE_PREFIX}{hashlib.sha256(text).hexdigest()[:12]}"


def _check_version(version: str) -> str:
    source = isinstance(version, str) and re.fullmatch(f"{_SOURCE_PREFIX}[0-9a-f]{{12}}", version)
    if not isinstance(version, str) or not (_VERSION_RE.match(version) or source):
        raise ValueError(f"{version!r} is not a release version")
    return version


def env_dir(version: str, cache: Path | None = None) -> Path:
    """The directory the environment for ``version`` has (or would have)."""
    return (cache or cache_dir()) / f"modelexpress-{_check_version(version)}"


def _python_in(env: Path) -> Path:
    if os.name == "nt":  # pragma: no cover - the envs are built on Linux
        return env / "Scripts" / "python.exe"
    return env / "bin" / "python"


def _read_marker(env: Path) -> dict[str, object] | None:
    try:
        marker = json.loads((env / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def find_env(version: str, cache: Path | None = None) -> Path | None:
    """The python of a complete environment for ``version``, or ``None``. Never builds."""
    for folder in [cache] if cache else cache_dirs():
        env = env_dir(version, folder)
        marker = _read_marker(env)
        if marker is None or marker.get("version") != version:
            continue
        if marker.get("recipe_id") != _recipe_id(version):
            continue
        python = _python_in(env)
        if python.exists():
            return python
    return None


@dataclass(frozen=True)
class _Spec:
    """What one environment holds: the released package ``key``, or a source tree's requirements."""

    key: str  # a release version, or "src-<hash>" for a source tree's environment
    requirements: tuple[str, ...] = IMPORT_REQUIREMENTS
    package: bool = True  # install modelexpress==key
    smoke: str = ""  # python run in the new environment before it is accepted


def _released_spec(version: str) -> _Spec:
    smoke = (
        "import importlib, importlib.metadata as m, sys\n"
        f"for name in {list(SMOKE_MODULES)!r}:\n"
        "    importlib.import_module(name)\n"
        f"got = m.version('modelexpress')\n"
        f"assert got == {version!r}, got\n"
    )
    return _Spec(version, smoke=smoke)


def _build(spec: _Spec, final: Path, base_python: str, log: Callable[[str], None]) -> None:
    version = spec.key
    cache = final.parent
    failed_log = cache / f"{final.name}.failed.log"
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=cache))
    log_file = tmp.with_name(tmp.name + ".log")
    try:

        def step(name: str, *argv: str | os.PathLike[str]) -> str:
            return run_step(argv, version=version, step=name, log_file=log_file)

        log(f"modelexpress {version}: creating venv in {tmp}")
        step("venv", base_python, "-m", "venv", tmp)
        python = _python_in(tmp)
        log(f"modelexpress {version}: installing {TORCH_REQUIREMENT}")
        step("install torch", python, *_PIP_INSTALL, TORCH_REQUIREMENT)
        log(f"modelexpress {version}: installing {' '.join(spec.requirements)}")
        step("install import requirements", python, *_PIP_INSTALL, *spec.requirements)
        if spec.package:
            log(f"modelexpress {version}: installing modelexpress=={version} (--no-deps)")
            step("install modelexpress", python, *_PIP_INSTALL, "--no-deps", f"modelexpress=={version}")
        log(f"modelexpress {version}: smoke-importing {', '.join(SMOKE_MODULES)}")
        step("smoke import", python, "-c", spec.smoke)
        python_version = step("python version", python, "-c", "import sys; print(sys.version.split()[0])")
        freeze = step("pip freeze", python, "-m", "pip", "freeze", "--all", "--disable-pip-version-check")
        marker = {
            "version": version,
            "recipe_id": _recipe_id(version),
            "recipe": _recipe(spec),
            "python": python_version.strip(),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "freeze": [line for line in freeze.splitlines() if line and "==" in line],
        }
        (tmp / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        tmp.chmod(0o755)  # mkdtemp made it private
        # Swap into place: an existing (outdated or broken) env is moved aside first,
        # then deleted, so ``final`` is at every moment either absent, old or complete.
        old = None
        if final.exists() or final.is_symlink():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        with contextlib.suppress(OSError):
            failed_log.unlink()
        log_file.unlink(missing_ok=True)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if log_file.exists():
            os.replace(log_file, failed_log)
        if isinstance(exc, EnvBuildError):
            raise EnvBuildError(version, exc.step, exc.detail, failed_log) from None
        raise


def ensure_source_env(
    requirements: Sequence[str],
    tree: Path,
    cache: Path | None = None,
    *,
    log: Callable[[str], None] | None = None,
) -> Path:
    """The python of an environment for a source tree (no ``modelexpress`` installed), building it
    if needed; ``tree`` (the folder holding the ``modelexpress`` package) is smoke-imported.
    ``log`` is told which requirements are beyond the recipe (what the tree adds to its release's
    dependencies, :mod:`.source`), built or reused: the one thing the recipe did not choose."""
    key = source_key(requirements)
    recipe = {project(line) for line in IMPORT_REQUIREMENTS}
    added = [line for line in requirements if project(line) not in recipe]
    if added and log is not None:
        log(
            f"source tree: its environment {key} also installs what it adds to its release: {' '.join(added)}"
        )
    smoke = (
        "import importlib, os, sys\n"
        f"sys.path.insert(0, {str(tree)!r})\n"
        f"for name in {list(SMOKE_MODULES)!r}:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert os.path.realpath(module.__file__).startswith({os.path.realpath(tree)!r}), module\n"
    )
    spec = _Spec(key, tuple(requirements), package=False, smoke=smoke)
    return _ensure(spec, cache, base_python=None, rebuild=False, log=log).python


def ensure_env(
    version: str,
    cache: Path | None = None,
    *,
    base_python: str | None = None,
    rebuild: bool = False,
    log: Callable[[str], None] | None = None,
) -> Path:
    """The python of a complete environment for ``version``, building it if needed."""
    spec = _released_spec(_check_version(version))
    return _ensure(spec, cache, base_python=base_python, rebuild=rebuild, log=log).python


def _ensure(
    spec: _Spec,
    cache: Path | None,
    *,
    base_python: str | None,
    rebuild: bool,
    log: Callable[[str], None] | None,
) -> EnvInfo:
    version = spec.key
    if not rebuild:
        found = find_env(version, cache)  # in any of the cache folders unless one is given
        if found is not None:
            return EnvInfo(version, found, built=False, seconds=0.0)
    cache = cache or cache_dir()
    final = env_dir(version, cache)
    say = log or (lambda _msg: None)
    started = time.monotonic()
    cache.mkdir(parents=True, exist_ok=True)
    with build_lock(cache, version):
        if not rebuild:  # another process may have finished it while we waited
            found = find_env(version, cache)
            if found is not None:
                return EnvInfo(version, found, built=False, seconds=time.monotonic() - started)
        _build(spec, final, base_python or sys.executable, say)
    python = find_env(version, cache)
    if python is None:  # pragma: no cover - _build writes the marker before the rename
        raise EnvBuildError(version, "verify", f"{final} is not complete after the build")
    return EnvInfo(version, python, built=True, seconds=time.monotonic() - started)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m refitwire.compat.upstream.envs",
        description="Build (or reuse) one virtual environment per released modelexpress.",
    )
    parser.add_argument(
        "--versions",
        nargs="+",
        default=list(UPSTREAM_VERSIONS),
        metavar="VERSION",
        help="default: %(default)s",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help=f"cache directory (default: the first of ${ENV_VAR}, else refitwire's checkout's .compat-envs "
        "or the per-user cache)",
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild even a complete env")
    parser.add_argument("--python", default=None, help="base interpreter for the venvs (default: this one)")
    args = parser.parse_args(argv)

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    cache = args.cache.resolve() if args.cache else None

    def ensure(version: str) -> EnvInfo | Exception:
        try:
            spec = _released_spec(_check_version(version))
            return _ensure(spec, cache, base_python=args.python, rebuild=args.rebuild, log=progress)
        except (EnvBuildError, ValueError) as exc:
            return exc

    # Built side by side, each a venv in its own folder under its own build lock: one after the
    # other took 21 + 24 s in CI, together 23 s. (Where pip's cache does not hold the torch wheel
    # yet, as it does after tox's own install of it, each build downloads it.)
    with ThreadPoolExecutor(max_workers=len(args.versions)) as pool:
        built = list(pool.map(ensure, args.versions))
    failures = 0
    for version, info in zip(args.versions, built):
        if isinstance(info, Exception):
            failures += 1
            print(f"{version}\tfailed\t{info}", flush=True)
            continue
        env = info.python.parent.parent
        if info.built:
            size = disk_usage(env) / 2**20
            print(f"{version}\tbuilt\t{env}\t{info.seconds:.1f}s\t{size:.0f} MiB", flush=True)
        else:
            print(f"{version}\treused\t{env}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
