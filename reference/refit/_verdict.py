"""What a receiver concludes about each published shard it read, and whether it may install.

The closed set of verdicts, in the order they are decided:

* ``unknown-step``: the publisher stamped no step, so its digests attest nothing known;
* ``stale``: the stamp is behind the step being refit (a lagging table, not corruption);
* ``ahead``: the stamp is past it (the publisher moved on while we read);
* ``unchecked``: the stamp matches but the shard carries no digest;
* ``corrupt``: the stamp matches and the recomputed digest differs;
* ``verified``: the stamp matches and the digest agrees.

A step is installed only when every shard the receiver needed is ``verified``
(or ``unchecked`` when the policy accepts it); otherwise nothing changes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Policy", "ShardVerdict", "Verdict", "judge", "may_install"]


class Verdict(enum.Enum):
    VERIFIED = "verified"
    CORRUPT = "corrupt"
    STALE = "stale"
    AHEAD = "ahead"
    UNKNOWN_STEP = "unknown-step"
    UNCHECKED = "unchecked"


def judge(expected_step: int, publisher_step: int | None, published: str | None, actual: str) -> Verdict:
    """The verdict for one shard whose bytes digest to ``actual``."""
    if publisher_step is None:
        return Verdict.UNKNOWN_STEP  # never read as step 0
    if publisher_step < expected_step:
        return Verdict.STALE
    if publisher_step > expected_step:
        return Verdict.AHEAD
    if published is None:
        return Verdict.UNCHECKED  # absence is never agreement
    return Verdict.VERIFIED if published == actual else Verdict.CORRUPT


@dataclass(frozen=True)
class Policy:
    """Which verdicts let a step be installed."""

    accept_unchecked: bool = False

    @property
    def accepted(self) -> frozenset[Verdict]:
        if self.accept_unchecked:
            return frozenset({Verdict.VERIFIED, Verdict.UNCHECKED})
        return frozenset({Verdict.VERIFIED})


@dataclass(frozen=True)
class ShardVerdict:
    """One published shard as the receiver judged it."""

    tensor: str
    offset: tuple[int, ...]
    shape: tuple[int, ...]
    agent: str
    publisher_step: int | None
    published_digest: str | None
    actual_digest: str
    verdict: Verdict


def may_install(verdicts: Iterable[ShardVerdict], policy: Policy) -> bool:
    """True when every verdict is one the policy accepts (and there is at least one)."""
    seen = {v.verdict for v in verdicts}  # the policy's set made once, not once per shard (19,061 on the MoE)
    return bool(seen) and seen <= policy.accepted
