"""What a run covers (:class:`Plan`), who took part (:class:`Started`), and how far it is
(:class:`Progress`): the records the run, the case kinds and ``--case`` share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from refitwire.compat._testee import Identity, Testee
from refitwire.compat.runner._participants import Participant
from refitwire.wire import Registry

if TYPE_CHECKING:
    from refitwire.compat.runner import _expected

__all__ = ["CaseId", "Plan", "Progress", "Started"]


@dataclass
class Started:
    participant: Participant  # labelled by its start reply where its label was provisional
    testee: Testee
    identity: Identity
    given: str = ""  # the label it was started under, when the start reply renamed it

    @property
    def asked_as(self) -> str:
        """The label the caller knows it by (``focus``, ``--expected-failures``)."""
        return self.given or self.participant.label

    @property
    def label(self) -> str:
        return self.participant.label

    @property
    def version(self) -> str:
        return self.identity.spec_version


@dataclass
class Plan:
    """What a run covers.

    ``focus``: only cells with one of these participants on one side and a participant
    outside ``focus`` on the other (conformance; several testees share one run this way).
    ``only``: run just the cases with this ID (``refitwire conformance --case``).
    ``limits``: send the blobs at and over the blob size limit (``registry``'s, at the reader's version).
    """

    participants: Sequence[Participant]
    seed: int = 0
    examples: int = 200
    focus: str | Sequence[str] | None = None
    timeout_s: float = 10.0
    check_messages: bool = True
    unavailable: list[str] = field(default_factory=list)
    schema_dir: Path | None = None  # a schema/ folder whose unreleased versions join as candidates (the gate)
    limits: bool = True
    only: str | None = None
    upstream: str = "not asked"  # whether the released upstream participants ran, for the report
    startup_timeout_s: float = 120.0  # per participant, from its own process start, apart from timeout_s
    # Expected failures given explicitly (--expected-failures), by participant label: never by the
    # name a testee gives itself.
    expected_failures: dict[str, _expected.Listed] = field(default_factory=dict)
    #: Where every version of the run is read (the entry point's registry: the CLI's, a test's),
    #: plus ``schema_dir``'s candidates; never a default.
    registry: Registry = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.schema_dir is not None:
            self.registry = self.registry.with_candidates(self.schema_dir)

    @property
    def focused(self) -> frozenset[str] | None:
        if self.focus is None:
            return None
        return frozenset([self.focus] if isinstance(self.focus, str) else self.focus)


@dataclass
class Progress:
    """How far a run is: its checks done of those planned. A check asks one case of one participant
    or cell (or an optional command's cases, or the size cases, of one reader) and gives a result or
    a few; ``total`` is known once :func:`run` has begun."""

    total: int = 0
    done: int = 0


@dataclass(frozen=True)
class CaseId:
    """A case ID parsed once (``_kinds.parse``): its kind's name, the key after the kind's
    prefix, the bare ID (the case) and a derived result's suffix (``#rule``, ``:bytes``; "")."""

    kind: str
    key: str
    bare: str
    derived: str = ""

    def __str__(self) -> str:
        return self.bare + self.derived
