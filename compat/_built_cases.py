"""Cases built at run time rather than committed: writer refusals and the blob size limit.

A writer refusal case hands a writer a payload that breaks one writer-side rule; the only
right answer is a refusal (``errored`` with a message), never a blob (``WRITE_VALID``). The
size cases are a blob one byte over the reader limit and one exactly at it: too large to
commit, and cheap to build.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refitwire.compat._results import RECOMMENDED, REQUIRED
from refitwire.engine import MAX_BLOB_BYTES, knows
from refitwire.wire import Registry


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
    payload: dict[str, Any] | None = None  # what a reader decodes from a valid one (before projection)


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


# (rule, what is wrong, the change): the rules JSON Schema cannot say (a break of a schema
# keyword is generated for every member, ``_refusals``)
_Mutation = tuple[str, str, Callable[[dict[str, Any]], Any]]
_REFUSALS: tuple[_Mutation, ...] = (
    ("AGENT_META_BASE64", "agent_meta_b64 with non-zero pad bits", lambda p: p.update(agent_meta_b64="YR==")),
    (
        "RANK_AGREEMENT",
        "shard_offset has fewer dims than shape",
        lambda p: _shard(p).update(shard_offset=[0]),
    ),
    ("BOX_IN_BOUNDS", "a box past the end of the tensor", lambda p: _shard(p).update(shard_offset=[6, 0])),
    ("ELSIZE_DTYPE", "elsize disagrees with dtype", lambda p: _tensor(p).update(elsize=4)),
    ("ADDR_SPAN", "a shard whose bytes wrap past 2^64", lambda p: _shard(p).update(addr=2**64 - 8)),
)


@functools.cache
def refusal_cases(version: str, registry: Registry | None = None) -> tuple[RefusalCase, ...]:
    """One payload per writer-side rule a ``version`` writer checks, each breaking only that rule:
    the hand-written ones of the rules JSON Schema cannot say, then one per break of each
    keyword of each member of the version's wire model in ``registry`` (default: the default
    registry), released members and a candidate's new ones alike."""
    from refitwire.compat import _cases, _refusals

    model = _cases.model_of(version, registry)
    base = _cases.conform(base_payload(version), version, 0, registry)  # a later version's members carried
    found: list[tuple[str, str, dict[str, Any]]] = []
    for rule, description, mutate in _REFUSALS:
        payload = copy.deepcopy(base)
        mutate(payload)
        found.append((rule, description, payload))
    found += _refusals.mutations(model, base)
    cases = []
    for rule, description, payload in found:
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
        cases.append(RefusalCase(f"refuse:{rule}-{digest}", rule, description, payload))
    return tuple(cases)


