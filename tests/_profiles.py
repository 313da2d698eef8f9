"""The suite's Hypothesis profiles, chosen by ``HYPOTHESIS_PROFILE`` (tests/conftest.py loads it).

- ``ci`` (``tox -e tests``): every test's own example count, no deadline (the CI machine is
  shared), no example database written into the checkout;
- ``dev`` (the default, and the quick tier): a tenth of the examples, for a fast local run.

A test that needs more or fewer examples than the profile's default writes its ``ci`` count
as ``examples(n)``: the loaded profile scales it, so the quick tier stays quick and CI keeps
the full search.
"""

from __future__ import annotations

import os

from hypothesis import settings

CI_EXAMPLES = 100  # Hypothesis's own default: a test's count is written for it
PROFILE_VAR = "HYPOTHESIS_PROFILE"

settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None, database=None, print_blob=True)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 10, deadline=None)


def load() -> str:
    """Load the profile the environment names (``dev`` when none) and return its name."""
    name = os.environ.get(PROFILE_VAR, "dev")
    settings.load_profile(name)
    return name


def examples(ci: int) -> int:
    """``ci`` examples under the ``ci`` profile; the same share of the loaded profile's count otherwise."""
    return max(1, ci * settings.default.max_examples // CI_EXAMPLES)
