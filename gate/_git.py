"""Reading schema documents from the git history: ``REF:path`` and whole trees at a ref.

Every failure (no repository, an unknown ref, a path missing at the ref) is a GateError,
which the commands report as bad input (exit 1, one line), never as a verdict.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from refitwire.gate._errors import GateError

#: Candidates for "the main branch", tried in order for the default merge base.
MAIN_BRANCHES = ("origin/main", "main", "origin/master", "master")


def _git(args: list[str], cwd: Path, what: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise GateError(what, f"cannot run git: {exc.strerror}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GateError(what, message[-1] if message else f"git {args[0]} failed")
    return done.stdout


def repo_root(cwd: Path) -> Path:
    """The top of the git checkout that holds ``cwd``."""
    out = _git(["rev-parse", "--show-toplevel"], cwd, str(cwd))
    return Path(out.decode().strip())


def resolve(ref: str, cwd: Path) -> str:
    """The commit id of ``ref``; GateError if it names no commit."""
    if not ref or ref.startswith("-"):
        raise GateError(ref or "''", "not a git ref")
    try:
        out = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd, ref)
    except GateError as exc:
        if "not a git repository" in exc.detail:
            raise
        raise GateError(ref, "unknown revision or not a commit") from None
    commit = out.decode().strip()
    if not commit:
        raise GateError(ref, "unknown revision or not a commit")
    return commit


def default_base(cwd: Path) -> tuple[str, str]:
    """(label, commit) of the merge base of HEAD with the main branch."""
    for branch in MAIN_BRANCHES:
        try:
            resolve(branch, cwd)
        except GateError:
            continue
        out = _git(["merge-base", "HEAD", branch], cwd, f"merge-base HEAD {branch}")
        return f"merge-base(HEAD, {branch})", out.decode().strip()
    raise GateError(
        "--against", f"no main branch found (tried {', '.join(MAIN_BRANCHES)}); pass --against REF"
    )


def show(ref: str, path: str, cwd: Path) -> bytes:
    """The bytes of ``path`` (relative to the repository root) at ``ref``."""
    commit = resolve(ref, cwd)
    return _git(["show", f"{commit}:{path}"], cwd, f"{ref}:{path}")


def list_tree(ref: str, folder: str, cwd: Path) -> list[str]:
    """Every file path under ``folder`` at ``ref`` (relative to the repository root)."""
    commit = resolve(ref, cwd)
    out = _git(["ls-tree", "-r", "--name-only", commit, "--", folder], cwd, f"{ref}:{folder}")
    return [line for line in out.decode("utf-8").splitlines() if line]


def read_source(spec: str, cwd: Path) -> bytes:
    """A file's bytes, or for ``REF:path`` the bytes of ``path`` at ``REF``.

    A name that exists as a file wins over the ``REF:path`` reading of it.
    """
    candidate = cwd / spec
    if candidate.is_file():
        return candidate.read_bytes()
    if ":" in spec:
        ref, _, path = spec.partition(":")
        return show(ref, path, cwd)  # path is relative to the repository root, as in git
    try:
        return candidate.read_bytes()
    except OSError as exc:
        raise GateError(spec, exc.strerror or "cannot read") from None
