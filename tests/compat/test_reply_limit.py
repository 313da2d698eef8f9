"""The runner's reply-line limit is derived from SPEC's blob size limit and the decoded form, so a
valid answer is never over it: a read of the blobs whose answer grows most (the smallest shards,
each answered with a ``null`` for every optional member it leaves out; strings of two-byte
characters, answered as ``\\u`` escapes), a write answered with a blob at the limit, and a
candidate version whose new member sits on every shard, which makes the answer to the same blob
longer (a 64 MiB table's answer grew past the fixed 64 MiB limit of before, issue 46)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from refitwire import to_decoded, unwrap_rendezvous_blob, wire
from refitwire.compat import Plan, _testee, reference
from refitwire.compat._errors import ProtocolError
from refitwire.compat._testee import _reply_limit, reply_limit
from refitwire.compat.runner._run import start_all, stop_all
from refitwire.wire import blob_limit

SHARD_MEMBER = {"type": "string", "x-added-in": "1.3.0", "description": "A member on every shard."}
#: The largest ``seq`` a reply may carry: its envelope at its longest.
SEQ = 2**64


def _candidate(tmp: Path) -> wire.Registry:
    """The package's schemas with a candidate 1.3.0 that adds an optional shard member."""
    registry = wire.default_registry()
    for document in ("rendezvous", "shard-table"):
        schema = registry.load_schema(document, "1.2.0")
        schema = json.loads(json.dumps(schema).replace("1.2.0", "1.3.0"))
        schema["$defs"]["shard"]["properties"]["memory_kind"] = SHARD_MEMBER
        (tmp / document).mkdir()
        (tmp / document / "1.3.0.json").write_text(json.dumps(schema), encoding="utf-8")
    return registry.with_candidates(tmp)


def _blob(shards: int, text: str = "") -> bytes:
    """A valid blob, compact: one rank-0 tensor of ``shards`` shards of the fewest bytes, every
    optional member left out; ``text`` as its names."""
    shard = {"agent_name": text, "device_id": 0, "addr": 0, "shard_offset": [], "shape": []}
    tensor = {"name": text, "dtype": "int8", "elsize": 1, "full_shape": [], "shards": [shard] * shards}
    document = {"schema": wire.default_registry().index["wire_id"], "agent_name": text, "agent_meta_b64": "",
                "tensors": [tensor]}  # fmt: skip
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _read_reply(blob: bytes, version: str, registry: wire.Registry) -> bytes:
    """The answer to a read of ``blob`` as the upstream adapter writes it (ASCII, spaced)."""
    decoded: dict[str, Any] = to_decoded(unwrap_rendezvous_blob(blob, spec_version=version, registry=registry),
                                         version, registry)  # fmt: skip
    return json.dumps({"seq": SEQ, "payload": decoded}, ensure_ascii=True).encode() + b"\n"


BLOBS = {"smallest-shards": _blob(2000), "two-byte-characters": _blob(1, "\u00e9" * 20_000)}


@pytest.mark.parametrize("blob", BLOBS)
@pytest.mark.parametrize("version", ["1.0.0", "1.2.0", "1.3.0"])
def test_the_answer_to_a_read_is_within_the_limit_of_its_blob(
    blob: str, version: str, tmp_path: Path
) -> None:
    registry = _candidate(tmp_path)
    data = BLOBS[blob]
    reply = _read_reply(data, version, registry)
    assert len(reply) > len(data)  # what a limit of the blob's size (64 MiB for a 64 MiB blob) turned away
    assert len(reply) <= _reply_limit(registry.wire_model("rendezvous", version), len(data))


def test_the_nulls_of_a_member_on_every_shard_are_within_what_it_adds_to_the_limit(tmp_path: Path) -> None:
    """The same blob read at 1.2.0 and at a candidate adding a shard member: the answers differ by
    the member's nulls alone, which the limit's share for them must hold."""
    registry, data = _candidate(tmp_path), BLOBS["smallest-shards"]
    grown = len(_read_reply(data, "1.3.0", registry)) - len(_read_reply(data, "1.2.0", registry))
    share = _reply_limit(registry.wire_model("rendezvous", "1.3.0"), len(data)) - _reply_limit(
        registry.wire_model("rendezvous", "1.2.0"), len(data)
    )
    assert 0 < grown <= share


def test_the_answer_to_a_write_at_the_blob_limit_is_within_the_limit() -> None:
    registry = wire.default_registry()
    blob = b"x" * blob_limit(registry)
    reply = json.dumps({"seq": SEQ, "blob_b64": base64.b64encode(blob).decode()}).encode() + b"\n"
    assert len(reply) <= reply_limit(registry)


def test_a_member_on_every_shard_raises_the_limit(tmp_path: Path) -> None:
    assert reply_limit(_candidate(tmp_path)) > reply_limit(wire.default_registry())


def test_a_testee_given_no_limit_reads_with_the_packages_own() -> None:
    testee = _testee.Testee(["true"], start_timeout_s=30.0)
    with pytest.raises(ProtocolError):  # ``true`` answers no handshake
        testee.start()  # (the limit is set before it is asked)
    assert testee.max_reply == reply_limit(wire.default_registry())


def test_a_run_starts_its_testees_with_the_limit_of_its_registry(tmp_path: Path) -> None:
    registry = _candidate(tmp_path)
    plan = Plan(participants=reference(registry)[:1], registry=registry)
    started, failed = start_all(plan)
    try:
        assert started and not failed, failed
        assert [s.testee.max_reply for s in started] == [reply_limit(registry)]
    finally:
        stop_all(started)
