"""The case kinds, as one table: each kind is one record, and every use of a case ID goes through it.

A record holds a kind's stable ID scheme (its prefix and the results derived from a case,
``#rule`` and ``:bytes``), its tier rule, its cases as a plan generates them, its part of a run
(whom it asks and its checks: ``_asking``), how ``--case`` rebuilds its inputs and shows the
answers to them (``_rebuild``), and what a rerun of it needs. The run iterates :data:`KINDS`;
``--case``, the text report, the page and the expected-failure lists dispatch through
:func:`parse`, which reads an ID once into its kind and key. Adding a kind is one record here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from refitwire.compat._results import BYTES, REASON, RECOMMENDED, REQUIRED
from refitwire.compat.cases import _built_cases, _cases, _digest, _merge, _sizes
from refitwire.compat.runner import _asking, _rebuild, _size_budget
from refitwire.compat.runner._asking import Asked, Scope
from refitwire.compat.runner._plan import CaseId, Plan, Started
from refitwire.compat.runner._rebuild import Inputs, Source
from refitwire.wire import Registry, blob_limit

__all__ = [
    "HANDSHAKE", "KINDS", "Asked", "CaseId", "Inputs", "Kind", "kind", "kind_of", "known_cases", "parse",
]  # fmt: skip


@dataclass(frozen=True)
class Kind:
    """One kind of case. Its IDs are ``prefix`` + a key (``read:v-…``, ``gen-3``), the bare
    ``name`` (a kind's one summary result: ``count`` when a testee has no count-only read), or a
    case ID and one of ``derived`` (Recommended, as every derived result is)."""

    name: str
    prefix: str  # "" for a kind whose one case is its name (``handshake``)
    scheme: str  # the ID form, for people
    role: str  # whom its results judge, as the expected-failure lists name it
    #: The tier of one of its cases (a derived result's is Recommended).
    tier: Callable[[Any], str]
    #: Its cases as a plan makes them for a participant of a spec version (``registry``'s).
    cases: Callable[[Registry, str], Sequence[Any]]
    ask: Callable[
        [Scope, Kind], Iterator[Asked]
    ]  # its part of a run, check by check (its crashes at ``tier``)
    planned: Callable[[Scope], int]  # how many checks that part makes (progress)
    inputs: Callable[[str, Source], Inputs | None]  # a case's inputs, found again from its bare ID
    show: Callable[[Plan, list[Started], str, Inputs], Iterator[str]]  # ``--case``: the answers
    derived: tuple[str, ...] = ()
    #: Whether its cases pair a testee with participants outside the focus (cells), not it alone.
    peers: bool = False
    rerun_flags: tuple[str, ...] = ()  # what a matrix rerun of one of its cases adds
    uses_seed: bool = (
        False  # whether its inputs come from the seed (a list of expected failures cannot name one)
    )
    #: The derived results one of its cases can give (None: every one of ``derived``).
    derives: Callable[[Any], tuple[str, ...]] | None = None

    def owns(self, case: str) -> bool:
        return case == self.name or (bool(self.prefix) and case.startswith(self.prefix))

    def ids(self, registry: Registry, version: str) -> Iterator[str]:
        """Every ID a participant of ``version`` can be given for its cases, derived ones included."""
        for case in self.cases(registry, version):
            yield case.id
            yield from (case.id + d for d in (self.derived if self.derives is None else self.derives(case)))


def _fixed(tier: str) -> Callable[[Any], str]:
    return lambda case: tier


def _own_tier(case: Any) -> str:
    return str(case.tier)


def _rejects(case: Any) -> tuple[str, ...]:
    """A vector's read gives a reason (``#rule``) where some version must reject it."""
    return (REASON,) if any(e is not None and not e["valid"] for e in case.expect.values()) else ()


def _none(registry: Registry, version: str) -> Sequence[Any]:
    return ()


def _planned_none(scope: Scope) -> int:
    return 0


def _asks_none(scope: Scope, kind: Kind) -> Iterator[Asked]:
    return iter(())


@dataclass(frozen=True)
class _Named:
    """A case known only by its ID (a probe, the growth judgement)."""

    id: str
    tier: str = REQUIRED


def _read_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _cases.read_cases()


def _count_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _cases.count_cases(registry)


def _merge_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _merge.merge_cases()


def _size_cases(registry: Registry, version: str) -> Sequence[Any]:
    """The growth judgement, then the tables (64 MiB each: built once per limit, kept on disk)."""
    return (_Named(_size_budget.GROWTH_CASE), *_sizes.size_cases(blob_limit(registry, version)))


def _probe_cases(registry: Registry, version: str) -> Sequence[Any]:
    return tuple(_Named(case) for case in _rebuild.PROBES)


def _digest_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _digest.digest_cases()


def _write_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _asking.golden_writes(version, registry)


def _refusal_cases(registry: Registry, version: str) -> Sequence[Any]:
    return _built_cases.refusal_cases(version, registry)


#: The kinds, in the order a run asks them (each participant meets them in this order).
KINDS: tuple[Kind, ...] = (
    Kind("handshake", "", "handshake", "participant", _fixed(REQUIRED), _none, _asks_none, _planned_none,
         _rebuild.inputs_none, _rebuild.show_nothing),
    Kind("read", "read:", "read:<vector id>[#rule]", "reader", _own_tier, _read_cases, _asking.ask_read,
         _asking.planned_read, _rebuild.inputs_read, _rebuild.show_read, derived=(REASON,), derives=_rejects),
    Kind("count", "count:", "count:<vector id>[#rule], or count", "reader", _own_tier, _count_cases,
         _asking.ask_count, _asking.planned_offered("count"), _rebuild.inputs_count, _rebuild.show_count,
         derived=(REASON,), derives=_rejects),
    Kind("merge", "merge:", "merge:<vector id>[#rule], or merge", "reader", _own_tier, _merge_cases,
         _asking.ask_merge, _asking.planned_offered("merge"), _rebuild.inputs_merge, _rebuild.show_merge,
         derived=(REASON,)),
    Kind("size", "size:", "size:<what>[#rule]", "reader", _own_tier, _size_cases, _asking.ask_size,
         _asking.planned_size, _rebuild.inputs_size, _rebuild.show_read, derived=(REASON,),
         derives=lambda case: (), rerun_flags=("--size-limit",)),
    Kind("protocol", "protocol:", "protocol:<probe>", "protocol", _fixed(REQUIRED), _probe_cases,
         _asking.ask_protocol, _asking.planned_protocol, _rebuild.inputs_protocol, _rebuild.show_nothing),
    Kind("digest", "digest:", "digest:<vector id>", "digest", _own_tier, _digest_cases, _asking.ask_digest,
         _asking.planned_digest, _rebuild.inputs_digest, _rebuild.show_digest),
    Kind("write", "write:", "write:<vector id>@<version>[+unknown][:bytes]", "writer", _own_tier,
         _write_cases, _asking.ask_write, _asking.planned_write, _rebuild.inputs_write, _rebuild.show_write,
         derived=(BYTES,)),
    Kind("refuse", "refuse:", "refuse:<RULE>-<12 hex of the rule and the break>[#rule]", "writer",
         _fixed(RECOMMENDED), _refusal_cases, _asking.ask_refuse, _asking.planned_refuse,
         _rebuild.inputs_refuse, _rebuild.show_write, derived=(REASON,)),
    Kind(_cases.GENERATED, f"{_cases.GENERATED}-", "gen-<n>, gen-<string class>[:bytes]", "writer",
         _fixed(REQUIRED), _none, _asking.ask_generated, _asking.planned_generated, _rebuild.inputs_generated,
         _rebuild.show_generated, derived=(BYTES,), peers=True, uses_seed=True),
)  # fmt: skip

_BY_NAME = {k.name: k for k in KINDS}
HANDSHAKE = _BY_NAME["handshake"].name  # the case of a participant that did not start


def kind(case: CaseId | str) -> Kind:
    """The record of a parsed case ID, or of a kind's name."""
    return _BY_NAME[case.kind if isinstance(case, CaseId) else case]


def parse(case_id: str) -> CaseId | None:
    """``case_id`` read once: its kind, its key, its bare case and the derived result's suffix;
    None when no kind has such IDs."""
    for k in KINDS:
        suffix = next((d for d in k.derived if case_id.endswith(d)), "")
        bare = case_id.removesuffix(suffix) if suffix else case_id
        if k.owns(bare):
            return CaseId(k.name, bare.removeprefix(k.prefix) if bare != k.name else "", bare, suffix)
    return None


def kind_of(case_id: str) -> str | None:
    """The name of the kind ``case_id`` belongs to (``read``, ``refuse``, ``handshake`` ...); None for none."""
    parsed = parse(case_id)
    return parsed.kind if parsed is not None else None


def bare(case_id: str) -> str:
    """The case a result belongs to: ``read:v-X#rule`` -> ``read:v-X``, ``gen-X:bytes`` -> ``gen-X``."""
    parsed = parse(case_id)
    return parsed.bare if parsed is not None else case_id


def rerun_flags(case_id: str) -> tuple[str, ...]:
    parsed = parse(case_id)
    return kind(parsed).rerun_flags if parsed is not None else ()


def needs_peers(only: str | None) -> bool:
    """Whether a run of ``--case only`` (``None``: every case) meets participants outside its
    focus: only a kind whose cases are cells (generated) does; the others are asked of the testee alone."""
    if only is None:
        return True
    parsed = parse(only)
    return parsed is not None and kind(parsed).peers


def inputs(case_id: str, source: Source) -> Inputs | None:
    """The inputs of the case ``case_id`` belongs to, found again through its kind."""
    parsed = parse(case_id)
    return kind(parsed).inputs(parsed.bare, source) if parsed is not None else None


def known_cases(registry: Registry, kinds: Iterable[Kind] = KINDS) -> dict[str, str]:
    """Every case ID a run with ``registry`` can give a released participant, by the role of the
    participant it judges (``reader`` or ``writer``): what a list of expected failures may name.
    A kind whose inputs come from the seed (``gen-N``) is not here: no list keeps it."""
    known: dict[str, str] = {}
    for k in kinds:
        if k.uses_seed or k.role not in ("reader", "writer"):
            continue
        # a writer's cases are its version's; a reader's are every version's (the newest's limit)
        versions = registry.released_versions() if k.role == "writer" else registry.released_versions()[-1:]
        for version in versions:
            known.update((i, k.role) for i in k.ids(registry, version))
    return known
