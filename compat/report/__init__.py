"""The report: the results of a run as records, and their renderings.

The JSON-lines report and reading it back (``_report``), the text report (``_render``), the
HTML page and its badges (``_html``, ``_badge``), JUnit XML (``_junit``), a comparison with a
base run (``_delta``) and how to rerun one case (``_rerun``). It sits on the runner
(``refitwire.compat.runner``: the kinds table says how each kind is shown and rebuilt) and
runs nothing itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from refitwire.lazy_exports import lazy_names, loader

if TYPE_CHECKING:
    # What the layers above use of this one, loaded on first use as compat's own names are
    # (refitwire.lazy_exports): importing one module here does not import the whole layer.
    # ``X as X``: a re-export mypy's strict mode accepts (``__all__`` is built at run time).
    from refitwire.compat.report._report import (
        Report as Report,
    )
    from refitwire.compat.report._report import (
        Writer as Writer,
    )
    from refitwire.compat.report._report import (
        footer as footer,
    )
    from refitwire.compat.report._report import (
        header as header,
    )

_WHERE = lazy_names(__file__)

__all__ = [*_WHERE]

__getattr__ = loader(__name__, _WHERE)
