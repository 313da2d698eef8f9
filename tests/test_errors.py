"""Bad input of any kind gives the one error type, with rule, pointer and a short message."""

from __future__ import annotations

import contextlib
import copy
import json
import pickle

import pydantic
import pytest
from _profiles import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from refitwire import (
    InvalidBlob,
    PublishedShard,
    PublishedTensor,
    decode_shard_table,
    encode_shard_table,
    from_decoded,
    merge_shard_tables,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)
from refitwire._spec import blob_limit
from strategies import payloads


def test_the_message_leads_with_the_value_and_ends_with_the_rule() -> None:
    blob = b'{"schema": "mx.reshard.shard_table.v2", "agent_name": "a", "agent_meta_b64": "", "tensors": []}'
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(blob)
    assert str(caught.value) == (
        '"mx.reshard.shard_table.v2" at /schema: "mx.reshard.shard_table.v1" was expected [SCHEMA_ID]'
    )
    assert isinstance(caught.value, ValueError)
    assert (caught.value.rule, caught.value.pointer) == ("SCHEMA_ID", "/schema")


def test_all_violations_are_kept_in_document_order() -> None:
    doc = {"schema": "mx.reshard.shard_table.v1", "agent_name": "a", "agent_meta_b64": "", "tensors": [
        {"name": "t", "dtype": "int8", "elsize": 1, "full_shape": [2], "shards": [
            {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [1], "shape": [2]},
            {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0, 0], "shape": [1]},
        ]}]}  # fmt: skip
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(json.dumps(doc).encode())
    assert [v.rule for v in caught.value.violations] == ["BOX_IN_BOUNDS", "RANK_AGREEMENT"]
    assert str(caught.value).endswith("[BOX_IN_BOUNDS] (and 1 more)")


def test_a_blob_over_the_size_limit_is_refused_before_parsing() -> None:
    with pytest.raises(InvalidBlob, match=r"BLOB_SIZE"):
        unwrap_rendezvous_blob(b" " * (blob_limit(wire.default_registry()) + 1))


@pytest.mark.parametrize("blob", ["not bytes", None, 12, ["a"]])
def test_a_blob_that_is_not_bytes(blob: object) -> None:
    with pytest.raises(InvalidBlob, match=r"\[TYPE\]"):
        unwrap_rendezvous_blob(blob)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "blob",
    [b"", b"{", b"null", b"0", b'{"schema": null}', b"\x00", b"\xef\xbb\xbf{}", b'{"tensors": [1]}', b"[" * 100_000,
     b'{"schema": "mx.reshard.shard_table.v1", "agent_name": "a", "agent_meta_b64": "", "tensors": [[]]}',
     b'{"schema": "mx.reshard.shard_table.v1", "agent_name": "a", "agent_meta_b64": "", "tensors": [{"shards": null}]}'],
)  # fmt: skip
def test_hostile_shapes_only_raise_invalid_blob(blob: bytes) -> None:
    for read in (unwrap_rendezvous_blob, decode_shard_table):
        with pytest.raises(InvalidBlob):
            read(blob)


@settings(max_examples=examples(300))
@given(payload=payloads, data=st.data())
def test_mutated_blobs_are_read_or_refused_with_invalid_blob(payload: dict, data: st.DataObject) -> None:  # type: ignore[type-arg]
    blob = bytearray(wrap_rendezvous_blob(**payload))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(blob) - 1))
        blob[at : at + 1] = data.draw(
            st.sampled_from([b"", b"0", b"-", b"[", b"}", b'"', b"\xff", b"1e999", b"null"])
        )
    with contextlib.suppress(InvalidBlob):  # any other exception fails the test
        unwrap_rendezvous_blob(bytes(blob))


