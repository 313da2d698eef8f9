"""The JavaScript example testee (compat/testees/js) against every golden vector, over the protocol.

It implements spec 1.2.0, so it is held to ``expect["1.2.0"]`` as a reader and to every
``written_by`` entry as a writer. One node process serves the whole module. The hazard it
exists to show is integers past 2^53 (``JSON.parse`` rounds them); a dedicated test sends
addresses that no double can hold through both directions.
"""

from __future__ import annotations

import base64
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import blob_of, load_vectors

TESTEE = Path(__file__).resolve().parent.parent / "compat" / "testees" / "js" / "testee.js"
NODE = shutil.which("node")
VERSION = "1.2.0"
VECTORS = load_vectors()
TIMEOUT = 20.0

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Node.js >= 18) is not on PATH")


class Client:
    """One testee process: handshake, then one request and one answer at a time."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.seq = 0
        self.hello = self.send({"cmd": "start", "protocol": 1}, numbered=False)

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, request: dict[str, Any], *, numbered: bool = True) -> dict[str, Any]:
        if numbered:
            self.seq += 1
            request = {**request, "seq": self.seq}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request).encode("ascii") + b"\n")
        self.proc.stdin.flush()
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no answer within {TIMEOUT}s to {request['cmd']}")
        assert line, f"testee exited (status {self.proc.poll()}) on {request['cmd']}"
        answer: dict[str, Any] = json.loads(line)
        if numbered:
            assert answer.get("seq") == self.seq, answer
        return answer

    def send_raw(self, line: bytes) -> dict[str, Any]:
        """A request line as given (possibly not JSON); the answer carries ``seq`` null."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.lines.get(timeout=TIMEOUT))
        assert answer.get("seq") is None, answer
        return answer

    def read(self, blob: bytes, document: str = "rendezvous") -> dict[str, Any]:
        request = {"cmd": "read", "blob_b64": base64.b64encode(blob).decode("ascii")}
        if document != "rendezvous":
            request["document"] = document  # extension: see IMPLEMENTERS.md
        return self.send(request)

    def write(self, payload: dict[str, Any]) -> bytes:
        answer = self.send({"cmd": "write", "payload": payload})
        assert "blob_b64" in answer, answer
        return base64.b64decode(answer["blob_b64"])

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"cmd": "stop"}\n')
        self.proc.stdin.close()
        status = self.proc.wait(timeout=TIMEOUT)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        return status


@pytest.fixture(scope="module")
def testee() -> Iterator[Client]:
    assert NODE is not None
    client = Client([NODE, str(TESTEE)])
    yield client
    assert client.stop() == 0


BASE = (
    '{"schema": "mx.reshard.shard_table.v1", "agent_name": "a", "metadata_endpoint": "h:1", '
    '"agent_meta_b64": "", "tensors": [{"name": "w0", "dtype": "DTYPE", "elsize": 2, "full_shape": [8, 4], '
    '"shards": [{"agent_name": "a", "device_id": 0, "addr": ADDR, "shard_offset": [0, 0], "shape": [4, 4]}]}]XTRA}'
)


def edge(dtype: str = "torch.bfloat16", addr: str = "4096", xtra: str = "") -> bytes:
    return BASE.replace("DTYPE", dtype).replace("ADDR", addr).replace("XTRA", xtra).encode()


S = "/tensors/0/shards/0"
# Edge cases beyond the vectors (the reference reader agrees on each): rule and pointer, or None.
EDGES = [
    ("an exponent where an integer belongs", edge(addr="4.096e3"), ("INTEGER_LITERAL", S + "/addr")),
    ("a fraction where an integer belongs", edge(addr="4096.5"), ("TYPE", S + "/addr")),
    ("a number that overflows a double", edge(xtra=', "x": 1e400'), ("JSON", "")),
    ("an integer that overflows a double", edge(xtra=', "x": ' + "9" * 400), ("JSON", "")),
    ("nesting 1024 deep", edge(xtra=', "x": ' + "[" * 1023 + "]" * 1023), None),
    ("nesting 1025 deep", edge(xtra=', "x": ' + "[" * 1024 + "]" * 1024), ("JSON", "")),
    ("a lone surrogate in a member name", edge(xtra=', "\\udc00": 1'), ("JSON", "")),
    ("a reversed surrogate pair", edge(xtra=', "x": "\\ude00\\ud83d"'), ("JSON", "")),
    ("a dtype with a trailing newline", edge(dtype="bfloat16\\n"), ("DTYPE_LABEL", "/tensors/0/dtype")),
    ("form feed is not JSON whitespace", edge() + b"\x0c", ("JSON", "")),
    ("a __proto__ member is just unknown", edge(xtra=', "__proto__": {"agent_name": 5}'), None),
    ("a shard ending exactly at 2^64", edge(addr=str(2**64 - 32)), None),
    ("a shard ending one byte past 2^64", edge(addr=str(2**64 - 31)), ("ADDR_SPAN", S + "/addr")),
]
READS = VECTORS
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", []) if w["spec_version"] == VERSION]


@pytest.mark.parametrize("vector", READS, ids=[v["id"] for v in READS])
def test_reader(testee: Client, vector: dict[str, Any]) -> None:
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
def test_writer_bytes(testee: Client, vector: dict[str, Any], writer: dict[str, Any]) -> None:
    assert testee.write(writer["payload"]) == blob_of(vector)


def test_handshake(testee: Client) -> None:
    assert testee.hello["spec_version"] == VERSION
    assert testee.hello["roles"] == ["reader", "writer"]
    assert testee.hello["implementation"]["language"] == "javascript"


BIG = [2**64 - 32, 2**53 + 1]  # neither survives a round trip through a double


def test_integers_past_2_53_round_trip_exactly(testee: Client) -> None:
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


@pytest.mark.parametrize(("blob", "expected"), [e[1:] for e in EDGES], ids=[e[0] for e in EDGES])
def test_edge_cases(testee: Client, blob: bytes, expected: Any) -> None:
    answer = testee.read(blob)
    if expected is None:
        assert "payload" in answer, answer
    else:
        assert (answer.get("rule"), answer.get("pointer")) == expected, answer


def test_blob_size_is_checked_before_parsing(testee: Client) -> None:
    answer = testee.read(b" " * (64 * 1024 * 1024 + 1))
    assert (answer.get("rule"), answer.get("pointer")) == ("BLOB_SIZE", ""), answer


def test_bad_requests_are_answered_and_survived(testee: Client) -> None:
    assert testee.send_raw(b"not json")["errored"] is True
    assert testee.send({"cmd": "frobnicate"})["skipped"] is True
    assert testee.send({"cmd": "write", "payload": {"agent_name": "a"}})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "%%%"})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "e30=", "document": "bogus"})["errored"] is True
    assert testee.read(b"{}")["rule"] == "REQUIRED"  # still serving


def test_writer_refuses_an_invalid_payload(testee: Client) -> None:
    (vector,) = [v for v in VECTORS if v["id"] == "v-fa23880b9f23"]
    payload = json.loads(json.dumps(vector["written_by"][0]["payload"]))
    payload["tensors"][0]["elsize"] = 4  # torch.bfloat16 elements are 2 bytes (ELSIZE_DTYPE)
    answer = testee.send({"cmd": "write", "payload": payload})
    assert answer.get("errored") is True and "ELSIZE_DTYPE" in answer["message"], answer
