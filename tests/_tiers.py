"""The test tiers: which marker a test needs for what it starts, checked while it runs.

The default ``pytest`` (the quick tier) deselects ``TIER_MARKERS`` (pyproject.toml's
``addopts``); ``tox -e tests`` runs everything. A test needs the marker of each thing it
starts, itself or through a fixture it uses (a module fixture counts for the test that
sets it up):

- ``upstream``: a process of a released upstream environment (a python under the folders of
  ``refitwire.compat.upstream.envs.cache_dirs``), or a ``refitwire matrix`` / ``refitwire
  conformance`` / ``refitwire gate`` command line that would start one (a matrix or a
  conformance run without ``--no-upstream``, a gate whose matrix is neither ``never`` nor
  replaced by ``--matrix-command``);
- ``nixl``: a NIXL agent in the test's process, or a process of the refit
  (``python -m refitwire.refit.<module>``, ``refitwire refit ...``): each is an agent;
- ``browser``: chromium, or node running the playwright driver of ``tests/compat/browser``;
- ``slow``: a full gate or matrix run (the same command lines as ``upstream``), or anything
  that takes more than a few seconds on a loaded two-core machine.

- ``exhaustive``: not what a test starts but where it sits in a sweep over every golden vector
  (one item per vector): every item whose vector's class (:func:`vector_class`) an earlier item
  of the same test already covers. The quick tier runs one vector of each class; ``tox -e tests``
  and ``tox -e floors`` run them all (:func:`mark_sweeps`).

What is seen comes from Python's audit events (``subprocess.Popen``), so it holds for a
test however it starts its processes; a test that lacks a marker it needs fails and is
told which. ``slow`` by time alone is the author's call (``--durations`` in CI shows it).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Deselected by the default run (pyproject.toml ``addopts``); every one is run by ``tox -e tests``.
TIER_MARKERS = ("slow", "upstream", "nixl", "browser")
#: Deselected by the default run too, and given by the suite itself, never by an author.
SWEEP_MARKER = "exhaustive"
BROWSER_DIR = Path(__file__).parent / "compat" / "browser"


@dataclass
class Watch:
    """What the running test started (one per process: an audit hook stays)."""

    upstream_roots: tuple[str, ...] = ()  # set before the first test, once refitwire is importable
    needed: set[str] | None = None  # None: no test is running
    why: dict[str, str] = field(default_factory=dict)

    def saw(self, tiers: Iterable[str], what: str) -> None:
        if self.needed is None:
            return
        for tier in tiers:
            if tier not in self.needed:
                self.needed.add(tier)
                self.why[tier] = what

    def on_audit(self, event: str, args: tuple[object, ...]) -> None:
        if event == "subprocess.Popen" and self.needed is not None:
            executable, argv = args[0], args[1]
            words = [str(w) for w in (argv if isinstance(argv, (list, tuple)) else [argv])]
            if executable is not None:
                words.insert(0, str(executable))
            self.saw(tiers_of_command(words, self.upstream_roots), " ".join(words)[:300])


def tiers_of_command(words: Sequence[str], upstream_roots: Sequence[str]) -> set[str]:
    """The markers a test needs for starting this command line."""
    tiers: set[str] = set()
    if any(w.startswith(root) for w in words for root in upstream_roots):
        tiers.add("upstream")
    if any("chromium" in w or "playwright" in w or w.startswith(str(BROWSER_DIR)) for w in words):
        tiers.add("browser")
    modules = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-m"]
    verb = _cli_verb(words)
    if any(m.startswith("refitwire.refit.") for m in modules) or verb == "refit":
        tiers.add("nixl")
    if verb == "matrix" and "--no-upstream" not in words:
        tiers |= {"upstream", "slow"}
    if verb == "conformance" and "--no-upstream" not in words:  # the testee meets the released upstream
        tiers.add("upstream")
    if verb == "gate" and not _gate_without_matrix(words):
        tiers |= {"upstream", "slow"}
    return tiers


def _cli_verb(words: Sequence[str]) -> str | None:
    """The verb of a ``refitwire`` command line (``python -m refitwire VERB``, ``refitwire VERB``)."""
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i + 1] == "refitwire":
            return words[i + 2] if i + 2 < len(words) else None
        if i == 0 and Path(word).name == "refitwire":
            return words[1]
    return None


def _gate_without_matrix(words: Sequence[str]) -> bool:
    never = "--matrix=never" in words or any(
        w == "--matrix" and n == "never" for w, n in itertools.pairwise(words)
    )
    return never or any(w.startswith("--matrix-command") for w in words)


def watch_nixl_agents(watch: Watch) -> None:
    """Count each NIXL agent made in this process (the refit's in-process agents)."""
    for name in ("nixl", "nixl_cu12"):
        agent = getattr(sys.modules.get(name), "nixl_agent", None)
        if agent is None or getattr(agent.__init__, "_tier_watched", False):
            continue
        original = agent.__init__

        def init(self: object, *args: object, _original: object = original, **kwargs: object) -> None:
            watch.saw(["nixl"], "a NIXL agent in the test's process")
            _original(self, *args, **kwargs)  # type: ignore[operator]

        init._tier_watched = True  # type: ignore[attr-defined]
        agent.__init__ = init


def upstream_roots() -> tuple[str, ...]:
    try:
        from refitwire.compat.upstream import envs
    except ImportError:  # the bare install: nothing upstream can start
        return ()
    return tuple(str(p) + os.sep for p in envs.cache_dirs())


def missing_markers(item: pytest.Item, watch: Watch) -> list[str]:
    needed = watch.needed or set()
    return [f"{tier} ({watch.why[tier]})" for tier in TIER_MARKERS
            if tier in needed and item.get_closest_marker(tier) is None]  # fmt: skip


# A vector's own data, as opposed to what it is: its name, prose, bytes, what it decodes to,
# where it breaks and what a writer was given. Two vectors equal in the rest are one class.
_VECTOR_DATA = frozenset({"id", "description", "blob", "blob_b64", "decoded", "pointer", "payload"})


def is_vector(value: object) -> bool:
    return isinstance(value, dict) and "id" in value and "expect" in value and "document" in value


def vector_class(value: object) -> object:
    """What a vector (or any parameter) is, with its own data left out (``_VECTOR_DATA``): its
    document, verdict, rule and tier at each version, its tags, the spec sentence it follows."""
    if isinstance(value, dict):
        return {k: vector_class(v) for k, v in value.items() if k not in _VECTOR_DATA}
    if isinstance(value, (list, tuple)):
        return [vector_class(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def mark_sweeps(items: Iterable[pytest.Item]) -> None:
    """Mark ``SWEEP_MARKER`` every item with a vector parameter whose test, other parameters and
    vector class an earlier item already has: the first of each class stays in the quick tier."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    classes: dict[int, str] = {}  # by id: the sweeps share their parameter objects

    def class_of(value: object) -> str:
        if id(value) not in classes:
            classes[id(value)] = json.dumps(vector_class(value), sort_keys=True)
        return classes[id(value)]

    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if not any(is_vector(v) for v in params.values()):
            continue
        what = tuple((name, class_of(v)) for name, v in sorted(params.items()))
        key = (f"{item.path}::{getattr(item, 'originalname', item.name)}", what)
        if key in seen:
            item.add_marker(SWEEP_MARKER)
        else:
            seen.add(key)
