"""What IMPLEMENTERS.md promises about the requests a testee is sent: no lone surrogate in any
string, the digest inputs' bounds, and the longest request line."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from refitwire import released_versions, wire
from refitwire.compat import _protocol
from refitwire.compat.cases import _built_cases, _cases, _digest, _sizes, _write_unknown
from refitwire.wire import blob_limit, dtype_sizes


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _lone_surrogates(payload: Any) -> list[str]:
    return [s for s in _strings(payload) if any(0xD800 <= ord(c) <= 0xDFFF for c in s)]


def test_no_request_payload_carries_a_lone_surrogate() -> None:
    payloads = [
        p for seed in (1, 2, 3) for p in _cases.generated_payloads(seed, 20, wire.default_registry()).values()
    ]
    for version in released_versions():
        payloads += [c.payload for c in _built_cases.refusal_cases(version, wire.default_registry())]
        payloads += [c.payload for c in _write_unknown.unknown_member_cases(version, wire.default_registry())]
    payloads += [c.payload for c in _cases.write_cases()]
    assert payloads and not [s for p in payloads for s in _lone_surrogates(p)]


def test_the_check_sees_a_lone_surrogate() -> None:
    assert _lone_surrogates({"tensors": [{"name": "a\ud800"}]}) == ["a\ud800"]


def test_digest_requests_stay_within_the_stated_bounds() -> None:
    for case in _digest.digest_cases():
        request = case.request
        shape, data = request["shape"], base64.b64decode(request["data_b64"])
        assert len(shape) <= 3 and all(0 <= n < 2**63 for n in shape), case.id
        assert request["dtype"].removeprefix("torch.") in dtype_sizes(wire.default_registry()), case.id
        assert (
            len(data)
            == math.prod(shape)
            * dtype_sizes(wire.default_registry())[request["dtype"].removeprefix("torch.")]
            <= (16 << 20) + (4 << 10)  # the bound compat/IMPLEMENTERS.md states (16 MiB and 4 KiB)
        )
        box = request.get("box")
        if box is not None:
            assert len(box["shard_offset"]) == len(box["shape"]) == len(shape), case.id
            assert all(o + n <= full for o, n, full in zip(box["shard_offset"], box["shape"], shape)), case.id


@pytest.mark.slow
def test_the_longest_request_line_is_under_90_mb() -> None:
    longest = max(_sizes.size_cases(blob_limit(wire.default_registry())), key=lambda c: len(c.blob))
    assert len(longest.blob) == blob_limit(wire.default_registry()) + 1
    line = json.dumps(_protocol.read(2**31 - 1, base64.b64encode(longest.blob).decode())).encode() + b"\n"
    assert len(line) < 90_000_000
