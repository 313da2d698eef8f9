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
from _support import ProtocolClient, at_every_version, blob_of, load_vectors
from refitwire import released_versions

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


# The generations are frozen; a Recommended case they fail is listed, with its reason, as data.
EXPECTED = json.loads(
    (GENERATIONS.parent / "expected-failures" / "generations.json").read_text(encoding="utf-8")
)
# (vector id, version): an entry applies to the versions it lists (all when it lists none)
WRONG_REASON = {
    (e["case"].removeprefix("read:").removesuffix("#rule"), version)
    for e in EXPECTED["expected_failures"]
    for version in e.get("spec_versions") or released_versions()
}


def check_read(testee: ProtocolClient, vector: dict[str, Any], version: str) -> None:
    expected = vector["expect"][version]
    answer = testee.read(blob_of(vector), vector["document"])
    if expected["valid"]:
        assert answer.get("payload") == expected["decoded"], answer
        return
    assert answer.get("rejected") is True, answer
    named = (answer.get("rule"), answer.get("pointer"))
    if (vector["id"], version) in WRONG_REASON:  # listed: it must still fail as listed (strict)
        assert named != (expected["rule"], expected["pointer"]), f"{vector['id']} is listed but passes"
    else:
        assert named == (expected["rule"], expected["pointer"]), answer


# the writes of the versions a generation is frozen for: a candidate (a schema file not yet
# released) has none until its release freezes one; the reference writes its cases
# (tests/test_vectors.py)
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", []) if w["spec_version"] in VERSIONS]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_reader(testees: dict[str, ProtocolClient], vector: dict[str, Any]) -> None:
    at_every_version(VERSIONS, lambda version: check_read(testees[version], vector, version))


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


# Slow: each sends an 85 MB request line that a frozen generation parses whole (4-6 s apiece
# on two cores). The JavaScript example's own check stays in the quick tier.
@pytest.mark.slow
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
    (vector,) = [v for v in VECTORS if v["id"] == "v-d21e9131f84a"]
    payload = json.loads(json.dumps(vector["written_by"][0]["payload"]))
    payload["tensors"][0]["elsize"] = 4  # torch.bfloat16 elements are 2 bytes (ELSIZE_DTYPE)
    for testee in testees.values():
        answer = testee.send({"cmd": "write", "payload": payload})
        assert answer.get("errored") is True and "ELSIZE_DTYPE" in answer["message"], answer
