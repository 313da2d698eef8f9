"""The properties of the seed contract test (the publisher step stamp), held by the reference.

Written anew in our words; each test says which property it guards and why it matters.
"""

from __future__ import annotations

import json

from refitwire import PublishedShard, PublishedTensor, unwrap_rendezvous_blob, wrap_rendezvous_blob


def make_blob(step: int | None = None, tensors: list[PublishedTensor] | None = None) -> bytes:
    return wrap_rendezvous_blob(b"meta", "agent-r0", "h:1", tensors or [], step)


def one_tensor() -> list[PublishedTensor]:
    shard = PublishedShard(agent_name="agent-r0", device_id=0, addr=4096, shard_offset=(0, 0), shape=(4, 4))
    return [
        PublishedTensor(
            name="layers.0.weight", dtype="torch.bfloat16", elsize=2, full_shape=(8, 4), shards=[shard]
        )
    ]


def test_a_stamp_survives_the_round_trip() -> None:
    assert unwrap_rendezvous_blob(make_blob(step=7)).publisher_step == 7


def test_no_stamp_reads_as_unknown_rather_than_zero() -> None:
    # Step 0 would make an unstamped publisher look permanently behind.
    assert unwrap_rendezvous_blob(make_blob()).publisher_step is None


def test_step_zero_is_a_real_step() -> None:
    assert unwrap_rendezvous_blob(make_blob(step=0)).publisher_step == 0


def test_an_absent_stamp_is_left_out_of_the_blob_not_written_as_null() -> None:
    assert "publisher_step" not in json.loads(make_blob())


def test_stamping_adds_exactly_one_top_level_key() -> None:
    assert set(json.loads(make_blob(step=4))) - set(json.loads(make_blob())) == {"publisher_step"}


def test_the_first_four_positions_are_unchanged_by_the_stamp() -> None:
    assert unwrap_rendezvous_blob(make_blob(step=3))[:4] == (b"meta", "agent-r0", "h:1", [])


def test_a_blob_that_never_had_a_stamp_reads_as_unknown() -> None:
    document = json.loads(make_blob())
    document.pop("publisher_step", None)
    assert unwrap_rendezvous_blob(json.dumps(document).encode()).publisher_step is None


def test_the_stamp_is_purely_additive() -> None:
    # What makes a stamped blob safe for a reader that predates the field.
    stamped, plain = json.loads(make_blob(step=11)), json.loads(make_blob())
    assert {k: v for k, v in stamped.items() if k != "publisher_step"} == plain


def test_the_stamp_leaves_the_shard_table_as_it_was() -> None:
    stamped = unwrap_rendezvous_blob(make_blob(step=5, tensors=one_tensor()))
    plain = unwrap_rendezvous_blob(make_blob(tensors=one_tensor()))
    assert stamped[:4] == plain[:4]
    assert stamped.tensors[0].shards[0].addr == 4096
