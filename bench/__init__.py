"""Benchmarks: side-by-side ratios against the released upstream and the machine's limits.

``refitwire bench`` is the entry point; ``run_bench(Settings.full())`` returns the results
as a JSON-able dict and ``render_results`` prints them. Modules starting with ``_`` are private.
"""

from __future__ import annotations

from refitwire.bench._render import render_results
from refitwire.bench._run import Settings, run_bench
from refitwire.bench._table import make_table, table_inputs

__all__ = ["Settings", "make_table", "render_results", "run_bench", "table_inputs"]
