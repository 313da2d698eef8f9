"""A member of a shape no release has: an array of objects (a level of its own) that a
candidate adds to the tensor, with keywords on the array and on its objects. With no code
edited, the library reads and writes it as models, the vector tools, the writer refusals and
the payloads cover its keywords, and a string in it with "," or ":" is written unchanged.

In-process, like ``test_payloads_carry_a_candidates_new_members``: the candidate registry is
passed explicitly and the default registry is never changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import candidate_registry
from refitwire import from_decoded, to_decoded, unwrap_rendezvous_blob, wire, wrap_rendezvous_blob
from refitwire._errors import InvalidBlob
from refitwire.compat.cases import _cases
from refitwire.compat.cases._built_cases import refusal_cases
from refitwire.compat.cases._forms import decoded_document
from refitwire.wire import Registry

SCALES = {
    "description": "Block scales of a quantised tensor.", "type": "array", "minItems": 1, "maxItems": 3,
    "x-added-in": "1.3.0",
    "items": {"type": "object", "required": ["block"], "properties": {
        "block": {"type": "integer", "minimum": 1, "maximum": 4096},
        "note": {"type": "string", "maxLength": 16}}},
}  # fmt: skip
#: and one at the top: the table's level is ``tensors``, whatever other arrays of objects there are
PEERS = {
    "description": "The publisher's peers.", "type": "array", "x-added-in": "1.3.0",
    "items": {"type": "object", "required": ["rank"], "properties": {
        "rank": {"type": "integer", "minimum": 0, "maximum": 1023}, "host": {"type": "string"}}},
}  # fmt: skip
#: an object member of the tensor with an integer inside (INTEGER_LITERAL applies at any depth)
QUANT = {"description": "Quantisation.", "type": "object", "x-added-in": "1.3.0",
         "properties": {"bits": {"type": "integer", "minimum": 1, "maximum": 16}}}  # fmt: skip
#: a tensor string whose pattern allows "," and ":" (the writer may not take it for pinned text)
LABEL = {"description": "A label.", "type": "string", "pattern": "^[ -~]{0,64}$", "x-added-in": "1.3.0"}
TENSOR = {"name": "w", "dtype": "torch.float32", "elsize": 4, "full_shape": [4],
          "shards": [{"agent_name": "a", "device_id": 0, "addr": 4096, "shard_offset": [0], "shape": [4]}]}  # fmt: skip


def _candidate(tmp: Path, scales: dict[str, Any]) -> Registry:
    def edit(document: str, schema: dict[str, Any]) -> None:
        schema["$defs"]["tensor"]["properties"].update(scales=scales, label=LABEL, quant=QUANT)
        if document == "rendezvous":  # listed before the table, which stays ``tensors``
            top = {"peers": PEERS, **schema["properties"]}
            schema["properties"].clear()
            schema["properties"].update(top)

    return candidate_registry(tmp, edit)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return _candidate(tmp_path_factory.mktemp("level"), SCALES)


@pytest.fixture(scope="module", params=["exact", "typed"])
def read_by(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The candidate as it is (its keywords of lengths take the reader's exact path), and without
    them (its blobs take the typed fast path, ``refitwire._typed``)."""
    if request.param == "exact":
        return _candidate(tmp_path_factory.mktemp("exact"), SCALES)
    plain = json.loads(json.dumps(SCALES))
    del plain["minItems"], plain["maxItems"], plain["items"]["properties"]["note"]["maxLength"]
    return _candidate(tmp_path_factory.mktemp("typed"), plain)


def _blob(registry: Registry, scales: list[dict[str, Any]] | None, version: str = "1.3.0") -> bytes:
    from refitwire._models import classes_of

    fields = {**TENSOR, "scales": scales, "label": "x,y: z", "quant": {"bits": 4}}
    tensor = classes_of(registry).tensor.model_validate(fields)
    return wrap_rendezvous_blob(
        b"m",
        "a",
        "h:1",
        [tensor],
        3,
        spec_version=version,
        registry=registry,
        peers=[{"rank": 1, "host": "h,1"}, {"rank": 2}],
    )


def test_the_library_reads_and_writes_a_new_level_as_models(read_by: Registry) -> None:
    registry = read_by
    scales = [{"block": 2, "note": 'a,b: "c"\\'}, {"block": 4}]
    blob = _blob(registry, scales)
    assert blob == json.dumps(json.loads(blob)).encode()  # json.dumps's bytes: nothing widened in a string
    assert json.loads(blob)["tensors"][0]["scales"] == scales  # absent members left out
    assert json.loads(blob)["peers"] == [{"rank": 1, "host": "h,1"}, {"rank": 2}]
    for lazy in (False, True):
        payload = unwrap_rendezvous_blob(blob, spec_version="1.3.0", lazy=lazy, registry=registry)
        read = payload.tensors[0].scales
        assert [item.block for item in read] == [2, 4] and read[0].note == scales[0]["note"]
        decoded = to_decoded(payload, "1.3.0", registry)["tensors"][0]["scales"]
        assert decoded == [{"block": 2, "note": scales[0]["note"]}, {"block": 4, "note": None}]
        assert payload.peers == [
            {"rank": 1, "host": "h,1"},
            {"rank": 2},
        ]  # as written, like any optional member
        assert to_decoded(payload, "1.3.0", registry)["peers"] == [
            {"rank": 1, "host": "h,1"},
            {"rank": 2, "host": None},
        ]
        again = from_decoded(to_decoded(payload, "1.3.0", registry), registry)
        assert wrap_rendezvous_blob(*again[:4], again.publisher_step, spec_version="1.3.0", registry=registry,
                                    **again.optional_members) == blob  # fmt: skip
        old = unwrap_rendezvous_blob(blob, spec_version="1.2.0", lazy=lazy, registry=registry)
        assert "scales" not in to_decoded(old, "1.2.0", registry)["tensors"][0]  # unknown to 1.2.0: ignored
    assert b"scales" not in _blob(registry, scales, "1.2.0")  # a 1.2.0 writer does not know it


