"""A rejection's reason is judged apart (``ID#rule``): its symptom groups one bug at many indices
as one (pointers with ``*``), yet still tells a wrong index from a wrong member."""

from __future__ import annotations

from refitwire.compat._results import Outcome, Rejected
from refitwire.compat.runner._checks import reason


def test_a_wrong_index_is_told_apart_from_a_wrong_member() -> None:
    due = "/tensors/0/shards/0/shape/0"
    index = reason(
        "read:v", "r", Rejected("", "BOX_IN_BOUNDS", "/tensors/0/shards/0/shape/1"), "BOX_IN_BOUNDS", due
    )
    member = reason(
        "read:v", "r", Rejected("", "BOX_IN_BOUNDS", "/tensors/0/shards/0/addr"), "BOX_IN_BOUNDS", due
    )
    assert index.outcome is Outcome.FAILED and member.outcome is Outcome.FAILED
    assert index.symptom.endswith("(another index)") and "shape/1" in index.message
    assert not member.symptom.endswith("(another index)")
    right = reason("read:v", "r", Rejected("", "BOX_IN_BOUNDS", due), "BOX_IN_BOUNDS", due)
    assert right.outcome is Outcome.PASSED
