"""The verdict of one shard and the install rule."""

from __future__ import annotations

import pytest
from refitwire.refit import Policy, ShardVerdict, Verdict, judge, may_install

D, E = "0" * 32, "f" * 32


@pytest.mark.parametrize(
    ("expected", "stamp", "published", "actual", "verdict"),
    [
        (5, 5, D, D, Verdict.VERIFIED),
        (5, 5, D, E, Verdict.CORRUPT),
        (5, 4, D, E, Verdict.STALE),  # a lagging table is stale, not corrupt
        (5, 4, D, D, Verdict.STALE),  # even when its digest happens to match
        (5, 6, D, D, Verdict.AHEAD),
        (5, None, D, D, Verdict.UNKNOWN_STEP),  # no stamp attests nothing
        (0, None, D, D, Verdict.UNKNOWN_STEP),  # ... and is not step 0
        (0, 0, D, D, Verdict.VERIFIED),  # step 0 is a real step
        (5, 5, None, D, Verdict.UNCHECKED),  # absence is never agreement
    ],
)
def test_judge(
    expected: int, stamp: int | None, published: str | None, actual: str, verdict: Verdict
) -> None:
    assert judge(expected, stamp, published, actual) is verdict


def _v(verdict: Verdict) -> ShardVerdict:
    return ShardVerdict("w", (0,), (4,), "a", 1, D, D, verdict)


@pytest.mark.parametrize("bad", [v for v in Verdict if v not in (Verdict.VERIFIED, Verdict.UNCHECKED)])
def test_one_bad_shard_blocks_the_step_under_every_policy(bad: Verdict) -> None:
    for policy in (Policy(), Policy(accept_unchecked=True)):
        assert not may_install([_v(Verdict.VERIFIED), _v(bad)], policy)


def test_unchecked_needs_the_policy() -> None:
    shards = [_v(Verdict.VERIFIED), _v(Verdict.UNCHECKED)]
    assert not may_install(shards, Policy())
    assert may_install(shards, Policy(accept_unchecked=True))


def test_nothing_read_installs_nothing() -> None:
    assert not may_install([], Policy(accept_unchecked=True))
    assert may_install([_v(Verdict.VERIFIED)], Policy())
