"""Writer format, older-version writing, the standalone table and the replica merge."""

from __future__ import annotations

import json
import pickle

import pytest
from refitwire import (
    InvalidBlob,
    LazyTable,
    PublishedShard,
    PublishedTensor,
    decode_shard_table,
    encode_shard_table,
    merge_shard_tables,
    schema_document,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)


def shard(offset: tuple[int, ...], agent: str = "r0", digest: str | None = None) -> PublishedShard:
    return PublishedShard(
        agent_name=agent, device_id=0, addr=4096, shard_offset=offset, shape=(4, 4), digest=digest
    )


def tensor(*shards: PublishedShard, name: str = "w") -> PublishedTensor:
    return PublishedTensor(name=name, dtype="torch.bfloat16", elsize=2, full_shape=(8, 4), shards=shards)


def test_an_empty_table_is_the_upstream_bytes() -> None:
    assert encode_shard_table([]) == b'{"schema": "mx.reshard.shard_table.v1", "tensors": []}'


def test_writing_as_an_older_version_drops_what_it_did_not_know() -> None:
    tensors = [tensor(shard((0, 0), digest="0" * 32))]
    old = wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 9, spec_version="1.0.0")
    plain = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0)))])
    assert old == plain
    middle = json.loads(wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 9, spec_version="1.1.0"))
    assert "publisher_step" not in middle and middle["tensors"][0]["shards"][0]["digest"] == "0" * 32


def test_a_rendezvous_blob_decodes_as_a_shard_table() -> None:
    tensors = [tensor(shard((0, 0)), shard((4, 0)))]
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 1)
    assert decode_shard_table(blob) == tensors == decode_shard_table(encode_shard_table(tensors))


def test_count_only_read_keeps_the_count() -> None:
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(name="a"), tensor(name="b")], 2)
    counted = unwrap_rendezvous_blob(blob, with_tensors=False)
    assert counted.tensors == [] and counted.entry_count() == 2 and counted.publisher_step == 2
    assert unwrap_rendezvous_blob(blob).entry_count() == 2


def test_count_only_read_answers_from_the_envelope_alone() -> None:
    """The fast path vouches for a valid envelope even when an entry is broken (checked when the
    table is read), and passes anything it cannot vouch for to the full read."""
    from refitwire._quorum import quorum_envelope

    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor()], 7)
    broken_entry = blob.replace(b'"dtype": "torch.bfloat16"', b'"dtype": "not-a-dtype"')
    assert broken_entry != blob
    for good in (blob, broken_entry):
        members, count = quorum_envelope(good, "1.2.0", wire.default_registry()) or ({}, 0)
        assert (members.get("publisher_step"), members.get("agent_name"), count) == (7, "r0", 1)
    assert (
        "publisher_step" not in (quorum_envelope(blob, "1.0.0", wire.default_registry()) or ({}, 0))[0]
    )  # a 1.0.0 reader ignores it
    for bad in (b"-1", b"7.0", b'"7"'):
        assert (
            quorum_envelope(
                blob.replace(b'"publisher_step": 7', b'"publisher_step": ' + bad),
                "1.2.0",
                wire.default_registry(),
            )
            is None
        )


def test_count_only_read_holds_the_step_to_the_schema_bounds() -> None:
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor()], 7)
    for step in (0, 2**63 - 1):
        counted = unwrap_rendezvous_blob(blob.replace(b'"publisher_step": 7', b'"publisher_step": %d' % step),
                                         with_tensors=False)  # fmt: skip
        assert (counted.publisher_step, counted.entry_count()) == (step, 1)
    for step in (-1, 2**63, 2**64):
        with pytest.raises(InvalidBlob) as caught:
            unwrap_rendezvous_blob(blob.replace(b'"publisher_step": 7', b'"publisher_step": %d' % step),
                                   with_tensors=False)  # fmt: skip
        assert (caught.value.rule, caught.value.pointer) == ("STEP_RANGE", "/publisher_step")


def test_merge_keeps_the_first_replica_and_every_distinct_box() -> None:
    rank0 = [tensor(shard((0, 0), "dp0", "a" * 32)), tensor(shard((0, 0), "dp0"), name="only0")]
    rank1 = [tensor(shard((0, 0), "dp1", "b" * 32), shard((4, 0), "dp1"))]
    merged = merge_shard_tables([rank0, rank1])
    assert [t.name for t in merged] == ["w", "only0"]
    assert [(s.agent_name, s.shard_offset, s.digest) for s in merged[0].shards] == [
        ("dp0", (0, 0), "a" * 32),
        ("dp1", (4, 0), None),
    ]


