"""The package's import graph: modules, arrows, cycles and floors, read by grimp.

``python tools/import_graph.py [--json]`` prints, for the checkout it is in:

* modules and arrows (one arrow per importing module and imported module, late imports
  inside functions included, ``if TYPE_CHECKING:`` imports left out: they never run);
* cycles: each set of modules that reach one another (a strongly connected component of
  two or more), however the imports are hidden;
* floors: the longest chain of imports once each cycle is taken as one module, the
  height of the house.

grimp walks one folder per top-level package; the checkout maps its subpackages from several
folders (``pyproject.toml``'s package-dir), so the graph is read from a tree of links laid out
as an install would lay them out (:func:`link_tree`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from _layout import package_dirs

PACKAGE = "refitwire"


def link_tree(dest: Path) -> Path:
    """``dest/refitwire/...`` as an install lays the package out, each file a link into the
    checkout; returns ``dest`` (put it first on ``sys.path``)."""
    dirs = package_dirs()
    for name, folder in sorted(dirs.items()):
        target = dest.joinpath(*name.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for source in folder.rglob("*.py"):
            relative = source.relative_to(folder)
            owned_elsewhere = any(
                other != name and other.startswith(f"{name}.") and source.is_relative_to(dirs[other])
                for other in dirs
            )
            if "__pycache__" in relative.parts or owned_elsewhere:
                continue
            link = target / relative
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(source)
    return dest


def arrows_of(tree: Path) -> dict[str, set[str]]:
    """Each module of the package laid out in ``tree`` and the modules of the package it imports.

    Read in a fresh interpreter: where ``refitwire`` is already imported (a test run, a tool
    that imported ``_clone``), grimp would walk the imported package's one folder instead."""
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import grimp; "
        f"g = grimp.build_graph({PACKAGE!r}, cache_dir=None, exclude_type_checking_imports=True); "
        "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))"
    )
    done = subprocess.run([sys.executable, "-I", "-c", script, str(tree)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"grimp could not read the package: {done.stderr.strip()[-2000:]}")
    return {m: set(i) for m, i in sorted(json.loads(done.stdout).items())}


def cycles(arrows: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of two or more modules, each sorted, largest first.

    Tarjan's algorithm, iterative (a recursive one would meet Python's recursion limit on a
    long chain). Hand-written: grimp names imports that would break cycles, not the cycles,
    and a graph library for twenty lines is not worth a dependency.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in arrows:
        if start in index:
            continue
        work = [(start, iter(sorted(arrows.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(arrows.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def floors(arrows: Mapping[str, Iterable[str]]) -> int:
    """The number of modules on the longest import chain, each cycle counted as one module."""
    home = {m: m for m in arrows}
    for component in cycles(arrows):
        for member in component:
            home[member] = component[0]
    down: dict[str, set[str]] = {}
    for module, imported in arrows.items():
        down.setdefault(home[module], set()).update(home[i] for i in imported if home[i] != home[module])
    height: dict[str, int] = {}
    for node in sorted(down, key=lambda n: len(down[n])):  # any order: memoised depth-first below
        pending = [node]
        while pending:
            top = pending[-1]
            waiting = [c for c in down.get(top, ()) if c not in height]
            if waiting:
                pending.extend(waiting)
                continue
            pending.pop()
            height[top] = 1 + max((height[c] for c in down.get(top, ())), default=0)
    return max(height.values(), default=0)


def summary(arrows: Mapping[str, Iterable[str]]) -> dict[str, object]:
    return {
        "modules": len(arrows),
        "arrows": sum(len(set(i)) for i in arrows.values()),
        "cycles": cycles(arrows),
        "floors": floors(arrows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="refitwire-graph-") as tmp:
        found = summary(arrows_of(link_tree(Path(tmp))))
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    print(f"{found['modules']} modules, {found['arrows']} arrows, {found['floors']} floors")
    listed = found["cycles"]
    assert isinstance(listed, list)
    print(f"{len(listed)} cycle(s)" + (":" if listed else ""))
    for component in listed:
        print("  " + " <-> ".join(component))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
