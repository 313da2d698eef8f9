"""The package's import graph (tools/import_graph.py): no import cycle.

The last one, the value generators' (``compat._values <-> _domain <-> _composed <->
_conditional <-> _regex``), went with the keywords as one table (issue 44: ``compat.keywords``,
each keyword's generators handed a context instead of importing the functions that call them).
The list is exact both ways: a new cycle fails, and so does a listed one that is gone, so it
only ever shrinks.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import import_graph

STILL_OPEN: list[list[str]] = []


@pytest.fixture(scope="module")
def arrows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    return import_graph.arrows_of(import_graph.link_tree(tmp_path_factory.mktemp("tree")))


def test_the_graph_holds_every_package(arrows: dict[str, set[str]]) -> None:
    for package in import_graph.package_dirs():
        assert package in arrows, f"{package} is missing from the graph: the tree of links is wrong"
    assert "refitwire.compat" in arrows["refitwire.cli.conformance"]  # arrows across packages too


def test_no_cycle_but_those_still_open(arrows: dict[str, set[str]]) -> None:
    found = import_graph.cycles(arrows)
    assert found == STILL_OPEN, (
        "import cycles changed: new ones must be broken (a module of its own for what both sides "
        "need, or an argument instead of an import); one that is gone comes off STILL_OPEN\n"
        + "\n".join(" <-> ".join(c) for c in found)
    )


def test_a_late_import_closing_a_loop_is_a_cycle(arrows: dict[str, set[str]]) -> None:
    """The check can fail: the refit's store importing its Redis store back (a cycle this
    house had, held by an import inside a function) is found, with every module on the loop."""
    planted = {m: set(i) for m, i in arrows.items()}
    planted["refitwire.refit._store"].add("refitwire.refit._redis_store")
    planted["refitwire.refit._redis_store"].add("refitwire.refit._store")
    assert ["refitwire.refit._redis_store", "refitwire.refit._store"] in import_graph.cycles(planted)
    assert import_graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_floors_count_a_cycle_as_one_floor() -> None:
    assert import_graph.floors({"a": {"b"}, "b": {"c"}, "c": set()}) == 3
    assert import_graph.floors({"a": {"b"}, "b": {"c"}, "c": {"b"}}) == 2


LOW_LAYER = "refitwire._wire"


def above_the_low_layer(arrows: Mapping[str, Iterable[str]]) -> list[str]:
    """Each arrow from the wire's low layer to a module outside it."""

    def low(module: str) -> bool:
        return module == LOW_LAYER or module.startswith(f"{LOW_LAYER}.")

    return sorted(f"{m} -> {i}" for m, imported in arrows.items() if low(m) for i in imported if not low(i))


def test_the_wires_low_layer_imports_nothing_above_it(arrows: dict[str, set[str]]) -> None:
    """``refitwire._wire`` lies below the library's modules, which import it, and the internal API
    ``refitwire.wire``, which imports them: an import of either from it would close a circle."""
    assert LOW_LAYER in arrows
    assert above_the_low_layer(arrows) == []


def test_the_check_sees_the_low_layer_reach_up(arrows: dict[str, set[str]]) -> None:
    planted = {m: set(i) for m, i in arrows.items()}
    planted[f"{LOW_LAYER}._model"].add("refitwire._errors")
    assert above_the_low_layer(planted) == [f"{LOW_LAYER}._model -> refitwire._errors"]