def _lazy_and_eager(blob: bytes, version: str = "1.2.0") -> tuple[LazyTable, list[PublishedTensor]]:
    lazy = unwrap_rendezvous_blob(blob, lazy=True, spec_version=version).tensors
    assert isinstance(lazy, LazyTable)
    return lazy, list(unwrap_rendezvous_blob(blob, spec_version=version).tensors)


def test_the_lazy_table_reads_like_the_eager_list() -> None:
    tensors = [tensor(shard((0, 0), digest="0" * 32), shard((4, 0)), name=f"w{i}") for i in range(12)]
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 3)
    lazy, eager = _lazy_and_eager(blob)
    assert eager == tensors
    assert len(lazy) == 12 and lazy[0] == tensors[0] and lazy[-1] == tensors[-1] and lazy[11] == tensors[11]
    assert lazy[2:9:3] == tensors[2:9:3] and lazy[::-1] == tensors[::-1] and lazy[20:] == []
    assert list(lazy) == tensors and lazy == tensors and lazy == tuple(tensors) and lazy == lazy
    assert lazy != tensors[:-1] and lazy != [*tensors[:-1], tensors[0]]
    assert lazy[5] is lazy[5]  # built once
    assert repr(lazy) == "LazyTable(12 entries)"
    for index in (12, -13):
        with pytest.raises(IndexError):
            lazy[index]
    with pytest.raises(TypeError):
        lazy[0] = tensors[0]  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(lazy)
    assert pickle.loads(pickle.dumps(lazy)) == tensors


def test_reading_a_lazy_table_whole_builds_its_models_in_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import refitwire._lazy_table as lazy_table_module

    calls: list[int] = []
    real = lazy_table_module.table_models

    def counted(entries: list[object], *args: object, **kwargs: object) -> list[PublishedTensor]:
        calls.append(len(entries))
        return real(entries, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lazy_table_module, "table_models", counted)
    tensors = [tensor(shard((0, 0)), name=f"w{i}") for i in range(12)]
    lazy, _ = _lazy_and_eager(wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 3))
    assert lazy[3] == tensors[3] and calls == [1]
    assert list(lazy) == tensors and calls == [1, 11]  # the eleven not built yet, together
    assert lazy[2:6] == tensors[2:6] and list(lazy) == tensors and calls == [1, 11]  # nothing built again


def test_a_lazy_payload_survives_pickling() -> None:
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0), digest="a" * 32))], 3)
    payload = unwrap_rendezvous_blob(blob, lazy=True)
    assert pickle.loads(pickle.dumps(payload)) == unwrap_rendezvous_blob(blob)


def test_the_lazy_table_projects_like_the_eager_one() -> None:
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0), digest="a" * 32))], 3)
    lazy, eager = _lazy_and_eager(blob, "1.0.0")
    assert lazy == eager and lazy[0].shards[0].digest is None


def test_a_lazy_read_still_checks_the_whole_table_up_front() -> None:
    document = json.loads(wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0))) for _ in range(3)]))
    document["tensors"][2]["shards"][0]["shape"] = [9, 9]
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(json.dumps(document).encode(), lazy=True)
    assert (caught.value.rule, caught.value.pointer) == ("BOX_IN_BOUNDS", "/tensors/2/shards/0/shape/0")


def _members(entry: object, names: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(getattr(entry, name) for name in names)


def test_the_lazy_table_shows_its_entries_as_read_without_building_models() -> None:
    tensors = [tensor(shard((0, 0), digest="0" * 32), shard((4, 0)), name=f"w{i}") for i in range(3)]
    lazy, eager = _lazy_and_eager(wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 3))
    seen = lazy.entries_as_read()
    assert len(seen) == 3 and lazy._built == [None] * 3  # nothing built
    top = tuple(name for name in PublishedTensor.model_fields if name != "shards")
    below = tuple(PublishedShard.model_fields)
    for got, want in zip(seen, eager, strict=True):
        assert _members(got, top) == _members(want, top)
        assert [_members(s, below) for s in got.shards] == [_members(s, below) for s in want.shards]
    with pytest.raises(AttributeError):
        seen[0].shards[0].digest = "1" * 32  # type: ignore[misc]
    # A blob the typed read does not vouch for (an unknown member) was read as dicts: models instead.
    document = json.loads(wrap_rendezvous_blob(b"m", "r0", "h:1", tensors, 3))
    document["tensors"][1]["shards"][0]["future_member"] = 1
    exact = unwrap_rendezvous_blob(json.dumps(document).encode(), lazy=True).tensors
    assert isinstance(exact, LazyTable) and list(exact.entries_as_read()) == eager


