"""The released modelexpress reader/writer, spoken to through ``adapter_testee.py``.

Needs the upstream environments (``python -m refitwire.compat.upstream.envs``);
skips, never builds, when one is missing.
"""

from __future__ import annotations

import base64
import collections
import json
from pathlib import Path
from typing import Any

import pytest
from _support import full_payload, members_in_order
from refitwire.compat.upstream import ADAPTER_SCRIPT, envs
from refitwire.wire import LineProcess, LinesError, NoReply

pytestmark = pytest.mark.upstream

ADAPTER = ADAPTER_SCRIPT
TIMEOUT_S = 120.0


class AdapterProcess:
    """A running adapter: one request line out, one answer line back (the kit's one JSON-lines
    driver, its stderr kept for the failure message)."""

    def __init__(self, python: Path) -> None:
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self.lines = LineProcess([str(python), str(ADAPTER)], stderr=self._stderr)
        self.proc = self.lines.proc

    def send(self, request: dict[str, Any] | bytes) -> None:
        self.lines.send(request if isinstance(request, bytes) else json.dumps(request).encode())

    def ask(self, request: dict[str, Any] | bytes) -> dict[str, Any]:
        self.send(request)
        try:
            line = self.lines.reply(TIMEOUT_S)
        except NoReply:
            pytest.fail(f"no answer within {TIMEOUT_S}s; stderr:\n{self.stderr()}")
        except LinesError:
            pytest.fail(f"testee exited ({self.proc.poll()}); stderr:\n{self.stderr()}")
        answer = json.loads(line.decode("utf-8"))
        assert isinstance(answer, dict)
        return answer

    def stderr(self) -> str:
        return "\n".join(self._stderr)[-4000:]

    def stop(self) -> int:
        return self.lines.stop(json.dumps({"cmd": "stop"}).encode(), TIMEOUT_S)


def _python_for(version: str) -> Path:
    python = envs.find_env(version)
    if python is None:
        pytest.skip(
            f"no upstream env for modelexpress {version} under {envs.cache_dir()}; "
            "build it with `python -m refitwire.compat.upstream.envs`"
        )
    return python


@pytest.fixture(scope="module", params=envs.UPSTREAM_VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def testee(version: str):  # type: ignore[no-untyped-def]
    t = AdapterProcess(_python_for(version))
    hello = t.ask({"cmd": "start", "protocol": 1})
    t.hello = hello  # type: ignore[attr-defined]
    yield t
    t.stop()


# facts §1.5: exact bytes of the 0.7.0 writer, with digest and step.
EXAMPLE_BLOB = (
    b'{"schema": "mx.reshard.shard_table.v1", "agent_name": "agent-r0", '
    b'"metadata_endpoint": "h:1", "agent_meta_b64": "bWV0YQD/", "tensors": [{"name": "w0", '
    b'"dtype": "torch.bfloat16", "elsize": 2, "full_shape": [8, 4], "shards": [{"agent_name": '
    b'"agent-r0", "device_id": 0, "addr": 4096, "shard_offset": [0, 0], "shape": [4, 4], '
    b'"digest": "00000000000000000000000000000000"}]}], "publisher_step": 7}'
)
# Same input without digest and step: both members simply disappear.
EXAMPLE_PLAIN_BLOB = EXAMPLE_BLOB.replace(b', "digest": "00000000000000000000000000000000"', b"").replace(
    b', "publisher_step": 7', b""
)


def _example(digest: str | None = "0" * 32, step: int | None = 7) -> dict[str, Any]:
    return {
        "agent_name": "agent-r0",
        "metadata_endpoint": "h:1",
        "agent_meta_b64": base64.b64encode(b"meta\x00\xff").decode("ascii"),
        "publisher_step": step,
        "tensors": [
            {
                "name": "w0",
                "dtype": "torch.bfloat16",
                "elsize": 2,
                "full_shape": [8, 4],
                "shards": [
                    {
                        "agent_name": "agent-r0",
                        "device_id": 0,
                        "addr": 4096,
                        "shard_offset": [0, 0],
                        "shape": [4, 4],
                        "digest": digest,
                    }
                ],
            }
        ],
    }


def _b64(blob: bytes) -> str:
    return base64.b64encode(blob).decode("ascii")


def test_handshake(testee: AdapterProcess, version: str) -> None:
    assert testee.hello == {  # type: ignore[attr-defined]
        "implementation": {"name": "modelexpress", "version": version, "language": "python"},
        "spec_version": "1.2.0",
        "roles": ["reader", "writer"],
    }


def test_write_gives_the_documented_bytes(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "write", "seq": 1, "payload": _example()})
    assert set(answer) == {"seq", "blob_b64"}
    assert answer["seq"] == 1
    assert base64.b64decode(answer["blob_b64"]) == EXAMPLE_BLOB


