"""compat's subpackages stand in layers (issue 44): each imports only those below it.

From the bottom: compat's flat foundation (the protocol, the testee process, the results, the
exceptions, the caches), ``keywords`` (each keyword's values and breaks), ``cases`` (what the
kit sends), ``runner`` (starting participants, asking the cases, judging replies), ``report``
(the records and their renderings), and on top the package's door (``__init__``) and
``_session``, which runs a plan and writes its report. A layer that reached up (the size sweep
asking the runner's budget, as ``_sizes`` and ``_size_budget`` once did) would make the two a
knot that moves and tests only as one; the graph is grimp's, late imports included.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import import_graph

PACKAGE = "refitwire.compat"
#: bottom to top; the flat modules not in TOP are the floor below them all
LAYERS = ("keywords", "cases", "runner", "report")
TOP = (PACKAGE, f"{PACKAGE}._session")


def layer_of(module: str) -> int | None:
    """The module's layer: 0 for compat's flat foundation, 1.. for LAYERS, None for what the
    layers do not order (other packages, compat's other subpackages, the top)."""
    if module in TOP or not module.startswith(f"{PACKAGE}."):
        return None
    part = module.split(".")[2]
    if part.startswith("_"):
        return 0
    return LAYERS.index(part) + 1 if part in LAYERS else None


def upward(arrows: Mapping[str, set[str]]) -> list[str]:
    """``module imports module`` for each import of a higher layer than the importer's."""
    found = []
    for module, imported in sorted(arrows.items()):
        mine = layer_of(module)
        if mine is None:
            continue
        found += [f"{module} imports {other}" for other in sorted(imported) if (layer_of(other) or 0) > mine]
    return found


@pytest.fixture(scope="module")
def arrows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    return import_graph.arrows_of(import_graph.link_tree(tmp_path_factory.mktemp("tree")))


def test_every_layer_is_in_the_graph(arrows: dict[str, set[str]]) -> None:
    for layer in LAYERS:
        assert any(m.startswith(f"{PACKAGE}.{layer}.") for m in arrows), f"no module of {layer}"


def test_no_layer_imports_a_higher_one(arrows: dict[str, set[str]]) -> None:
    found = upward(arrows)
    assert not found, "\n".join(found)


def test_the_check_sees_a_layer_reaching_up(arrows: dict[str, set[str]]) -> None:
    """The check can fail: the size sweep importing the runner's budget back, the foundation's
    results importing a rendering, are each named."""
    planted = {m: set(i) for m, i in arrows.items()}
    planted[f"{PACKAGE}.cases._sizes"].add(f"{PACKAGE}.runner._size_budget")
    planted[f"{PACKAGE}._results"].add(f"{PACKAGE}.report._render")
    assert upward(planted) == [
        f"{PACKAGE}._results imports {PACKAGE}.report._render",
        f"{PACKAGE}.cases._sizes imports {PACKAGE}.runner._size_budget",
    ]
