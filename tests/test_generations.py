"""The frozen generations (compat/generations) against every golden vector, over the protocol.

A generation of version G reads as a G reader, so it is held to ``expect[G]``; as a writer
it must produce the exact bytes of every vector that a G writer writes. One process per
generation serves the whole module. ``lock.json`` pins each released file by sha256.
"""

from __future__ import annotations

import base64
import hashlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import blob_of, load_vectors

GENERATIONS = Path(__file__).resolve().parent.parent / "compat" / "generations"
LOCK = json.loads((GENERATIONS / "lock.json").read_text(encoding="utf-8"))["generations"]
VERSIONS = [g["spec_version"] for g in LOCK]
VECTORS = load_vectors()
TIMEOUT = 20.0


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
def testees() -> Iterator[dict[str, Client]]:
    started = {g["spec_version"]: Client([sys.executable, str(GENERATIONS / g["path"])]) for g in LOCK}
    yield started
    for testee in started.values():
        assert testee.stop() == 0


def check_read(testee: Client, vector: dict[str, Any], version: str) -> None:
    expected = vector["expect"][version]
    answer = testee.read(blob_of(vector), vector["document"])
    if expected["valid"]:
        assert answer.get("payload") == expected["decoded"], answer
    else:
        assert answer.get("rejected") is True, answer
        assert (answer.get("rule"), answer.get("pointer")) == (expected["rule"], expected["pointer"]), answer


READS = [(v, g) for g in VERSIONS for v in VECTORS]
WRITES = [(v, w) for v in VECTORS for w in v.get("written_by", [])]


@pytest.mark.parametrize(("vector", "version"), READS, ids=[f"{v['id']}@{g}" for v, g in READS])
def test_reader(testees: dict[str, Client], vector: dict[str, Any], version: str) -> None:
    check_read(testees[version], vector, version)


@pytest.mark.parametrize(
    ("vector", "writer"), WRITES, ids=[f"{v['id']}@{w['spec_version']}" for v, w in WRITES]
)
def test_writer_bytes(testees: dict[str, Client], vector: dict[str, Any], writer: dict[str, Any]) -> None:
    assert testees[writer["spec_version"]].write(writer["payload"]) == blob_of(vector)


@pytest.mark.parametrize("version", VERSIONS)
def test_handshake(testees: dict[str, Client], version: str) -> None:
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