def test_the_writer_refuses_to_write_an_invalid_blob() -> None:
    shard = PublishedShard(agent_name="a", device_id=0, addr=0, shard_offset=(6, 0), shape=(4, 4))
    tensor = PublishedTensor(name="w", dtype="torch.float32", elsize=4, full_shape=(8, 4), shards=[shard])
    with pytest.raises(InvalidBlob, match=r"BOX_IN_BOUNDS"):
        wrap_rendezvous_blob(b"", "a", "", [tensor])
    with pytest.raises(InvalidBlob) as caught:
        wrap_rendezvous_blob(b"", "a", "", [], -3)
    assert (caught.value.rule, caught.value.pointer) == ("STEP_RANGE", "/publisher_step")
    with pytest.raises(InvalidBlob) as caught:
        wrap_rendezvous_blob(b"", "a", "", [], True)  # type: ignore[arg-type]  # not silently written as 1
    assert (caught.value.rule, caught.value.pointer) == ("TYPE", "/publisher_step")


def test_a_mapping_where_a_model_belongs_is_converted_or_refused_with_invalid_blob() -> None:
    shard = {"agent_name": "a", "device_id": 0, "addr": 64, "shard_offset": [0, 0], "shape": [4, 4]}
    entry = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [8, 4], "shards": [shard]}
    model = PublishedTensor.model_validate(entry)
    assert wrap_rendezvous_blob(b"", "a", "", [entry]) == wrap_rendezvous_blob(b"", "a", "", [model])  # type: ignore[list-item]
    bad = {**entry, "shards": [{**shard, "addr": -1}]}
    with pytest.raises(InvalidBlob) as caught:  # never pydantic's ValidationError
        wrap_rendezvous_blob(b"", "a", "", [model, bad])  # type: ignore[list-item]
    assert (caught.value.rule, caught.value.pointer) == ("ADDR_RANGE", "/tensors/1/shards/0/addr")
    with pytest.raises(InvalidBlob) as caught:
        encode_shard_table([{**entry, "elsize": "4"}])  # type: ignore[list-item]
    assert (caught.value.rule, caught.value.pointer) == ("TYPE", "/tensors/0/elsize")
    with pytest.raises(InvalidBlob) as caught:
        encode_shard_table(["w"])  # type: ignore[list-item]
    assert (caught.value.rule, caught.value.pointer) == ("TYPE", "/tensors/0")


_SHARD = {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": (0, 0), "shape": (4, 4)}
_TENSOR = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": (8, 4)}


@pytest.mark.parametrize(
    ("build", "rule", "pointer"),
    [(lambda: PublishedShard(**{**_SHARD, "device_id": -1}), "DEVICE_ID_RANGE", "/device_id"),
     (lambda: PublishedShard(**{**_SHARD, "addr": "0"}), "TYPE", "/addr"),
     (lambda: PublishedShard(**{**_SHARD, "addr": 64.0}), "INTEGER_LITERAL", "/addr"),
     (lambda: PublishedShard(**_SHARD, digest="ABC"), "DIGEST_FORMAT", "/digest"),
     (lambda: PublishedShard(**_SHARD, numa_node=1), "WRITE_KNOWN_MEMBERS", "/numa_node"),
     (lambda: PublishedShard(**{k: v for k, v in _SHARD.items() if k != "addr"}), "REQUIRED", ""),
     (lambda: PublishedTensor(**_TENSOR, shards=[_SHARD, {**_SHARD, "addr": -1}]), "ADDR_RANGE", "/shards/1/addr"),
     (lambda: PublishedTensor.model_validate({**_TENSOR, "shards": [{**_SHARD, "shape": [4, "4"]}]}), "TYPE", "/shards/0/shape/1"),
     (lambda: PublishedShard.model_validate_json(b'{"agent_name": "a"'), "JSON", "")],
    ids=["range", "type", "integer-literal", "pattern", "unknown-member", "missing", "nested", "model_validate", "json"],
)  # fmt: skip
def test_a_model_that_cannot_be_built_raises_invalid_blob_pointing_into_it(
    build: object, rule: str, pointer: str
) -> None:
    """The constructor and model_validate speak as the reader does: a rule ID and a pointer,
    relative to the object being built; never pydantic's ValidationError, its text or its link."""
    with pytest.raises(ValueError) as caught:  # what a caller catching ValueError catches
        build()  # type: ignore[operator]
    error = caught.value
    assert type(error) is InvalidBlob and not isinstance(error, pydantic.ValidationError)
    assert (error.rule, error.pointer) == (rule, pointer)
    assert not str(error).startswith(("'", "b'")), str(error)  # the value as JSON, not as a repr
    assert str(error).endswith(f"[{rule}]") and "pydantic" not in str(error)
    assert error.__cause__ is None and error.__suppress_context__  # no pydantic traceback under it


def test_a_missing_member_is_named_and_every_problem_is_kept() -> None:
    with pytest.raises(InvalidBlob) as caught:
        PublishedShard(agent_name="a", device_id=-1, shard_offset=(0,), shape=(1,), numa_node=1)
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("DEVICE_ID_RANGE", "/device_id"), ("REQUIRED", ""), ("WRITE_KNOWN_MEMBERS", "/numa_node"),
    ]  # fmt: skip
    assert caught.value.violations[1].detail == '"addr" is a required property'


