"""The runner: what starts the participants, asks them the cases, and judges their replies.

The participants and a candidate version (``_participants``, ``_candidate``), the plan and
the case IDs (``_plan``), the table of case kinds (``_kinds``) and what asks each family
(``_asking``) or rebuilds one case's inputs for ``--case`` (``_rebuild``), the checks of a
reply (``_checks``, ``_causes``), the protocol probes (``_probes``), the size budget and the
growth of a testee's time and memory (``_size_budget``, ``_growth``) and the expected
failures (``_expected``). It sits on the cases (``refitwire.compat.cases``) and below the
report: nothing here renders a result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from refitwire.lazy_exports import lazy_names, loader

if TYPE_CHECKING:
    # What the layers above use of this one, loaded on first use as compat's own names are
    # (refitwire.lazy_exports): importing one module here does not import the whole layer.
    # ``X as X``: a re-export mypy's strict mode accepts (``__all__`` is built at run time).
    from refitwire.compat.runner._plan import Plan as Plan
    from refitwire.compat.runner._plan import Progress as Progress
    from refitwire.compat.runner._plan import Started as Started
    from refitwire.compat.runner._rebuild import Inputs as Inputs
    from refitwire.compat.runner._rebuild import Source as Source
    from refitwire.compat.runner._run import run as run
    from refitwire.compat.runner._run import start_all as start_all
    from refitwire.compat.runner._run import stop_all as stop_all

_WHERE = lazy_names(__file__)

__all__ = [*_WHERE]

__getattr__ = loader(__name__, _WHERE)
