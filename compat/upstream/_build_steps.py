"""Running the steps of an environment build: each one logged, bounded in time, and a failure
raised as :class:`EnvBuildError` with the tail of its output; the per-version build lock.

Stdlib only, like :mod:`.envs`, which holds the recipe (what each step runs).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from refitwire.compat.upstream._errors import EnvBuildError

__all__ = ["EnvBuildError", "build_lock", "disk_usage", "run_step"]

_STEP_TIMEOUT_S = 1200
_TAIL_LINES = 40


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(kept)


def _child_env() -> dict[str, str]:
    # Inherit everything (pip's configuration, proxies, certificates, wheel
    # folders), but not what would make the new interpreter see other packages.
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PIP_USER"):
        env.pop(name, None)
    return env


def run_step(argv: Sequence[str | os.PathLike[str]], *, version: str, step: str, log_file: Path) -> str:
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [os.fspath(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_child_env(),
            timeout=_STEP_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.output or b"").decode("utf-8", "replace")
        _append_log(log_file, step, argv, out, f"timed out after {_STEP_TIMEOUT_S}s")
        raise EnvBuildError(version, step, f"timed out after {_STEP_TIMEOUT_S}s\n{_tail(out)}") from None
    except OSError as exc:
        _append_log(log_file, step, argv, "", repr(exc))
        raise EnvBuildError(version, step, f"could not run {argv[0]}: {exc}") from exc
    out = proc.stdout.decode("utf-8", "replace")
    took = time.monotonic() - started
    _append_log(log_file, step, argv, out, f"exit {proc.returncode} after {took:.1f}s")
    if proc.returncode != 0:
        raise EnvBuildError(version, step, f"exit status {proc.returncode}\n{_tail(out)}")
    return out


def _append_log(
    log_file: Path, step: str, argv: Sequence[str | os.PathLike[str]], out: str, end: str
) -> None:
    with log_file.open("a", encoding="utf-8") as fh:
        fh.write(f"=== {step}: {' '.join(os.fspath(a) for a in argv)}\n{out}\n=== {end}\n")


@contextlib.contextmanager
def build_lock(cache: Path, version: str) -> Iterator[None]:
    """Serialize builds of one version across processes (POSIX only; no-op elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        yield
        return
    with (cache / f".modelexpress-{version}.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def disk_usage(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total