@pytest.mark.parametrize(
    ("value", "shown"),
    [("ABC", '"ABC"'), (None, "null"), (True, "true"), ((1, 2), "[1, 2]"), ({"a": (1,)}, '{"a": [1]}'),
     (b"\xef\xbb\xbf", '"\\ufeff"'), (b"\xff", '"\\\\xff"'), (float("nan"), "NaN"), (-float("inf"), "-Infinity"),
     ('é"\n', '"é\\"\\n"'), ("x" * 100, '"' + "x" * 56 + "..."), (list(range(100)), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16...")],
)  # fmt: skip
def test_the_value_in_a_message_is_shown_as_json(value: object, shown: str) -> None:
    """JSON, as the blob has it (never Python's repr: no 'ABC', None, True, b'...'); what does not
    print is escaped; a long value is cut to 60 characters."""
    assert str(InvalidBlob.single("TYPE", "/a", value, "why")) == f"{shown} at /a: why [TYPE]"


@pytest.mark.parametrize(
    ("blob", "rule", "where"),
    [(b'{"agent_name": "a"', "JSON", "unexpected end of data, at byte 18 (line 1, column 19)"),
     # the bytes of "éé" count four, the characters two (orjson's own position is 26)
     (b'{\n  "agent_name": "\xc3\xa9\xc3\xa9",\n  x}', "JSON", "at byte 28 (line 3, column 3)"),
     (b'{\n  "agent_name": "\xc3\xa9\xff"}', "UTF8", "(invalid start byte), at byte 21 (line 2, column 19)"),
     (b'{"agent_name": "\xc3', "UTF8", "(unexpected end of data), at byte 16 (line 1, column 17)"),
     (b"", "JSON", "at byte 0 (line 1, column 1)"),
     (b"\xef\xbb\xbf{}", "UTF8", "BOM, at byte 0 (line 1, column 1)")],
    ids=["truncated", "after-multibyte", "bad-byte", "truncated-character", "empty", "bom"],
)  # fmt: skip
def test_a_syntax_error_names_its_byte_offset_line_and_column(blob: bytes, rule: str, where: str) -> None:
    for read in (unwrap_rendezvous_blob, decode_shard_table):
        with pytest.raises(InvalidBlob) as caught:
            read(blob)
        assert (caught.value.rule, caught.value.pointer) == (rule, "")
        assert caught.value.violations[0].detail.endswith(where), caught.value.violations[0].detail


def test_merge_refuses_inconsistent_geometry() -> None:
    def table(full_shape: tuple[int, ...]) -> list[PublishedTensor]:
        return [PublishedTensor(name="w", dtype="torch.float32", elsize=4, full_shape=full_shape, shards=[])]

    with pytest.raises(InvalidBlob, match=r"MERGE_CONSISTENT"):
        merge_shard_tables([table((8, 4)), table((8, 5))])


def test_a_malformed_decoded_payload_is_invalid_blob_not_key_error() -> None:
    with pytest.raises(InvalidBlob, match="DECODED_FORM"):
        from_decoded({"agent_name": "a"})


def test_a_bad_decoded_tensor_is_named_with_its_index() -> None:
    shard = {"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0], "shape": [1]}
    good = {"name": "t", "dtype": "int8", "elsize": 1, "full_shape": [1], "shards": [shard]}
    bad = {**good, "shards": [shard, {**shard, "addr": "0"}]}
    with pytest.raises(InvalidBlob) as caught:
        from_decoded({"agent_name": "a", "agent_meta_b64": "", "tensors": [good, bad]})
    assert (caught.value.rule, caught.value.pointer) == ("TYPE", "/tensors/1/shards/1/addr")


@pytest.mark.parametrize(
    ("encoded", "rule"),
    [("bWV0YR==", "AGENT_META_BASE64"), ("bWV0YQ", "AGENT_META_BASE64"), ("bWV0*YQ==", "AGENT_META_BASE64"),
     (None, "TYPE")],  # SPEC 2.7: a value of the wrong JSON type is TYPE before its own rule
)  # fmt: skip
def test_decoded_metadata_that_is_not_canonical_base64_is_refused_not_reencoded(
    encoded: object, rule: str
) -> None:
    """``bWV0YR==`` decodes (its pad bits are not zero) but would be written as ``bWV0YQ==``:
    the blob would not carry the payload, so the writer refuses it like a reader would."""
    with pytest.raises(InvalidBlob) as caught:
        from_decoded({"agent_name": "a", "agent_meta_b64": encoded, "tensors": []})
    assert (caught.value.rule, caught.value.pointer) == (rule, "/agent_meta_b64")
    assert (
        from_decoded({"agent_name": "a", "agent_meta_b64": "bWV0YQ==", "tensors": []}).agent_metadata
        == b"meta"
    )


def _error_kinds() -> list[BaseException]:
    from refitwire.compat.upstream.envs import EnvBuildError
    from refitwire.gate._errors import GateError
    from refitwire.refit._errors import DiscoveryTimeout, RefitError, TableRejected, TransferFailed

    try:
        unwrap_rendezvous_blob(b'{"schema": 1, "tensors": [{}]}')
    except InvalidBlob as exc:
        read_error = exc
    return [
        read_error,
        InvalidBlob.single("BOX_IN_BOUNDS", "/tensors/0/shards/0/shape/1", 9, "too far"),
        RefitError("plain"),
        TableRejected("SCHEMA_ID", "rank-0", "bad [SCHEMA_ID]"),
        DiscoveryTimeout(2, 1, 1, 0, 0.5, "DirectoryStore('rendezvous')"),
        TransferFailed(["agent-1"], "peer gone"),
        GateError("HEAD:schema/x.json", "not JSON"),
        EnvBuildError("0.7.0", "pip install", "exit 1", None),
    ]


@pytest.mark.parametrize("error", _error_kinds(), ids=lambda e: type(e).__name__)
def test_every_error_survives_pickle_and_copy(error: BaseException) -> None:
    """A receiver that runs discovery in a worker process gets the whole error back."""
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is type(error) and str(clone) == str(error)
        assert vars(clone) == vars(error)


_BUILT_SHARD = {**_SHARD, "addr": 4096}


@pytest.mark.parametrize(
    ("change", "pointer", "value"),
    [(lambda m: setattr(m, "addr", 5), "/addr", 5),
     (lambda m: setattr(m, "numa_node", 1), "/numa_node", 1),  # not a field: still the model's refusal
     (lambda m: delattr(m, "digest"), "/digest", None)],
    ids=["assign", "assign-unknown", "delete"],
)  # fmt: skip
def test_changing_a_frozen_model_raises_the_librarys_error(
    change: object, pointer: str, value: object
) -> None:
    """pydantic refuses it with its ValidationError ("Instance is frozen", a link to its docs);
    the library says it as FrozenModel, an InvalidBlob naming the field, with nothing of pydantic."""
    from refitwire import FrozenModel

    shard = PublishedShard(**_BUILT_SHARD)
    tensor = PublishedTensor(**_TENSOR, shards=[shard])
    for model in (shard, tensor):
        with pytest.raises(InvalidBlob) as caught:
            change(model)  # type: ignore[operator]
        error = caught.value
        assert type(error) is FrozenModel and not isinstance(error, pydantic.ValidationError)
        assert (error.rule, error.pointer, error.value) == ("FROZEN", pointer, value)
        assert str(error).endswith("[FROZEN]") and "pydantic" not in str(error).lower()
        assert error.__cause__ is None
    assert shard == PublishedShard(**_BUILT_SHARD)  # unchanged


def test_a_copy_with_an_update_is_checked_as_the_constructor_checks() -> None:
    """pydantic's model_copy(update=...) takes any value unchecked: a model the constructor
    refuses, which only the writer would have noticed."""
    shard = PublishedShard(**_BUILT_SHARD)
    assert shard.model_copy(update={"addr": 8192}).addr == 8192
    with pytest.raises(InvalidBlob) as caught:
        shard.model_copy(update={"addr": -1})
    assert (caught.value.rule, caught.value.pointer) == ("ADDR_RANGE", "/addr")
    tensor = PublishedTensor(**_TENSOR, shards=[shard])
    with pytest.raises(InvalidBlob) as caught:
        tensor.model_copy(update={"shards": [shard, {**_BUILT_SHARD, "device_id": -1}]})
    assert (caught.value.rule, caught.value.pointer) == ("DEVICE_ID_RANGE", "/shards/1/device_id")


#: Where the libraries the reference is built on raise from: none of their errors may reach a caller.
_FOREIGN = (
    "pydantic",
    "pydantic_core",
    "jsonschema",
    "jsonschema_rs",
    "orjson",
    "msgspec",
    "referencing",
    "json",
)


def _public_callables() -> list[tuple[str, object]]:
    """Every callable of refitwire.__all__ a caller hands data to: the functions, the model
    classes and their model_validate* methods (the error classes and records are left out)."""
    import inspect

    import refitwire

    found: list[tuple[str, object]] = []
    for name in refitwire.__all__:
        obj = getattr(refitwire, name)
        if inspect.isclass(obj) and issubclass(obj, pydantic.BaseModel):
            found += [(name, obj)] + [(f"{name}.{m}", getattr(obj, m)) for m in
                                      ("model_validate", "model_validate_json", "model_validate_strings")]  # fmt: skip
        elif inspect.isfunction(obj):
            found.append((name, obj))
    return found


_hostile = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.parametrize(("name", "call"), _public_callables(), ids=lambda v: v if isinstance(v, str) else "")
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_no_error_of_the_libraries_underneath_escapes_the_public_api(
    name: str, call: object, data: st.DataObject
) -> None:
    """The library error test: every public callable, given hostile values for its parameters,
    returns or raises an error of its own (InvalidBlob, or Python's own for a wrong call),
    never one of pydantic, jsonschema, orjson or msgspec (a new leak fails here)."""
    import inspect

    parameters = inspect.signature(call).parameters.values()  # type: ignore[arg-type]
    wanted = [
        p
        for p in parameters
        if p.default is p.empty and p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL
    ]
    values = {p.name: data.draw(_hostile, label=p.name) for p in wanted}
    positional = [values.pop(p.name) for p in wanted if p.kind is p.POSITIONAL_ONLY]
    try:
        call(*positional, **values)  # type: ignore[operator]
    except Exception as exc:  # which error it is, is the test
        home = type(exc).__module__.split(".")[0]
        assert home not in _FOREIGN, f"{name} let {type(exc).__module__}.{type(exc).__name__} escape: {exc}"
        assert "pydantic" not in str(exc).lower(), f"{name}: {exc}"
