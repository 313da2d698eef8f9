"""The runner: what starts the participants, asks them the cases, and judges their replies.

The participants and a candidate version (``_participants``, ``_candidate``), the plan and
the case IDs (``_plan``), the table of case kinds (``_kinds``) and what asks each family
(``_asking``) or rebuilds one case's inputs for ``--case`` (``_rebuild``), the checks of a
reply (``_checks``, ``_causes``), the protocol probes (``_probes``), the size budget and the
growth of a testee's time and memory (``_size_budget``, ``_growth``) and the expected
failures (``_expected``). It sits on the cases (``refitwire.compat.cases``) and below the
report: nothing here renders a result.
"""
