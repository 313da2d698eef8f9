"""Every exception of the kit's handling of the released ModelExpress: an environment that could not be
built, dependencies that could not be found, a path that is no source tree.

The two programs that run inside a released environment (``adapter_testee.py``,
``upstream_objects.py``) import nothing of the kit, so their own exceptions stay beside them.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DependenciesUnknown", "EnvBuildError", "SourceError", "SourceWarning"]


class EnvBuildError(RuntimeError):
    """Building the environment for ``version`` failed at ``step``."""

    def __init__(self, version: str, step: str, detail: str, log: Path | None = None) -> None:
        self.version = version
        self.step = step
        self.detail = detail
        self.log = log
        where = f" (full log: {log})" if log else ""
        super().__init__(f"modelexpress {version}: {step} failed{where}\n{detail}")

    def __reduce__(self) -> tuple[type[EnvBuildError], tuple[str, str, str, Path | None]]:
        # Rebuilt from the fields (the default passes the message alone, which __init__ cannot take).
        return type(self), (self.version, self.step, self.detail, self.log)


class DependenciesUnknown(LookupError):
    """A release's declared dependencies could not be found (the message says where it looked)."""


class SourceError(ValueError):
    """The path is not a ModelExpress source tree (the message says what was looked for)."""


class SourceWarning(UserWarning):
    """What :func:`locate` says when given no ``log``: the tree's environment may lack something."""
