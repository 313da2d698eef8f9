"""The compat matrix and conformance suite: testees, the protocol runner, reports.

Public: :func:`run_matrix` runs a :class:`Plan` over :class:`Participant` testees and
returns the JSON-lines report (header, one line per result, footer); :func:`read_report`
reads such a report back into typed records; the participant helpers build the usual
line-up. Everything in modules starting with ``_`` is private.

Names are imported on first use, so a testee process that only needs the reference
(``refitwire.compat.testees.reference``) does not pay for Hypothesis and the runner.
"""

from __future__ import annotations

import importlib
from typing import Any

# The subpackages `generations` and `upstream` share their names with participant helpers.
# Importing a subpackage sets the package attribute of that name, so they are imported
# first and the helpers bound after them: `compat.generations()` stays the function.
from refitwire.compat import generations as _generations_package  # noqa: F401
from refitwire.compat import upstream as _upstream_package  # noqa: F401
from refitwire.compat._participants import (
    Participant,
    candidates,
    generations,
    javascript,
    reference,
    third_party,
    upstream,
)

_WHERE = {
    "Plan": "_run", "Outcome": "_results", "Result": "_results",
    "Report": "_report", "read_report": "_report", "ReportError": "_report",
}  # fmt: skip

__all__ = [
    "Outcome", "Participant", "Plan", "Report", "ReportError", "Result", "candidates", "generations",
    "javascript", "read_report", "reference", "run_matrix", "third_party", "upstream",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    if name == "run_matrix":
        return importlib.import_module("refitwire.compat._session").execute
    if name in _WHERE:
        return getattr(importlib.import_module(f"refitwire.compat.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'refitwire.compat' has no attribute {name!r}")
