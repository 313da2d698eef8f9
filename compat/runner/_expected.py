"""Expected failures as data: a stable case ID, the reason, a link, and the spec versions it applies to.

Strict: a listed case that passes fails the run. An entry applies to the participants of its
implementation that declare one of its ``spec_versions`` (the entry's, else the file's; all
versions when neither says), so a correct new generation or release is never excused by the
failures of an older one, nor reported as passing unexpectedly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from refitwire.wire import Registry

#: One participant's explicit list: (role, case) -> entry.
Listed = dict[tuple[str, str], "ExpectedFailure"]

__all__ = ["ExpectedFailure", "known_cases", "load", "stale"]


@dataclass(frozen=True)
class ExpectedFailure:
    implementation: str  # the name a testee gives in its handshake
    role: str  # "reader" or "writer"
    case: str
    reason: str
    link: str
    spec_versions: frozenset[str] | None = None  # None: every version

    def applies_to(self, spec_version: str) -> bool:
        return self.spec_versions is None or spec_version in self.spec_versions


def load() -> dict[tuple[str, str, str], ExpectedFailure]:
    folder = resources.files("refitwire.compat").joinpath("expected-failures")
    table = {}
    for entry in folder.iterdir():
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        for item in data["expected_failures"]:
            versions = item.get("spec_versions", data.get("spec_versions"))
            failure = ExpectedFailure(
                data["implementation"], item["role"], item["case"], item["reason"], item["link"],
                None if versions is None else frozenset(versions),
            )  # fmt: skip
            table[(failure.implementation, failure.role, failure.case)] = failure
    return table


def load_file(path: Path) -> Listed:
    """An explicit list (``--expected-failures FILE``): the same format as the packaged lists, given
    to the participants named on the command line whatever they call themselves. ValueError (one
    line, with the JSON pointer) when the file is not such a list."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    items = data.get("expected_failures") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError(f"{path}: no array at /expected_failures")
    listed: Listed = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("role", "case")):
            raise ValueError(f"{path}: /expected_failures/{i} needs string 'role' and 'case'")
        if item["role"] not in ("reader", "writer"):
            raise ValueError(f"{path}: /expected_failures/{i}/role must be 'reader' or 'writer'")
        failure = ExpectedFailure(
            str(data.get("implementation", path.name)), item["role"], item["case"],
            str(item.get("reason", "listed in " + path.name)), str(item.get("link", str(path))),
        )  # fmt: skip
        listed[(failure.role, failure.case)] = failure
    return listed


def known_cases(registry: Registry) -> dict[str, str]:
    """Every case ID a run with ``registry`` can produce that a list may name, with the role of
    the participant it judges (``reader`` or ``writer``): each case kind's IDs, derived results
    included (``_kinds.known_cases``). A generated case is not here: its ID is the seed's
    (``gen-N``), and no list keeps it."""
    from refitwire.compat.runner._kinds import known_cases as by_kind  # the table sits above this module

    return by_kind(registry)


def stale(listed: Iterable[tuple[str, str, str]], known: dict[str, str]) -> list[tuple[str, str, str]]:
    """The ``(implementation, role, case)`` keys of ``listed`` that no case of ``known`` answers in that role."""
    return [(name, role, case) for name, role, case in listed if known.get(case) != role]
