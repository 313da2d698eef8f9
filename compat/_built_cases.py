"""Cases built at run time rather than committed: writer refusals (the size cases are
``refitwire.compat._sizes``).

A writer refusal case hands a writer a payload that breaks one writer-side rule; the only
right answer is a refusal (``errored`` with a message), never a blob (``WRITE_VALID``).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refitwire import wire
from refitwire.engine import SPEC_VERSIONS, knows


@dataclass(frozen=True)
class RefusalCase:
    id: str
    rule: str
    description: str
    payload: dict[str, Any]  # already projected onto the writer's version


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
    """One payload per writer-side rule a ``version`` writer checks, each breaking only that rule:
    the hand-written ones, then one per bound, pattern and type of each member the released
    versions lack (a candidate's new members), generated from the version's wire model."""
    from refitwire.compat import _cases, _refusals

    model = _cases.model_of(version)
    base = _cases.conform(base_payload(version), version, 0)  # a later version's members carried
    found: list[tuple[str, str, dict[str, Any]]] = []
    for rule, description, mutate, member in _REFUSALS:
        if member is not None and not knows(version, member):
            continue
        payload = copy.deepcopy(base)
        mutate(payload)
        found.append((rule, description, payload))
    found += _refusals.mutations(model, base, wire.wire_model("rendezvous", SPEC_VERSIONS[-1]))
    cases = []
    for rule, description, payload in found:
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
        cases.append(RefusalCase(f"refuse:{rule}-{digest}", rule, description, payload))
    return tuple(cases)
