"""Expected failures as data: a stable case ID, the reason, a link. Strict: an unexpected pass fails the run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class ExpectedFailure:
    implementation: str  # the name a testee gives in its handshake
    role: str  # "reader" or "writer"
    case: str
    reason: str
    link: str


def load() -> dict[tuple[str, str, str], ExpectedFailure]:
    folder = resources.files("refitwire.compat").joinpath("expected-failures")
    table = {}
    for entry in folder.iterdir():
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        for item in data["expected_failures"]:
            failure = ExpectedFailure(
                data["implementation"], item["role"], item["case"], item["reason"], item["link"]
            )
            table[(failure.implementation, failure.role, failure.case)] = failure
    return table
