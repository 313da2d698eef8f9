"""The report: the results of a run as records, and their renderings.

The JSON-lines report and reading it back (``_report``), the text report (``_render``), the
HTML page and its badges (``_html``, ``_badge``), JUnit XML (``_junit``), a comparison with a
base run (``_delta``) and how to rerun one case (``_rerun``). It sits on the runner
(``refitwire.compat.runner``: the kinds table says how each kind is shown and rebuilt) and
runs nothing itself.
"""
