"""The JavaScript example testee (compat/testees/js) against every golden vector, over the protocol.

It implements spec 1.2.0, so it is held to ``expect["1.2.0"]`` as a reader and to every
``written_by`` entry as a writer. One node process serves the whole module. The hazard it
exists to show is integers past 2^53 (``JSON.parse`` rounds them); a dedicated test sends
addresses that no double can hold through both directions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import ProtocolClient, blob_of, full_payload, load_vectors, members_in_order

TESTEE = Path(__file__).resolve().parent.parent / "compat" / "testees" / "js" / "testee.js"
NODE = shutil.which("node")
VERSION = "1.2.0"
VECTORS = load_vectors()

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Node.js >= 18) is not on PATH")


@pytest.fixture(scope="module")
def testee() -> Iterator[ProtocolClient]:
    assert NODE is not None
    client = ProtocolClient([NODE, str(TESTEE)])
    yield client
    assert client.stop() == 0


READS = VECTORS
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", []) if w["spec_version"] == VERSION]


@pytest.mark.parametrize("vector", READS, ids=[v["id"] for v in READS])
def test_reader(testee: ProtocolClient, vector: dict[str, Any]) -> None:
    expected = vector["expect"][VERSION]
    answer = testee.read(blob_of(vector), vector["document"])
    if expected["valid"]:
        assert answer.get("payload") == expected["decoded"], answer
    else:
        assert answer.get("rejected") is True, answer
        assert (answer.get("rule"), answer.get("pointer")) == (expected["rule"], expected["pointer"]), answer


@pytest.mark.parametrize(
    ("vector", "writer"), WRITES, ids=[f"{v['id']}@{w['spec_version']}" for v, w in WRITES]
)
def test_writer_bytes(testee: ProtocolClient, vector: dict[str, Any], writer: dict[str, Any]) -> None:
    assert testee.write(writer["payload"]) == blob_of(vector)


def test_handshake(testee: ProtocolClient) -> None:
    assert testee.hello["spec_version"] == VERSION
    assert testee.hello["roles"] == ["reader", "writer"]
    assert testee.hello["implementation"]["language"] == "javascript"


BIG = [2**64 - 32, 2**53 + 1]  # neither survives a round trip through a double


def test_integers_past_2_53_round_trip_exactly(testee: ProtocolClient) -> None:
    assert all(int(float(addr)) != addr for addr in BIG)
    shards = [
        {"agent_name": "a", "device_id": 0, "addr": addr, "shard_offset": [0], "shape": [16], "digest": None}
        for addr in BIG
    ]
    tensor = {"name": "w", "dtype": "torch.bfloat16", "elsize": 2, "full_shape": [16], "shards": shards}
    payload = {
        "agent_name": "a",
        "metadata_endpoint": "h:1",
        "agent_meta_b64": "",
        "publisher_step": 2**63 - 1,
        "tensors": [tensor],
    }
    written = {
        "schema": "mx.reshard.shard_table.v1",
        "agent_name": "a",
        "metadata_endpoint": "h:1",
        "agent_meta_b64": "",
        "tensors": [{**tensor, "shards": [{k: v for k, v in s.items() if k != "digest"} for s in shards]}],
        "publisher_step": 2**63 - 1,
    }
    blob = testee.write(payload)
    assert blob == json.dumps(written).encode("ascii")
    assert b'"addr": 18446744073709551584,' in blob and b'"addr": 9007199254740993,' in blob
    answer = testee.read(blob)
    assert answer.get("payload") == payload, answer
    assert [s["addr"] for s in answer["payload"]["tensors"][0]["shards"]] == BIG


def test_blob_size_is_checked_before_parsing(testee: ProtocolClient) -> None:
    answer = testee.read(b" " * (64 * 1024 * 1024 + 1))
    assert (answer.get("rule"), answer.get("pointer")) == ("BLOB_SIZE", ""), answer


def test_bad_requests_are_answered_and_survived(testee: ProtocolClient) -> None:
    assert testee.send_raw(b"not json")["errored"] is True
    assert testee.send({"cmd": "frobnicate"})["skipped"] is True
    assert testee.send({"cmd": "write", "payload": {"agent_name": "a"}})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "%%%"})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "e30=", "document": "bogus"})["errored"] is True
    assert testee.read(b"{}")["rule"] == "REQUIRED"  # still serving


def test_writer_refuses_an_invalid_payload(testee: ProtocolClient) -> None:
    (vector,) = [v for v in VECTORS if v["id"] == "v-d21e9131f84a"]
    payload = json.loads(json.dumps(vector["written_by"][0]["payload"]))
    payload["tensors"][0]["elsize"] = 4  # torch.bfloat16 elements are 2 bytes (ELSIZE_DTYPE)
    answer = testee.send({"cmd": "write", "payload": payload})
    assert answer.get("errored") is True and "ELSIZE_DTYPE" in answer["message"], answer


def test_the_writer_refuses_a_payload_it_would_have_to_repair(testee: ProtocolClient) -> None:
    """Non-canonical base64 is refused, never re-encoded (WRITE_VALID), naming the rule."""
    (vector,) = [v for v in VECTORS if v["description"].startswith("every writer: one bf16 tensor")]
    payload = {**vector["written_by"][-1]["payload"], "agent_meta_b64": "YR=="}
    answer = testee.send({"cmd": "write", "payload": payload})
    assert answer.get("errored") is True and "AGENT_META_BASE64" in answer["message"], answer


def test_it_knows_every_member_of_its_version(testee: ProtocolClient) -> None:
    """The example restates the members (it is standalone): held to the wire model of its
    version, it writes each in the schema's order and reports each when it reads."""
    model, payload = full_payload(VERSION)
    written = json.loads(testee.write(payload))
    assert members_in_order(written, model)
    answer = testee.read(json.dumps(written).encode(), "rendezvous")
    assert answer.get("payload") == payload, answer


def test_blank_lines_between_requests_get_no_answer() -> None:
    """Lines of spaces, tabs or carriage returns are skipped; the next request is answered as
    the first line out (a blank line answered would shift every answer after it)."""
    assert NODE is not None
    lines = b'\n  \t\r\n{"cmd": "start", "protocol": 1}\n \n{"cmd": "digest", "seq": 1, "data_b64": "", "dtype": "uint8", "shape": [0]}\n'
    done = subprocess.run(
        [NODE, str(TESTEE)], input=lines + b'{"cmd": "stop"}\n', capture_output=True, timeout=60
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(answers) == 2, done
    assert answers[0]["spec_version"] == VERSION and answers[1]["seq"] == 1 and "digest" in answers[1]