def _with_a_later_shard_member() -> wire.Registry:
    """The default registry and a candidate whose shards have one more member."""
    newest = wire.default_registry().released_versions()[-1]
    schema = schema_document("rendezvous", newest)
    schema["x-spec-version"] = "1.9.0"
    schema["$defs"]["shard"]["properties"]["numa_node"] = {
        "type": "integer",
        "minimum": 0,
        "x-added-in": "1.9.0",
    }
    return wire.default_registry().with_resource("rendezvous", "1.9.0", schema)


@pytest.mark.parametrize("later", ["released", "candidate"])
def test_a_member_only_a_later_version_declares_reads_as_absent_from_the_entries_as_read(later: str) -> None:
    """An entry as read has every member its model has: one the blob's version lacks (a 1.0.0
    blob has no ``digest``; a candidate's new member in a released blob) is ``None`` on both,
    not an AttributeError on one; a blob of that version still must not hold it."""
    registry = wire.default_registry() if later == "released" else _with_a_later_shard_member()
    version = registry.released_versions()[0 if later == "released" else -1]
    classes = wire.classes_of(registry)
    absent = set(classes.shard.model_fields) - set(
        registry.wire_model("rendezvous", version).level(*classes.shard_level).names
    )
    assert absent, f"{version} declares every shard member of the newest version"
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0)))], 3, spec_version=version)
    lazy = unwrap_rendezvous_blob(blob, lazy=True, spec_version=version, registry=registry).tensors
    eager = unwrap_rendezvous_blob(blob, spec_version=version, registry=registry).tensors
    assert isinstance(lazy, LazyTable) and lazy._typed
    got, want = lazy.entries_as_read()[0].shards[0], eager[0].shards[0]
    assert _members(got, tuple(classes.shard.model_fields)) == _members(
        want, tuple(classes.shard.model_fields)
    )
    assert {name: getattr(got, name) for name in absent} == dict.fromkeys(absent)
    with_it = json.loads(blob)
    with_it["tensors"][0]["shards"][0][sorted(absent)[0]] = None
    assert not unwrap_rendezvous_blob(json.dumps(with_it).encode(), lazy=True, spec_version=version,
                                      registry=registry).tensors._typed  # type: ignore[attr-defined]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True])
def test_decoded_models_behave_like_constructed_ones(lazy: bool) -> None:
    """The reader fills models without pydantic's validation; they must still act as models
    (model_copy with an update mutates the copy's fields-set, never one shared by all)."""
    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0)), shard((4, 0)))], 3)
    decoded = unwrap_rendezvous_blob(blob, lazy=lazy).tensors
    first, second = decoded[0].shards
    moved = first.model_copy(update={"addr": 8192})
    assert moved.addr == 8192 and first.addr == 4096 and "addr" in moved.model_fields_set
    assert second.model_fields_set == first.model_fields_set
    renamed = decoded[0].model_copy(update={"name": "v"})
    assert renamed.name == "v" and decoded[0].name == "w"
    assert merge_shard_tables([decoded, decoded]) == [tensor(shard((0, 0)), shard((4, 0)))]


def test_decoded_models_copy_pickle_and_compare_like_constructed_ones() -> None:
    import copy

    blob = wrap_rendezvous_blob(b"m", "r0", "h:1", [tensor(shard((0, 0)))], 3)
    decoded = unwrap_rendezvous_blob(blob).tensors[0]
    for clone in (copy.copy(decoded), copy.deepcopy(decoded), pickle.loads(pickle.dumps(decoded))):
        assert clone == decoded == tensor(shard((0, 0)))
        again = clone.shards[0].model_copy(update={"device_id": 1})
        assert again.device_id == 1 and decoded.shards[0].device_id == 0
    assert decoded.shards[0].model_fields_set == set(PublishedShard.model_fields)