@functools.cache
def size_cases() -> tuple[SizeCase, ...]:
    """The size limit and the scale cases, each built once per process.

    ``size:at-limit`` is a realistic table of exactly ``MAX_BLOB_BYTES`` (tens of thousands of
    tensors, eight shards each, digests, a step) and ``size:over-limit`` the same a byte longer
    (``BLOB_SIZE``). ``size:many-tensors`` is an eighth of the limit filled with as many small
    tensors as fit: a reader that grows faster than linearly in the number of tensors cannot
    read it within the allowed time (SPEC.md section 5: the run allows each of these blobs ten
    times what the reference testee needs on the machine, measured when the run starts).

    Tiers (SPEC.md section 5): a reader MUST read a blob of up to the limit within the
    per-request timeout (Required: writers may write that much, and every released reader
    can); it SHOULD reject a larger one before parsing it (Recommended: the released readers
    have no limit).
    """
    table, table_payload = _filled(MAX_BLOB_BYTES, _realistic_tensor)
    many, many_payload = _filled(MAX_BLOB_BYTES // 8, _small_tensor)
    over = table[:-2] + b'x"}'
    return (
        SizeCase(
            "size:at-limit",
            REQUIRED,
            f"a realistic table of exactly {MAX_BLOB_BYTES} bytes (the limit): "
            f"{len(table_payload['tensors'])} tensors, 8 shards each",
            table,
            True,
            table_payload,
        ),
        SizeCase(
            "size:over-limit",
            RECOMMENDED,
            f"a blob of {MAX_BLOB_BYTES + 1} bytes, one over the limit",
            over,
            False,
        ),
        SizeCase(
            "size:many-tensors",
            REQUIRED,
            f"{len(many_payload['tensors'])} small tensors in {len(many)} bytes (a reader must grow linearly)",
            many,
            True,
            many_payload,
        ),
    )


def _realistic_tensor(i: int) -> dict[str, Any]:
    """Expert weights of a mixture-of-experts model, split eight ways along dim 0."""
    layer, expert, proj = i // 384, i // 3 % 128, i % 3
    shards = [
        {"agent_name": f"trainer-r{r}", "device_id": r, "addr": 0x7F0000000000 + i * 786432 * 8 + r * 786432,
         "shard_offset": [r * 96, 0], "shape": [96, 2048], "digest": f"{i * 8 + r:032x}"}
        for r in range(8)
    ]  # fmt: skip
    return {"name": f"model.layers.{layer}.mlp.experts.{expert}.w{proj + 1}.weight", "dtype": "torch.bfloat16",
            "elsize": 2, "full_shape": [768, 2048], "shards": shards}  # fmt: skip


def _small_tensor(i: int) -> dict[str, Any]:
    return {"name": f"t{i}", "dtype": "torch.float32", "elsize": 4, "full_shape": [1], "shards": []}


def _filled(size: int, tensor: Callable[[int], dict[str, Any]]) -> tuple[bytes, dict[str, Any]]:
    """A valid blob of exactly ``size`` bytes holding as many ``tensor(i)`` as fit, padded with an
    unknown top-level member (readers ignore it), and the payload it carries."""
    head = {"schema": "mx.reshard.shard_table.v1", "agent_name": "trainer-r0", "metadata_endpoint": "h:1",
            "agent_meta_b64": "bWV0YQ==", "tensors": []}  # fmt: skip
    tail = ', "publisher_step": 7, "padding": ""}'
    start = json.dumps(head)[: -len("]}")]
    tensors: list[dict[str, Any]] = []
    parts, used = [], len(start) + len("]") + len(tail)
    while True:
        entry = tensor(len(tensors))
        text = json.dumps(entry)
        if used + len(text) + 2 > size:
            break
        used += len(text) + (2 if tensors else 0)
        parts.append(text)
        tensors.append(entry)
    body = start + ", ".join(parts) + "]" + tail
    blob = (body[:-2] + "x" * (size - len(body)) + '"}').encode()
    assert len(blob) == size, (len(blob), size)
    payload = {**{k: head[k] for k in ("agent_name", "metadata_endpoint", "agent_meta_b64")},
               "publisher_step": 7, "tensors": tensors}  # fmt: skip
    return blob, payload


#: A reader is allowed this many times what the reference testee needs for a size or scale case.
ALLOWANCE_FACTOR = 10.0


@dataclass(frozen=True)
class Allowance:
    """The seconds a reader is allowed for one size case, and how they were found."""

    seconds: float
    reference_s: float | None  # the reference testee's time on this machine; None: not measured
    factor: float

    def describe(self) -> str:
        if self.reference_s is None:
            return f"allowed {self.seconds:g} s"
        return (
            f"allowed {self.seconds:.1f} s: {self.factor:g} x the reference testee's "
            f"{self.reference_s:.2f} s on this machine, or --timeout if larger"
        )


def measure_allowances(timeout_s: float, factor: float = ALLOWANCE_FACTOR) -> dict[str, Allowance]:
    """Time the reference testee reading each size case on this machine (once, when a run starts)
    and allow each reader ``factor`` times that, never less than ``timeout_s``. The blob over the
    limit gets the allowance of the one at it (a reader that parses before it checks the size
    needs about as long)."""
    from refitwire.compat import _protocol
    from refitwire.compat._testee import Testee

    testee = Testee([sys.executable, "-m", "refitwire.compat.testees.reference"], timeout_s=600.0)
    found: dict[str, Allowance] = {}
    try:
        testee.start()
        for case in size_cases():
            if not case.valid:
                continue
            request = _protocol.read(0, base64.b64encode(case.blob).decode())
            t0 = time.perf_counter()
            testee.request(request)
            took = time.perf_counter() - t0
            found[case.id] = Allowance(max(timeout_s, factor * took), took, factor)
    except (OSError, _protocol.ProtocolError):
        pass  # unmeasured cases keep the plain timeout
    finally:
        testee.stop()
    at_limit = found.get("size:at-limit")
    for case in size_cases():
        found.setdefault(
            case.id, at_limit if not case.valid and at_limit else Allowance(timeout_s, None, factor)
        )
    return found