def test_write_omits_absent_digest_and_step(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "write", "seq": 2, "payload": _example(None, None)})
    assert base64.b64decode(answer["blob_b64"]) == EXAMPLE_PLAIN_BLOB


def test_read_gives_the_decoded_example(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "read", "seq": 3, "blob_b64": _b64(EXAMPLE_BLOB)})
    assert answer == {"seq": 3, "payload": _example()}


def test_read_plain_blob_reports_nulls(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "read", "seq": 4, "blob_b64": _b64(EXAMPLE_PLAIN_BLOB)})
    assert answer == {"seq": 4, "payload": _example(None, None)}


def test_read_rejects_non_utf8(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "read", "seq": 5, "blob_b64": _b64(b"\xff\xfe{}")})
    assert answer["seq"] == 5
    assert answer["rejected"] is True
    assert answer["message"].startswith("UnicodeDecodeError: ")


def test_read_rejects_foreign_schema(testee: AdapterProcess) -> None:
    blob = EXAMPLE_BLOB.replace(b"shard_table.v1", b"shard_table.v2")
    answer = testee.ask({"cmd": "read", "seq": 6, "blob_b64": _b64(blob)})
    assert answer == {
        "seq": 6,
        "rejected": True,
        "message": "ValueError: unexpected rendezvous blob schema 'mx.reshard.shard_table.v2'",
    }


def test_read_reports_upstream_values_unnormalized(testee: AdapterProcess) -> None:
    # The reader int()s addr/device_id/elsize/publisher_step but keeps shape
    # elements as they came.
    blob = (
        EXAMPLE_BLOB.replace(b'"addr": 4096', b'"addr": "4096"')
        .replace(b'"shape": [4, 4]', b'"shape": ["4", "4"]')
        .replace(b'"publisher_step": 7', b'"publisher_step": "7"')
        .replace(b'"metadata_endpoint": "h:1"', b'"metadata_endpoint": null')
    )
    answer = testee.ask({"cmd": "read", "seq": 7, "blob_b64": _b64(blob)})
    payload = answer["payload"]
    shard = payload["tensors"][0]["shards"][0]
    assert shard["addr"] == 4096
    assert shard["shape"] == ["4", "4"]
    assert payload["publisher_step"] == 7
    assert payload["metadata_endpoint"] is None


def test_unknown_command_is_skipped(testee: AdapterProcess) -> None:
    answer = testee.ask({"cmd": "frobnicate", "seq": 8})
    assert answer == {"seq": 8, "skipped": True, "reason": "unknown command"}


def test_malformed_request_is_errored_and_survived(testee: AdapterProcess) -> None:
    answer = testee.ask(b"this is not json")
    assert answer["errored"] is True
    assert answer["seq"] is None
    answer = testee.ask({"cmd": "write", "seq": 9, "payload": {"agent_name": "a"}})
    assert answer["seq"] == 9
    assert answer["errored"] is True
    answer = testee.ask({"cmd": "frobnicate", "seq": 10})
    assert answer["skipped"] is True


def test_stop_exits_zero(version: str) -> None:
    t = AdapterProcess(_python_for(version))
    assert "implementation" in t.ask({"cmd": "start", "protocol": 1})
    assert t.stop() == 0, t.stderr()


def test_it_maps_every_member_of_its_version(testee: AdapterProcess) -> None:
    """The adapter restates the members (it runs in upstream's environment, without the kit):
    held to the wire model of the version it declares, every member goes to upstream's writer
    and comes back from its reader, in the schema's order."""
    model, payload = full_payload(testee.hello["spec_version"])  # type: ignore[attr-defined]
    written = base64.b64decode(testee.ask({"cmd": "write", "seq": 9, "payload": payload})["blob_b64"])
    assert members_in_order(json.loads(written), model)
    assert testee.ask({"cmd": "read", "seq": 10, "blob_b64": _b64(written)}) == {
        "seq": 10,
        "payload": payload,
    }


def test_a_value_json_cannot_carry_is_errored_with_where_it_sits(testee: AdapterProcess) -> None:
    # Upstream's reader takes the NaN literal (Python's json) and keeps shape elements as they
    # came: it accepted the blob, so the answer is errored, naming the value's place.
    blob = EXAMPLE_BLOB.replace(b'"shape": [4, 4]', b'"shape": [4, NaN]')
    answer = testee.ask({"cmd": "read", "seq": 9, "blob_b64": _b64(blob)})
    assert answer == {
        "seq": 9,
        "errored": True,
        "message": "tensors[0].shards[0].shape[1] is nan, which JSON cannot carry",
    }
