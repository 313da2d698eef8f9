"""Cases built at run time rather than committed: writer refusals and the blob size limit.

A writer refusal case hands a writer a payload that breaks one writer-side rule; the only
right answer is a refusal (``errored`` with a message), never a blob (``WRITE_VALID``). The
size cases are a blob one byte over the reader limit and one exactly at it: too large to
commit, and cheap to build.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refitwire._spec import MAX_BLOB_BYTES, knows
from refitwire.compat._results import RECOMMENDED, REQUIRED


@dataclass(frozen=True)
class RefusalCase:
    id: str
    rule: str
    description: str
    payload: dict[str, Any]  # already projected onto the writer's version


@dataclass(frozen=True)
class SizeCase:
    id: str
    tier: str
    description: str
    blob: bytes
    valid: bool


def base_payload(version: str) -> dict[str, Any]:
    shard: dict[str, Any] = {
        "agent_name": "agent-r0",
        "device_id": 0,
        "addr": 4096,
        "shard_offset": [0, 0],
        "shape": [4, 4],
    }
    if knows(version, "digest"):
        shard["digest"] = None
    payload: dict[str, Any] = {
        "agent_name": "agent-r0",
        "metadata_endpoint": "h:1",
        "agent_meta_b64": "bWV0YQ==",
    }
    if knows(version, "publisher_step"):
        payload["publisher_step"] = 7
    tensor = {"name": "w0", "dtype": "torch.bfloat16", "elsize": 2, "full_shape": [8, 4], "shards": [shard]}
    return {**payload, "tensors": [tensor]}


def _shard(p: dict[str, Any]) -> dict[str, Any]:
    return p["tensors"][0]["shards"][0]  # type: ignore[no-any-return]


def _tensor(p: dict[str, Any]) -> dict[str, Any]:
    return p["tensors"][0]  # type: ignore[no-any-return]


# (rule, what is wrong, the change, the member the version must know or None)
_Mutation = tuple[str, str, Callable[[dict[str, Any]], Any], str | None]
_REFUSALS: tuple[_Mutation, ...] = (
    ("ADDR_RANGE", "addr is 2^64", lambda p: _shard(p).update(addr=2**64), None),
    ("ADDR_RANGE", "addr is negative", lambda p: _shard(p).update(addr=-1), None),
    ("DEVICE_ID_RANGE", "device_id is 2^31", lambda p: _shard(p).update(device_id=2**31), None),
    ("DEVICE_ID_RANGE", "device_id is negative", lambda p: _shard(p).update(device_id=-1), None),
    ("SIZE_RANGE", "a negative extent", lambda p: _shard(p).update(shape=[-1, 4]), None),
    ("SIZE_RANGE", "a full_shape entry of 2^63", lambda p: _tensor(p).update(full_shape=[2**63, 4]), None),
    ("SIZE_RANGE", "a negative shard_offset", lambda p: _shard(p).update(shard_offset=[-1, 0]), None),
    ("ELSIZE_RANGE", "elsize 0", lambda p: _tensor(p).update(elsize=0, dtype="custom"), None),
    ("ELSIZE_RANGE", "elsize 65", lambda p: _tensor(p).update(elsize=65, dtype="custom"), None),
    (
        "DTYPE_LABEL",
        "a dtype label that is not a torch name",
        lambda p: _tensor(p).update(dtype="BF16"),
        None,
    ),
    (
        "AGENT_META_BASE64",
        "agent_meta_b64 with non-zero pad bits",
        lambda p: p.update(agent_meta_b64="YR=="),
        None,
    ),
    (
        "AGENT_META_BASE64",
        "agent_meta_b64 without padding",
        lambda p: p.update(agent_meta_b64="bWV0YQ"),
        None,
    ),
    (
        "DIGEST_FORMAT",
        "a digest in upper case",
        lambda p: _shard(p).update(digest="ABCDEF0123456789" * 2),
        "digest",
    ),
    ("STEP_RANGE", "publisher_step is negative", lambda p: p.update(publisher_step=-1), "publisher_step"),
    ("STEP_RANGE", "publisher_step is 2^63", lambda p: p.update(publisher_step=2**63), "publisher_step"),
    (
        "RANK_AGREEMENT",
        "shard_offset has fewer dims than shape",
        lambda p: _shard(p).update(shard_offset=[0]),
        None,
    ),
    (
        "BOX_IN_BOUNDS",
        "a box past the end of the tensor",
        lambda p: _shard(p).update(shard_offset=[6, 0]),
        None,
    ),
    ("ELSIZE_DTYPE", "elsize disagrees with dtype", lambda p: _tensor(p).update(elsize=4), None),
    ("ADDR_SPAN", "a shard whose bytes wrap past 2^64", lambda p: _shard(p).update(addr=2**64 - 8), None),
)


@functools.cache
def refusal_cases(version: str) -> tuple[RefusalCase, ...]:
    """One payload per writer-side rule a ``version`` writer checks, each breaking only that rule."""
    cases = []
    for rule, description, mutate, member in _REFUSALS:
        if member is not None and not knows(version, member):
            continue
        payload = copy.deepcopy(base_payload(version))
        mutate(payload)
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
        cases.append(RefusalCase(f"refuse:{rule}-{digest}", rule, description, payload))
    return tuple(cases)


@functools.cache
def size_cases() -> tuple[SizeCase, ...]:
    """A blob of exactly ``MAX_BLOB_BYTES`` (valid) and one a byte longer (``BLOB_SIZE``).

    Tiers (SPEC.md section 5): a reader MUST read a blob at the limit within the per-request
    timeout (Required: writers may write that much, and every released reader can); it SHOULD
    reject a larger one before parsing it (Recommended: the released readers have no limit).
    """
    head = json.dumps({"schema": "mx.reshard.shard_table.v1", "agent_name": "agent-r0", "metadata_endpoint": "h:1",
                       "agent_meta_b64": "", "tensors": [], "padding": ""})  # fmt: skip
    at_limit = (head[:-2] + "x" * (MAX_BLOB_BYTES - len(head)) + '"}').encode()
    assert len(at_limit) == MAX_BLOB_BYTES
    over = at_limit[:-2] + b'x"}'
    return (
        SizeCase(
            "size:at-limit",
            REQUIRED,
            f"a valid blob of exactly {MAX_BLOB_BYTES} bytes (the limit)",
            at_limit,
            True,
        ),
        SizeCase(
            "size:over-limit",
            RECOMMENDED,
            f"a blob of {MAX_BLOB_BYTES + 1} bytes, one over the limit",
            over,
            False,
        ),
    )
