"""Shared helpers for the tests: loading the golden vectors, and a plain protocol client."""

from __future__ import annotations

import base64
import collections
import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from refitwire import wire
from refitwire.wire import LineProcess, LinesError, NoReply

VECTORS = Path(__file__).resolve().parent.parent / "schema" / "vectors"


def at_every_version(versions: Iterable[str], check: Callable[[str], None]) -> None:
    """``check`` at each version, failing once with every version it failed at and why.

    A golden-vector sweep is one test per vector, not per vector and version: under
    pytest-xdist a test item costs the controller about 2 ms of CPU, several times a read."""
    failed = []
    for version in versions:
        try:
            check(version)
        except (AssertionError, pytest.fail.Exception) as exc:
            failed.append(f"at {version}: {exc}")
    if failed:
        pytest.fail("\n".join(failed), pytrace=False)


def proposed_schema(folder: Path, spec_changes: dict[str, str], *, vectors: bool = False) -> Path:
    """A copy of the package's schema folder at ``folder``, its SPEC.md's text changed as
    ``spec_changes`` says (old text -> new text, each present once): what a pull request that
    changes SPEC.md's rules proposes. The golden vectors are copied only when asked."""
    ignored = ("__pycache__",) if vectors else ("vectors", "__pycache__")
    shutil.copytree(wire.package_root(), folder, ignore=shutil.ignore_patterns(*ignored))
    spec = (folder / "SPEC.md").read_text(encoding="utf-8")
    for old, new in spec_changes.items():
        assert spec.count(old) == 1, f"SPEC.md's wording moved ({old!r}): update the test"
        spec = spec.replace(old, new)
    (folder / "SPEC.md").write_text(spec, encoding="utf-8")
    return folder


def load_vectors() -> list[dict[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        if path.name != "vector.schema.json":
            out += json.loads(path.read_text(encoding="utf-8"))["vectors"]
    return out


def blob_of(vector: dict[str, Any]) -> bytes:
    if "blob" in vector:
        return vector["blob"].encode("utf-8")
    return base64.b64decode(vector["blob_b64"])


TIMEOUT = 20.0


class ProtocolClient:
    """One testee process, spoken to directly (no runner): handshake, then one request at a time,
    through the kit's one JSON-lines driver (its stderr kept for the failure message)."""

    def __init__(self, argv: list[str]) -> None:
        self.stderr: collections.deque[str] = collections.deque(maxlen=50)
        self.lines = LineProcess(argv, stderr=self.stderr)
        self.proc = self.lines.proc
        self.seq = 0
        self.hello = self.send({"cmd": "start", "protocol": 1}, numbered=False)

    def send(self, request: dict[str, Any], *, numbered: bool = True) -> dict[str, Any]:
        if numbered:
            self.seq += 1
            request = {**request, "seq": self.seq}
        answer = self._answer(json.dumps(request).encode("ascii"), request["cmd"])
        if numbered:
            assert answer.get("seq") == self.seq, answer
        return answer

    def send_raw(self, line: bytes) -> dict[str, Any]:
        """A request line as given (possibly not JSON); the answer carries ``seq`` null."""
        answer = self._answer(line, repr(line[:40]))
        assert answer.get("seq") is None, answer
        return answer

    def _answer(self, line: bytes, what: str) -> dict[str, Any]:
        self.lines.send(line)
        try:
            reply = self.lines.reply(TIMEOUT)
        except NoReply:
            pytest.fail(f"no answer within {TIMEOUT}s to {what}; stderr: {list(self.stderr)[-5:]}")
        except LinesError as exc:
            pytest.fail(
                f"testee exited (status {self.proc.poll()}) on {what} ({exc}); stderr: {list(self.stderr)[-5:]}"
            )
        answer: dict[str, Any] = json.loads(reply)
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
        return self.lines.stop(b'{"cmd": "stop"}', TIMEOUT)


def full_payload(version: str) -> tuple[Any, dict[str, Any]]:
    """The wire model of ``version`` and a valid payload with every member it declares, none
    absent: what a standalone implementation (which restates the members) is held to."""
    from refitwire import wire
    from refitwire.compat.cases._cases import member_values

    model = wire.default_registry().wire_model("rendezvous", version)

    def build(level: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for member in model.levels[level].members:
            if member.const is not wire.NO_CONST:
                continue
            schema = json.dumps(dict(member.schema), sort_keys=True)
            out[member.name] = [build(member.child)] if member.child else member_values(schema)[-1]
        return out

    payload = build(())
    payload["agent_meta_b64"] = "bWV0YQ=="  # the geometry rules tie these members together
    payload["tensors"][0].update(dtype="torch.float32", elsize=4, full_shape=[2])
    payload["tensors"][0]["shards"][0].update(shard_offset=[0], shape=[2], addr=4096)
    return model, payload


def members_in_order(document: dict[str, Any], model: Any) -> bool:
    """Whether every object of a written blob holds exactly its level's members, in the schema's order."""
    from refitwire.compat.cases._forms import objects_at

    return all(
        list(obj) == list(level.names)
        for path, level in model.levels.items()
        for obj in objects_at(document, model, path)
    )


def check_workflow_schema(workflow: Path) -> None:
    """A GitHub Actions workflow file passes the workflow schema (check-jsonschema's vendored copy)."""
    import shutil
    import sysconfig

    # Beside this interpreter first: a virtual environment's pytest run by its path, not activated,
    # has its scripts folder off PATH.
    scripts = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    linter = shutil.which("check-jsonschema", path=scripts)
    assert linter is not None, "check-jsonschema is not installed (the test extra brings it)"
    done = subprocess.run(
        [linter, "--builtin-schema", "vendor.github-workflows", str(workflow)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def tools_module(name: str) -> Iterator[Any]:
    """A module of the checkout's tools/ (they import each other by plain name), imported with that
    folder on the path only while the caller (a fixture) holds it."""
    folder = str(Path(__file__).resolve().parents[1] / "tools")
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(folder)
