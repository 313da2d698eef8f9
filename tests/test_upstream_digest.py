"""The hand-derived ``tensor_digest`` vectors (facts §3.1), checked against the
released ``verify.tensor_digest`` through the adapter's ``digest`` extension command.

Needs the upstream environments (``python -m refitwire.compat.upstream.envs``);
skips, never builds, when one is missing.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
from typing import Any

import pytest
from refitwire.compat.upstream import ADAPTER_SCRIPT, envs

pytestmark = pytest.mark.upstream

ADAPTER = ADAPTER_SCRIPT

# (id, bytes, dtype, shape, digest). Bytes are little-endian, as upstream views
# them in host order on every machine this runs on.
VECTORS = [
    ("empty", b"", "int32", [0], "c804ce198ec337e3dc762bdd1a09aece"),
    ("int32 [1]", struct.pack("<i", 1), "int32", [1], "de030c6258866ea0cb5d705b9a4d55bd"),
    ("int32 [-1]", struct.pack("<i", -1), "int32", [1], "98287d641568dbb0c8c18b9f2a5d9294"),
    ("int16 [0,1,2]", struct.pack("<3h", 0, 1, 2), "int16", [3], "cdf8665184c5e75c9441b7c5038f8454"),
    (
        "int32 arange(4096)",
        struct.pack("<4096i", *range(4096)),
        "int32",
        [4096],
        "b80e42d0aa211223be9669385be8976b",
    ),
]


def _digests(version: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    python = envs.find_env(version)
    if python is None:
        pytest.skip(
            f"no upstream env for modelexpress {version} under {envs.cache_dir()}; "
            "build it with `python -m refitwire.compat.upstream.envs`"
        )
    lines = [{"cmd": "start", "protocol": 1}, *requests, {"cmd": "stop"}]
    proc = subprocess.run(
        [str(python), str(ADAPTER)],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-4000:]
    answers = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert len(answers) == len(requests) + 1, answers
    return answers[1:]


@pytest.fixture(scope="module", params=envs.UPSTREAM_VERSIONS)
def upstream_digests(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    """Every vector digested by one release, in one adapter process."""
    requests = [
        {
            "cmd": "digest",
            "seq": i,
            "data_b64": base64.b64encode(data).decode("ascii"),
            "dtype": dtype,
            "shape": shape,
        }
        for i, (_id, data, dtype, shape, _want) in enumerate(VECTORS)
    ]
    # The same bytes under another label and shape must digest the same.
    requests += [
        {
            "cmd": "digest",
            "seq": 100 + i,
            "data_b64": base64.b64encode(data).decode("ascii"),
            "dtype": "torch.uint8",
        }
        for i, (_id, data, _dtype, _shape, _want) in enumerate(VECTORS)
    ]
    answers = _digests(str(request.param), requests)
    return {str(a["seq"]): a for a in answers}


@pytest.mark.parametrize(("index", "vector"), list(enumerate(VECTORS)), ids=[v[0] for v in VECTORS])
def test_hand_derived_vector(
    upstream_digests: dict[str, dict[str, Any]], index: int, vector: tuple[Any, ...]
) -> None:
    want = vector[-1]
    assert upstream_digests[str(index)] == {"seq": index, "digest": want}


@pytest.mark.parametrize(("index", "vector"), list(enumerate(VECTORS)), ids=[v[0] for v in VECTORS])
def test_digest_ignores_dtype_label_and_shape(
    upstream_digests: dict[str, dict[str, Any]], index: int, vector: tuple[Any, ...]
) -> None:
    assert upstream_digests[str(100 + index)]["digest"] == vector[-1]
