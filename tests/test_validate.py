"""The rule engine: the fast reads and the exact listing are one generator and agree; document order.

The readers stop at the first violation of ``iter_violations`` and fill the models in the
same pass; ``violations`` drains it. These tests hold the two to each other on every
golden vector and on thousands of mutated documents, and hold the models the fast pass
fills to what pydantic's own validation builds from the same document.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _profiles import examples
from _support import at_every_version, blob_of, load_vectors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refitwire import (
    InvalidBlob,
    PublishedTensor,
    decode_shard_table,
    released_versions,
    to_decoded,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)
from refitwire._validate import is_valid, iter_violations, parse, violations
from strategies import payloads

VECTORS = load_vectors()
KINDS = ("rendezvous", "shard-table")


def fast_read(blob: bytes, kind: str, version: str) -> list[PublishedTensor]:
    if kind == "shard-table":
        return decode_shard_table(blob, spec_version=version)
    return list(unwrap_rendezvous_blob(blob, spec_version=version).tensors)


def assert_agree(blob: bytes, kind: str, version: str) -> None:
    """The fast read accepts exactly when the exact listing is empty, and raises exactly that listing."""
    try:
        document = parse(blob, registry=wire.default_registry())
    except InvalidBlob as exc:
        with pytest.raises(InvalidBlob) as caught:
            fast_read(blob, kind, version)
        assert caught.value.violations == exc.violations
        return
    exact = violations(document, kind, version)
    assert is_valid(document, kind, version, wire.default_registry()) is (not exact)
    assert sorted(map(repr, iter_violations(document, kind, version, wire.default_registry()))) == sorted(
        map(repr, exact)
    )
    try:
        tensors = fast_read(blob, kind, version)
    except InvalidBlob as exc:
        assert exact, f"the fast read refused what the exact listing accepts: {exc}"
        assert list(exc.violations) == exact
        assert (exc.rule, exc.pointer) == (exact[0].rule, exact[0].pointer)
        return
    assert not exact, f"the fast read accepted a blob that breaks {exact[0]}"
    # The models the pass filled are the ones pydantic's validation builds from the document.
    projected = to_decoded(_payload(tensors), version)["tensors"]
    validated = [PublishedTensor.model_validate(t) for t in projected]
    assert tensors == validated
    assert projected == to_decoded(_payload(validated), version)["tensors"]


def _payload(tensors: list[PublishedTensor]) -> Any:
    from refitwire import RendezvousPayload

    return RendezvousPayload(b"", "", "", tensors)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_fast_and_exact_agree_on_every_vector(vector: dict[str, Any]) -> None:
    at_every_version(
        released_versions(), lambda version: assert_agree(blob_of(vector), vector["document"], version)
    )


# -- mutated documents --------------------------------------------------------------------------

JUNK = [
    -1, 0, 1, 3, 2**31, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 4096.0, 1.5, -0.0, 1e300,
    "", "x", "torch.bfloat16", "float32", "Z" * 3, "0" * 32, "A" * 32, None, True, False,
    [], [0], [1, 2], [0, 0, 0], [2**63], [1.0], {}, {"x": 1},
]  # fmt: skip


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*at, index))
    return found


def _junk(data: st.DataObject) -> Any:
    return json.loads(json.dumps(data.draw(st.sampled_from(JUNK), label="value")))  # a fresh copy


def _mutate(document: Any, data: st.DataObject) -> Any:
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = [p for p in _paths(document) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="at")
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(
            st.sampled_from(["replace", "replace", "replace", "delete", "add"]), label="action"
        )
        if action == "replace":
            parent[path[-1]] = _junk(data)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            member = data.draw(st.sampled_from(["x_new", "digest", "publisher_step", "name"]), label="member")
            parent[member] = _junk(data)
        else:
            parent.insert(path[-1], _junk(data))
    return document


VALID_DOCUMENTS = [
    parse(blob_of(v), registry=wire.default_registry())
    for v in VECTORS
    if all(o["valid"] for o in v["expect"].values()) and b"tensors" in blob_of(v)
]
VALID_DOCUMENTS = [d for d in VALID_DOCUMENTS if d.get("tensors")]


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(VALID_DOCUMENTS), st.sampled_from(KINDS), st.sampled_from(released_versions()), st.data()
)
def test_fast_and_exact_agree_on_mutated_vectors(
    document: dict[str, Any], kind: str, version: str, data: st.DataObject
) -> None:
    mutant = _mutate(json.loads(json.dumps(document)), data)
    assert_agree(json.dumps(mutant).encode(), kind, version)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads, st.sampled_from(KINDS), st.sampled_from(released_versions()), st.data())
def test_fast_and_exact_agree_on_mutated_writer_output(
    payload: dict[str, Any], kind: str, version: str, data: st.DataObject
) -> None:
    mutant = _mutate(json.loads(wrap_rendezvous_blob(**payload)), data)
    assert_agree(json.dumps(mutant).encode(), kind, version)


# -- document order ----------------------------------------------------------------------------


def _tensor(full_shape: list[Any], **shard: Any) -> dict[str, Any]:
    base = {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0], "shape": [1]}
    return {
        "name": "t",
        "dtype": "int8",
        "elsize": 1,
        "full_shape": full_shape,
        "shards": [{**base, **shard}],
    }


def _blob(tensors: list[Any]) -> dict[str, Any]:
    return {
        "schema": "mx.reshard.shard_table.v1",
        "agent_name": "a",
        "agent_meta_b64": "",
        "tensors": tensors,
    }


def test_array_items_are_in_index_order_not_pointer_string_order() -> None:
    tensors = [_tensor([1]) for _ in range(11)]
    tensors[10]["shards"][0]["shape"] = [2]  # BOX_IN_BOUNDS at /tensors/10/...
    tensors[2]["shards"][0]["shape"] = [2]
    found = violations(_blob(tensors), "rendezvous", released_versions()[-1])
    assert [v.pointer for v in found] == ["/tensors/2/shards/0/shape/0", "/tensors/10/shards/0/shape/0"]
    tensors[10]["elsize"] = -1  # the same for the schema's violations
    tensors[2]["elsize"] = -1
    found = violations(_blob(tensors), "rendezvous", released_versions()[-1])
    assert [v.pointer for v in found] == ["/tensors/2/elsize", "/tensors/10/elsize"]


def test_members_are_in_the_order_the_blob_writes_them() -> None:
    shard = {"shape": [-1], "agent_name": "a", "device_id": 0, "shard_offset": [0], "addr": -1}
    blob = json.dumps(_blob([{**_tensor([1]), "shards": [shard]}])).encode()
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(blob)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("SIZE_RANGE", "/tensors/0/shards/0/shape/0"),  # "shape" is written before "addr"
        ("ADDR_RANGE", "/tensors/0/shards/0/addr"),
    ]
    assert caught.value.rule == "SIZE_RANGE"


def test_a_value_comes_before_what_is_inside_it_and_ties_go_by_rule() -> None:
    tensor = {**_tensor([4]), "dtype": "float32", "elsize": 2.0}
    tensor["shards"][0].update(shard_offset=[0, 0], shape=[9])  # RANK_AGREEMENT at the shard
    found = violations(_blob([tensor]), "rendezvous", released_versions()[-1])
    assert [(v.rule, v.pointer) for v in found] == [
        ("ELSIZE_DTYPE", "/tensors/0/elsize"),  # one value, two rules: by rule ID
        ("INTEGER_LITERAL", "/tensors/0/elsize"),
        ("RANK_AGREEMENT", "/tensors/0/shards/0"),
    ]


def test_a_foreign_document_is_named_first_and_missing_members_follow_the_schema() -> None:
    document = {"tensors": [], "schema": "other"}
    found = violations(document, "rendezvous", released_versions()[-1])
    assert (found[0].rule, found[0].pointer) == ("SCHEMA_ID", "/schema")
    assert [v.detail for v in found if v.rule == "REQUIRED"] == [
        '"agent_name" is a required property',
        '"agent_meta_b64" is a required property',
    ]


# -- the compiled-schema fast path ----------------------------------------------------------------


def test_the_fast_path_takes_what_the_writer_writes_and_defers_the_rest() -> None:
    from refitwire._validate import fast_read

    shard = {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0], "shape": [1]}
    document = _blob([{**_tensor([1]), "shards": [shard]}])
    blob = json.dumps(document).encode()
    for version in released_versions():
        assert (
            fast_read(blob, "rendezvous", version, build=True, registry=wire.default_registry()) is not None
        )  # the agreement tests bite
    deferred = [
        json.dumps({**document, "x_unknown": 1}).encode(),  # unknown members: the exact path ignores them
        json.dumps({**document, "agent_name": "é"}, ensure_ascii=False).encode(),  # not ASCII
        json.dumps({**document, "schema": "other"}).encode(),
        blob.replace(b'"addr": 0', b'"addr": 18446744073709551616'),  # past what msgspec bounds
        # ... and with no bytes, so that no table rule (ADDR_SPAN) fires: the residual bound alone refuses it
        blob.replace(b'"addr": 0', b'"addr": 18446744073709551616').replace(b'"shape": [1]', b'"shape": [0]'),
        blob.replace(b'"addr": 0', b'"addr": 0.0'),
        blob.replace(b'"shape": [1]', b'"shape": [2]'),  # a table rule
    ]
    for other in deferred:
        assert (
            fast_read(
                other, "rendezvous", released_versions()[-1], build=True, registry=wire.default_registry()
            )
            is None
        ), other
    assert unwrap_rendezvous_blob(deferred[0]).tensors == unwrap_rendezvous_blob(blob).tensors


def test_the_compiler_refuses_a_keyword_it_does_not_translate() -> None:
    from refitwire import schema_document
    from refitwire._typed import _Compiled, _Unsupported
    from refitwire.wire import resolve_refs

    root = resolve_refs(schema_document("rendezvous", released_versions()[-1]))
    _Compiled(root, root)
    root["properties"]["agent_name"]["minLength"] = 1
    with pytest.raises(_Unsupported):
        _Compiled(root, root)


def test_a_writer_that_leaves_the_endpoint_out_is_told_so_not_that_it_wrote_null() -> None:
    """WRITE_ENDPOINT: a null endpoint is named at the member, one left out at its object (as
    REQUIRED names a missing member), so neither message says what the writer did not do."""
    from refitwire._validate import writer_violations

    document = json.loads(wrap_rendezvous_blob(b"meta", "a", "", []))
    del document["metadata_endpoint"]
    (left_out,) = writer_violations(document, "1.2.0", registry=wire.default_registry())
    assert (left_out.rule, left_out.pointer, left_out.value) == ("WRITE_ENDPOINT", "", document)
    assert "'metadata_endpoint' left out" in left_out.detail
    document["metadata_endpoint"] = None
    (null,) = writer_violations(document, "1.2.0", registry=wire.default_registry())
    assert (null.rule, null.pointer, null.value) == ("WRITE_ENDPOINT", "/metadata_endpoint", None)
