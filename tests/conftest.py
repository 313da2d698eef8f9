"""The suite's tiers, Hypothesis profile, and how it is shared out on pytest-xdist workers.

Tiers (``_tiers.py``): the default run deselects the ``slow``, ``upstream``, ``nixl`` and
``browser`` markers; a test that starts what a marker names without carrying it fails. A test
module's ``SLOW_FIXTURES`` (names of its fixtures) marks every test using one of them ``slow``.
Of a sweep over the golden vectors the default run keeps one vector per class (``exhaustive``;
``--every-vector`` keeps them all).
Hypothesis: the ``HYPOTHESIS_PROFILE`` profile (``_profiles.py``; ``dev`` when unset).

On workers (``--dist loadgroup``) two kinds of tests stay together on one worker; every other
test is handed out on its own:

- everything that moves bytes through NIXL (the ``nixl`` marker): each agent's progress thread
  takes a core, so two such tests at once only slow each other and stretch the timeouts they
  rely on (the pure-Python tests beside them in ``refit/`` go to any worker);
- the tests of a module that share a module-scoped fixture (a started testee, a bank of
  runs): split across workers, the fixture would be set up once on each.

The default run is on workers (pyproject.toml's ``addopts``: ``--numprocesses=auto
--dist=loadgroup``). Run serially (``-n 0``, or ``-p no:xdist``, whose options are then
accepted here and ignored), none of this changes anything.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest
from _tiers import Watch, mark_sweeps, missing_markers, upstream_roots, watch_nixl_agents

_SHARED_SCOPES = ("module", "package", "class")
_WATCH = pytest.StashKey[Watch]()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    parser.addoption(
        "--every-vector", action="store_true", help="mark no item of a golden-vector sweep exhaustive"
    )
    if not pluginmanager.has_plugin("xdist"):
        # pyproject.toml's addopts name xdist's options: without it (-p no:xdist, or not installed
        # as in tox -e bare) they are accepted and the run is serial.
        group = parser.getgroup("xdist", "pytest-xdist, not loaded: the run is serial")
        group.addoption("--numprocesses", default=None, help="ignored: pytest-xdist is not loaded")
        group.addoption("--dist", default="no", help="ignored: pytest-xdist is not loaded")


def pytest_configure(config: pytest.Config) -> None:
    # Registered here too, so --strict-markers accepts it when pytest-xdist is not installed.
    config.addinivalue_line("markers", "xdist_group(name): run on the same xdist worker as its group")
    try:
        import _profiles
    except ImportError:  # the bare install has no Hypothesis (tox -e bare)
        pass
    else:
        _profiles.load()
        # gc.freeze (pytest_collection_finish) hides the frozen referrers from gc.get_referrers,
        # which Hypothesis before the thread-local state of later releases (our floor, 6.100)
        # asks when it makes its global Random lazily: it warns that the object could be
        # collected, though hypothesis.core holds it. That check's blind spot, not a leak.
        config.addinivalue_line(
            "filterwarnings",
            "ignore:It looks like `register_random` was passed an object:hypothesis.errors.HypothesisWarning",
        )
    watch = Watch()
    config.stash[_WATCH] = watch
    sys.addaudithook(watch.on_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    watch = item.config.stash[_WATCH]
    if not watch.upstream_roots:
        watch.upstream_roots = upstream_roots()
    watch_nixl_agents(watch)  # once NIXL is imported (collecting refit/ imports it)
    watch.needed, watch.why = set(), {}
    try:
        yield
    finally:
        watch.needed = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or not report.passed:
        return
    missing = missing_markers(item, item.config.stash[_WATCH])
    if missing:  # the test started what a tier marker names: it would slip into the quick tier
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} needs the marker(s) {', '.join(missing)}: see tests/_tiers.py"


@pytest.hookimpl(tryfirst=True)  # before the tiers are deselected and xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        # A module names its slow shared fixtures (a bank of runs) once: every test asking for
        # one is slow, so the quick tier never sets it up.
        if set(getattr(getattr(item, "module", None), "SLOW_FIXTURES", ())) & set(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.slow)
    if not config.getoption("--every-vector"):
        mark_sweeps(items)
    for item, group in zip(items, _groups(items)):
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection built (the golden vectors, the models, Hypothesis) lives as long as the
    # session: moved out of the collector's reach, it is not scanned again by every full
    # collection a test triggers, nor by pytest's own at the session's end.
    gc.freeze()


def _groups(items: list[pytest.Item]) -> list[str | None]:
    """Each item's group. A module sharing a fixture stays whole: a test that asks for the fixture
    by ``request.getfixturevalue`` does not list it, and would set it up again on another worker."""
    shared = {_file(item) for item in items if _shares_a_fixture(item)}
    with_nixl = {_file(item) for item in items if item.get_closest_marker("nixl") is not None}
    groups: list[str | None] = []
    for item in items:
        file = _file(item)
        if item.get_closest_marker("nixl") is not None or (file in shared and file in with_nixl):
            groups.append("nixl")
        else:
            groups.append(file if file in shared else None)
    return groups


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether the item uses a fixture of this test tree (a conftest or a test module: a plugin's
    own fixtures have no base ID) set up once per module (or class)."""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for defs in definitions.values():
        for fixture in defs:
            if fixture.scope in _SHARED_SCOPES and getattr(fixture, "baseid", ""):
                return True
    return False
