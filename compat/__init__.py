"""The compat matrix and conformance suite: testees, the protocol runner, reports.

Public: :func:`run_matrix` runs a :class:`Plan` over :class:`Participant` testees and
returns the JSON-lines report (header, one line per result, footer); :func:`read_report`
reads such a report back into typed records; the participant helpers build the usual
line-up. Everything in modules starting with ``_`` is private.

Names are imported on first use, so a testee process that only needs the reference
(``refitwire.compat.testees.reference``) does not pay for Hypothesis and the runner.
"""

# ruff: noqa: F401 -- the imports under TYPE_CHECKING are this package's re-exports (see below)
from __future__ import annotations

from typing import TYPE_CHECKING

# The subpackages `generations` and `upstream` share their names with participant helpers.
# Importing a subpackage sets the package attribute of that name, so they are imported
# first and the helpers bound after them: `compat.generations()` stays the function.
from refitwire.compat import generations as _generations_package
from refitwire.compat import upstream as _upstream_package
from refitwire.compat.runner._participants import (
    Participant,
    candidates,
    generations,
    javascript,
    reference,
    third_party,
    upstream,
)
from refitwire.lazy_exports import lazy_names, loader

if TYPE_CHECKING:
    # The one list of the names loaded on first use (what the CLI and the gate use): static
    # checkers read these imports, and at run time _lazy() reads the same lines, so a name is
    # written once and its type is known without importing its module.
    from refitwire.compat._cache import cache_home
    from refitwire.compat._caches import Cache, caches, disk_size
    from refitwire.compat._caches import prune as prune_caches
    from refitwire.compat._errors import BaseMismatch, ReportError
    from refitwire.compat._hypothesis import deterministic as hypothesis_settings
    from refitwire.compat._hypothesis import kit_draws as hypothesis_draws
    from refitwire.compat._results import REQUIRED, Outcome, Result
    from refitwire.compat._session import execute as run_matrix
    from refitwire.compat._session import run_report
    from refitwire.compat.cases._sizes import count_tensors, size_cases
    from refitwire.compat.report._delta import Group as BaseGroup
    from refitwire.compat.report._delta import compare as compare_with_base
    from refitwire.compat.report._delta import grouped as group_against_base
    from refitwire.compat.report._delta import render as render_base_comparison
    from refitwire.compat.report._delta import under_test as participants_under_test
    from refitwire.compat.report._delta import without_known as without_base_failures
    from refitwire.compat.report._html import badges as html_badges
    from refitwire.compat.report._html import gate_page as html_gate_page
    from refitwire.compat.report._html import page as html_page
    from refitwire.compat.report._junit import Case as JUnitCase
    from refitwire.compat.report._junit import Status as JUnitStatus
    from refitwire.compat.report._junit import Suite as JUnitSuite
    from refitwire.compat.report._junit import render as render_junit
    from refitwire.compat.report._render import first_lines as render_first
    from refitwire.compat.report._render import render as render_report
    from refitwire.compat.report._render import summary as render_summary
    from refitwire.compat.report._report import Report, errored_run, read_report
    from refitwire.compat.report._report import ok as report_ok
    from refitwire.compat.report._rerun import describe as describe_case
    from refitwire.compat.report._rerun import known as knows_case
    from refitwire.compat.runner._candidate import Candidate
    from refitwire.compat.runner._expected import load_file as load_expected_failures
    from refitwire.compat.runner._kinds import HANDSHAKE as HANDSHAKE_CASE
    from refitwire.compat.runner._kinds import kind_of as case_kind
    from refitwire.compat.runner._participants import upstream_source
    from refitwire.compat.runner._run import Plan
    from refitwire.compat.runner._run import needs_peers as case_needs_peers


_WHERE = lazy_names(__file__)

__all__ = [
    "Participant", "candidates", "generations", "javascript", "reference", "third_party", "upstream", *_WHERE,
]  # fmt: skip


__getattr__ = loader(__name__, _WHERE)
