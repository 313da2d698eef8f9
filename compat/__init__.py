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
from typing import TYPE_CHECKING, Any

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

#: What the other packages (the CLI, the gate) use, by public name: (private module, its name there).
_WHERE = {
    "Plan": ("_run", "Plan"), "start_all": ("_run", "start_all"), "stop_all": ("_run", "stop_all"),
    "run_matrix": ("_session", "execute"),
    "Outcome": ("_results", "Outcome"), "Result": ("_results", "Result"), "REQUIRED": ("_results", "REQUIRED"),
    "Report": ("_report", "Report"), "read_report": ("_report", "read_report"),
    "ReportError": ("_report", "ReportError"), "report_ok": ("_report", "ok"),
    "render_report": ("_render", "render"), "render_summary": ("_render", "summary"),
    "html_page": ("_html", "page"), "html_gate_page": ("_html", "gate_page"), "html_badges": ("_html", "badges"),
    "JUnitCase": ("_junit", "Case"), "JUnitStatus": ("_junit", "Status"), "JUnitSuite": ("_junit", "Suite"),
    "render_junit": ("_junit", "render"),
    "BaseMismatch": ("_delta", "BaseMismatch"), "compare_with_base": ("_delta", "compare"),
    "render_base_comparison": ("_delta", "render"),
    "load_expected_failures": ("_expected", "load_file"),
    "describe_case": ("_rerun", "describe"), "knows_case": ("_rerun", "known"),
    "Candidate": ("_candidate", "Candidate"), "upstream_source": ("_participants", "upstream_source"),
    "size_cases": ("_sizes", "size_cases"), "count_tensors": ("_sizes", "count_tensors"),
}  # fmt: skip

__all__ = [
    "Participant", "candidates", "generations", "javascript", "reference", "third_party", "upstream",
    "Plan", "start_all", "stop_all", "run_matrix", "Outcome", "Result", "REQUIRED", "Report",
    "read_report", "ReportError", "report_ok", "render_report", "render_summary", "html_page",
    "html_gate_page", "html_badges", "JUnitCase", "JUnitStatus", "JUnitSuite", "render_junit",
    "BaseMismatch", "compare_with_base", "render_base_comparison", "load_expected_failures",
    "describe_case", "knows_case", "Candidate", "upstream_source", "size_cases", "count_tensors",
]  # fmt: skip

if TYPE_CHECKING:  # what static checkers see of the names loaded on first use
    from refitwire.compat._candidate import Candidate
    from refitwire.compat._delta import BaseMismatch
    from refitwire.compat._delta import compare as compare_with_base
    from refitwire.compat._delta import render as render_base_comparison
    from refitwire.compat._expected import load_file as load_expected_failures
    from refitwire.compat._html import badges as html_badges
    from refitwire.compat._html import gate_page as html_gate_page
    from refitwire.compat._html import page as html_page
    from refitwire.compat._junit import Case as JUnitCase
    from refitwire.compat._junit import Status as JUnitStatus
    from refitwire.compat._junit import Suite as JUnitSuite
    from refitwire.compat._junit import render as render_junit
    from refitwire.compat._participants import upstream_source
    from refitwire.compat._render import render as render_report
    from refitwire.compat._render import summary as render_summary
    from refitwire.compat._report import Report, ReportError, read_report
    from refitwire.compat._report import ok as report_ok
    from refitwire.compat._rerun import describe as describe_case
    from refitwire.compat._rerun import known as knows_case
    from refitwire.compat._results import REQUIRED, Outcome, Result
    from refitwire.compat._run import Plan, start_all, stop_all
    from refitwire.compat._session import execute as run_matrix
    from refitwire.compat._sizes import count_tensors, size_cases


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module, attr = _WHERE[name]
        return getattr(importlib.import_module(f"refitwire.compat.{module}"), attr)
    raise AttributeError(f"module 'refitwire.compat' has no attribute {name!r}")