def test_the_count_only_read_counts_the_table_not_the_level_before_it(registry: Registry) -> None:
    """The quorum read counts ``tensors``, the top's required array of objects, and carries
    ``peers``, listed before it, as the envelope's member it is (checked with the rest), on its
    own fast path: the full read it falls back on would hide a wrong count."""
    from refitwire._quorum import quorum_envelope

    blob = _blob(registry, [{"block": 2}])
    fast = quorum_envelope(blob, "1.3.0", registry)
    assert fast is not None and fast[1] == 1 and len(fast[0]["peers"]) == 2
    payload = unwrap_rendezvous_blob(blob, with_tensors=False, spec_version="1.3.0", registry=registry)
    assert (payload.entry_count(), payload.tensors) == (1, [])
    assert to_decoded(payload, "1.3.0", registry)["peers"] == [
        {"rank": 1, "host": "h,1"},
        {"rank": 2, "host": None},
    ]
    bad = blob.replace(b'"rank": 2', b'"rank": 2000')
    with pytest.raises(InvalidBlob, match="/peers/1/rank"):
        unwrap_rendezvous_blob(bad, with_tensors=False, spec_version="1.3.0", registry=registry)


def test_an_unknown_member_in_a_new_levels_object_is_ignored(read_by: Registry) -> None:
    blob = _blob(read_by, [{"block": 2}]).replace(b'"block": 2', b'"block": 2, "future": {"x": [1]}')
    for lazy in (False, True):
        payload = unwrap_rendezvous_blob(blob, spec_version="1.3.0", lazy=lazy, registry=read_by)
        assert payload.tensors[0].scales[0].block == 2  # a model, the unknown member left behind
        assert to_decoded(payload, "1.3.0", read_by)["tensors"][0]["scales"] == [{"block": 2, "note": None}]


def test_the_decoded_form_the_vectors_expect_is_the_readers(registry: Registry) -> None:
    model = registry.wire_model("rendezvous", "1.3.0")
    for scales in ([{"block": 1}], None):  # absent: null, as for any optional member (SPEC section 6)
        blob = _blob(registry, scales)
        payload = unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry)
        assert decoded_document(json.loads(blob), model) == to_decoded(payload, "1.3.0", registry)


def test_its_keywords_are_cases_for_writers_and_payloads_carry_it(registry: Registry) -> None:
    refused = {c.description: c.rule for c in refusal_cases("1.3.0", registry)}
    for description in (
        "/tensors/0/scales: 4 items, more than its maxItems 3",
        "/tensors/0/scales: 0 items, fewer than its minItems 1",
        "/tensors/0/scales/0: without its required member block",
        "/tensors/0/scales/0/block: 4097, above its maximum 4096",
        "/peers/0: without its required member rank",
    ):
        assert description in refused, sorted(d for d in refused if "scales" in d)
    assert refused["/tensors/0/scales/0: without its required member block"] == "REQUIRED"
    payloads = _cases.generated_payloads(3, 4, wire.default_registry())
    asked = [_cases.conform(p, "1.3.0", n, registry) for n, p in enumerate(payloads.values())]
    carried = [t.get("scales") for p in asked for t in p["tensors"]]
    assert None in carried and any(carried)  # written present, and absent


@pytest.mark.parametrize(
    ("written", "as_number", "pointer"),
    [
        (b'"block": 2', b'"block": 2.0', "/tensors/0/scales/0/block"),  # in a level of its own
        (b'"bits": 4', b'"bits": 4e0', "/tensors/0/quant/bits"),  # in an object member
        (b'"rank": 1', b'"rank": 1.0', "/peers/0/rank"),  # in a level at the top
    ],
)
def test_an_integer_at_any_depth_is_written_as_one(
    registry: Registry, written: bytes, as_number: bytes, pointer: str
) -> None:
    blob = _blob(registry, [{"block": 2}])
    assert blob.count(written) == 1
    for lazy in (False, True):
        with pytest.raises(InvalidBlob) as caught:
            unwrap_rendezvous_blob(
                blob.replace(written, as_number), spec_version="1.3.0", lazy=lazy, registry=registry
            )
        assert (caught.value.rule, caught.value.pointer) == ("INTEGER_LITERAL", pointer)
