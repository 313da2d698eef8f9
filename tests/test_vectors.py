"""The reference reader and writer against every golden vector, at every spec version."""

from __future__ import annotations

from typing import Any

import pytest
from _support import at_every_version, blob_of, load_vectors
from refitwire import (
    InvalidBlob,
    decode_shard_table,
    from_decoded,
    released_versions,
    to_decoded,
    unwrap_rendezvous_blob,
    wrap_rendezvous_blob,
)

VECTORS = load_vectors()
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", [])]


def read(vector: dict[str, Any], version: str) -> dict[str, Any]:
    blob = blob_of(vector)
    if vector["document"] == "shard-table":
        tensors = decode_shard_table(blob, spec_version=version)
        return {"tensors": to_decoded(_payload_with(tensors), version)["tensors"]}
    return to_decoded(unwrap_rendezvous_blob(blob, spec_version=version), version)


def _payload_with(tensors: list[Any]) -> Any:
    from refitwire import RendezvousPayload

    return RendezvousPayload(b"", "", "", tensors)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_reader(vector: dict[str, Any]) -> None:
    at_every_version(released_versions(), lambda version: check_read(vector, version))


def check_read(vector: dict[str, Any], version: str) -> None:
    expected = vector["expect"][version]
    if expected["valid"]:
        assert read(vector, version) == expected["decoded"]
    else:
        with pytest.raises(InvalidBlob) as caught:
            read(vector, version)
        assert caught.value.rule == expected["rule"], str(caught.value)
        assert caught.value.pointer == expected["pointer"], str(caught.value)


@pytest.mark.parametrize(
    ("vector", "writer"), WRITES, ids=[f"{v['id']}@{w['spec_version']}" for v, w in WRITES]
)
def test_writer_bytes(vector: dict[str, Any], writer: dict[str, Any]) -> None:
    payload = from_decoded(writer["payload"])
    # (every top-level member a later version added goes by name, as the vectors' builder gives it)
    blob = wrap_rendezvous_blob(*payload[:4], payload.publisher_step, spec_version=writer["spec_version"],
                                **payload.optional_members)  # fmt: skip
    assert blob == blob_of(vector)
