"""The frozen generations (compat/generations) against every golden vector, over the protocol.

A generation of version G reads as a G reader, so it is held to ``expect[G]``; as a writer
it must produce the exact bytes of every vector that a G writer writes. One process per
generation serves the whole module. ``lock.json`` pins each released file by sha256.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import ProtocolClient, blob_of, load_vectors

GENERATIONS = Path(__file__).resolve().parent.parent / "compat" / "generations"
LOCK = json.loads((GENERATIONS / "lock.json").read_text(encoding="utf-8"))["generations"]
VERSIONS = [g["spec_version"] for g in LOCK]
VECTORS = load_vectors()


@pytest.fixture(scope="module")
def testees() -> Iterator[dict[str, ProtocolClient]]:
    started = {
        g["spec_version"]: ProtocolClient([sys.executable, str(GENERATIONS / g["path"])]) for g in LOCK
    }
    yield started
    for testee in started.values():
        assert testee.stop() == 0


def check_read(testee: ProtocolClient, vector: dict[str, Any], version: str) -> None:
    expected = vector["expect"][version]
    answer = testee.read(blob_of(vector), vector["document"])
    if expected["valid"]:
        assert answer.get("payload") == expected["decoded"], answer
    else:
        assert answer.get("rejected") is True, answer
        assert (answer.get("rule"), answer.get("pointer")) == (expected["rule"], expected["pointer"]), answer


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
READS = [(v, g) for g in VERSIONS for v in VECTORS]
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", [])]


@pytest.mark.parametrize(("vector", "version"), READS, ids=[f"{v['id']}@{g}" for v, g in READS])
def test_reader(testees: dict[str, ProtocolClient], vector: dict[str, Any], version: str) -> None:
    check_read(testees[version], vector, version)


@pytest.mark.parametrize(
    ("vector", "writer"), WRITES, ids=[f"{v['id']}@{w['spec_version']}" for v, w in WRITES]
)
def test_writer_bytes(
    testees: dict[str, ProtocolClient], vector: dict[str, Any], writer: dict[str, Any]
) -> None:
    assert testees[writer["spec_version"]].write(writer["payload"]) == blob_of(vector)


@pytest.mark.parametrize("version", VERSIONS)
def test_handshake(testees: dict[str, ProtocolClient], version: str) -> None:
    assert testees[version].hello == {
        "implementation": {"name": "refitwire-generation", "version": version, "language": "python"},
        "spec_version": version,
        "roles": ["reader", "writer"],
    }


def test_lock_pins_every_generation() -> None:
    on_disk = sorted(p.name for p in GENERATIONS.glob("gen_*.py"))
    assert sorted(g["path"] for g in LOCK) == on_disk
    assert sorted(VERSIONS, key=lambda v: tuple(map(int, v.split(".")))) == VERSIONS
    for g in LOCK:
        digest = hashlib.sha256((GENERATIONS / g["path"]).read_bytes()).hexdigest()
        assert digest == g["sha256"], f"{g['path']} changed: a released generation is never edited"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("blob", "expected"), [e[1:] for e in EDGES], ids=[e[0] for e in EDGES])
def test_edge_cases(testees: dict[str, ProtocolClient], version: str, blob: bytes, expected: Any) -> None:
    answer = testees[version].read(blob)
    if expected is None:
        assert "payload" in answer, answer
    else:
        assert (answer.get("rule"), answer.get("pointer")) == expected, answer


@pytest.mark.parametrize("version", VERSIONS)
def test_blob_size_is_checked_before_parsing(testees: dict[str, ProtocolClient], version: str) -> None:
    answer = testees[version].read(b" " * (64 * 1024 * 1024 + 1))
    assert (answer.get("rule"), answer.get("pointer")) == ("BLOB_SIZE", ""), answer


@pytest.mark.parametrize("version", VERSIONS)
def test_bad_requests_are_answered_and_survived(testees: dict[str, ProtocolClient], version: str) -> None:
    testee = testees[version]
    assert testee.send_raw(b"not json")["errored"] is True
    assert testee.send({"cmd": "frobnicate"})["skipped"] is True
    assert testee.send({"cmd": "write", "payload": {"agent_name": "a"}})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "%%%"})["errored"] is True
    assert testee.send({"cmd": "read", "blob_b64": "e30=", "document": "bogus"})["errored"] is True
    assert testee.read(b"{}")["rule"] == "REQUIRED"  # still serving


def test_writer_refuses_an_invalid_payload(testees: dict[str, ProtocolClient]) -> None:
    (vector,) = [v for v in VECTORS if v["id"] == "v-fa23880b9f23"]
    payload = json.loads(json.dumps(vector["written_by"][0]["payload"]))
    payload["tensors"][0]["elsize"] = 4  # torch.bfloat16 elements are 2 bytes (ELSIZE_DTYPE)
    for testee in testees.values():
        answer = testee.send({"cmd": "write", "payload": payload})
        assert answer.get("errored") is True and "ELSIZE_DTYPE" in answer["message"], answer
