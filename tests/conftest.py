"""How the suite is shared out when it runs on pytest-xdist workers (``--dist loadgroup``).

Two kinds of tests stay together on one worker; every other test is handed out on its own:

- everything that moves bytes through NIXL (the ``nixl`` marker, or anything in ``refit/``):
  each agent's progress thread takes a core, so two such tests at once only slow each other
  and stretch the timeouts they rely on;
- the tests of a module that share a module-scoped fixture (a started testee, a bank of
  runs): split across workers, the fixture would be set up once on each.

Run serially (no ``-n``), none of this changes anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_REFIT = Path(__file__).with_name("refit")
_SHARED_SCOPES = ("module", "package", "class")


def pytest_configure(config: pytest.Config) -> None:
    # Registered here too, so --strict-markers accepts it when pytest-xdist is not installed.
    config.addinivalue_line("markers", "xdist_group(name): run on the same xdist worker as its group")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the node IDs
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _group(item: pytest.Item) -> str | None:
    if item.get_closest_marker("nixl") is not None or _REFIT in item.path.parents:
        return "nixl"
    if _shares_a_fixture(item):
        return item.nodeid.split("::", 1)[0]
    return None


def _shares_a_fixture(item: pytest.Item) -> bool:
    """Whether the item uses a fixture of this test tree set up once per module (or class)."""
    tests = Path(__file__).parent
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for defs in definitions.values():
        for fixture in defs:
            where = Path(str(getattr(fixture, "baseid", "") or "")).parts[:1]
            if fixture.scope in _SHARED_SCOPES and where == (tests.name,):
                return True
    return False
