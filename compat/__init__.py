"""The compat matrix and conformance suite: testees, the protocol runner, reports.

Public: :func:`run_matrix` runs a :class:`Plan` over :class:`Participant` testees and
returns the JSON-lines report (header, one line per result, footer); the participant
helpers build the usual line-up. Everything in modules starting with ``_`` is private.
"""

from __future__ import annotations

from refitwire.compat._participants import (
    Participant,
    candidates,
    generations,
    javascript,
    reference,
    third_party,
    upstream,
)
from refitwire.compat._run import Plan
from refitwire.compat._session import execute as run_matrix

__all__ = [
    "Participant",
    "Plan",
    "candidates",
    "generations",
    "javascript",
    "reference",
    "run_matrix",
    "third_party",
    "upstream",
]
