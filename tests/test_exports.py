"""The exported names of each package, counted: a new export is a decision, taken here.

``refitwire.__all__`` is the library's API for users, ``refitwire.wire`` the kit's one
internal API, and each of compat, gate, refit and bench exports what the others use of it
(issue 44: 256 names, two internal APIs that overlapped). A name no other package uses stays
private; one name is one thing, so no two packages export the same name (a user-facing name,
``InvalidBlob`` or ``latest``, is taken from ``refitwire`` and not repeated in the API).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence

import pytest

#: len(__all__) of each package; the CLI's surface is its verbs, so it exports no names.
EXPORTED = {
    "refitwire": 20,
    "refitwire.wire": 73,
    "refitwire.compat": 52,
    "refitwire.gate": 26,
    "refitwire.refit": 41,
    "refitwire.bench": 5,
    "refitwire.cli": 0,
}


def exported(package: str) -> list[str]:
    return list(getattr(importlib.import_module(package), "__all__", []))


def shared_names(surfaces: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Each name more than one package exports, with those packages."""
    owners: dict[str, list[str]] = {}
    for package, names in surfaces.items():
        for name in set(names):
            owners.setdefault(name, []).append(package)
    return {name: sorted(packages) for name, packages in sorted(owners.items()) if len(packages) > 1}


@pytest.mark.parametrize("package", EXPORTED)
def test_each_package_exports_the_names_decided(package: str) -> None:
    names = exported(package)
    assert len(names) == len(set(names)), f"{package}.__all__ names one name twice"
    assert len(names) == EXPORTED[package], (
        f"{package} exports {len(names)} names, {EXPORTED[package]} decided: a new export is a decision "
        "(is it used outside its package? does another package export the name?); write the new count "
        "in EXPORTED"
    )


def test_no_two_packages_export_one_name() -> None:
    found = shared_names({package: exported(package) for package in EXPORTED})
    assert not found, "\n".join(f"{name}: {', '.join(packages)}" for name, packages in found.items())


def test_the_check_sees_a_name_exported_twice() -> None:
    """The check can fail: the old pair of internal APIs, each exporting ``version_key``, is named."""
    planted = {"refitwire.engine": ["version_key", "check"], "refitwire.wire": ["version_key", "pointer"]}
    assert shared_names(planted) == {"version_key": ["refitwire.engine", "refitwire.wire"]}


def test_the_internal_api_resolves_every_name() -> None:
    """Every name ``refitwire.wire`` exports is there (it imports its names, no lazy loader)."""
    wire = importlib.import_module("refitwire.wire")
    assert [name for name in wire.__all__ if not hasattr(wire, name)] == []
