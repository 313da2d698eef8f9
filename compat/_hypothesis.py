"""Hypothesis, imported so that nothing is written into the current directory.

Hypothesis keeps a character-table cache under ``./.hypothesis/`` and builds it the moment
``hypothesis.strategies`` is imported. A conformance run must leave the implementer's folder
as it found it, so the cache goes to the user's cache directory instead, and the home
directory is put back for whoever else uses Hypothesis in this process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from hypothesis import configuration
from refitwire.compat._cache import cache_home


@contextlib.contextmanager
def outside_cwd() -> Iterator[None]:
    """Point Hypothesis's storage at the kit's cache folder for the duration."""
    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(cache_home() / "hypothesis")
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)


with outside_cwd():
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    # Its import builds the character tables (the gate's witness search uses it); without it
    # they are built on first use, which generated_payloads() also wraps in outside_cwd().
    with contextlib.suppress(ImportError):
        import hypothesis_jsonschema  # noqa: F401

__all__ = [
    "HealthCheck",
    "Phase",
    "deterministic",
    "given",
    "hypothesis_seed",
    "kit_draws",
    "outside_cwd",
    "settings",
    "st",
]


def deterministic(max_examples: int = 300, *, shrink: bool = True, seeded: bool = False) -> settings:
    """The kit's one set of Hypothesis settings, for every value it draws (sample values written
    into payloads, generated payloads, the gate's witness search): the same values in every run,
    whatever test profile is loaded, and nothing stored -- no database, no deadline, no health
    checks, derandomized unless the caller fixes the seed itself (``seeded``, with
    :func:`hypothesis_seed`). ``shrink=False`` for a search that wants any example, not the
    smallest. (The test suite's own profiles are the tests' business.)"""
    return settings(
        settings.get_profile("default"),
        max_examples=max_examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=not seeded,
        phases=tuple(Phase) if shrink else (Phase.explicit, Phase.generate),
    )


@contextlib.contextmanager
def kit_draws() -> Iterator[None]:
    """Every draw of the kit (generated payloads, sample values, witness searches) inside: what
    it draws depends on its seed and settings alone.

    Hypothesis (6.131 on) sometimes draws a constant found in the source of the *local* modules
    imported so far (any not in site-packages or the standard library). So a payload drawn from
    one seed differed with what the process had imported: a conformance run's ``gen-3`` was
    another payload for ``--case gen-3`` in a new process, for an editable install or under
    pytest. No setting turns that off; for the draw, the provider's lookup of local constants
    answers none, and the cache of the constants allowed per choice (built from them) is
    emptied before and after. Hypothesis's own constants (edge values it always knows) stay.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module draws no local constants
        providers = None  # type: ignore[assignment]
    lookup = getattr(providers, "_get_local_constants", None)
    if lookup is None:  # before Hypothesis drew local constants (the floor, 6.100)
        with outside_cwd():
            yield
        return
    none = type(providers.GLOBAL_CONSTANTS)()
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: none  # no public switch exists (see above)
    try:
        with outside_cwd():
            yield
    finally:
        providers._get_local_constants = lookup
        providers.CONSTANTS_CACHE.cache.clear()
