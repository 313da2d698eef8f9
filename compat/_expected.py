"""Expected failures as data: a stable case ID, the reason, a link, and the spec versions it applies to.

Strict: a listed case that passes fails the run. An entry applies to the participants of its
implementation that declare one of its ``spec_versions`` (the entry's, else the file's; all
versions when neither says), so a correct new generation or release is never excused by the
failures of an older one, nor reported as passing unexpectedly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

__all__ = ["ExpectedFailure", "load"]


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
