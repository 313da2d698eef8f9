"""Cases built at run time rather than committed: writer refusals (the size cases are
``refitwire.compat.cases._sizes``).

A writer refusal case hands a writer a payload that breaks one writer-side rule; the only
right answer is a refusal (``errored`` with a message), never a blob (``WRITE_VALID``).
"""

from __future__ import annotations

import base64
import copy
import functools
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from refitwire.wire import Registry, knows


@dataclass(frozen=True)
class RefusalCase:
    id: str
    rule: str
    description: str
    payload: dict[str, Any]  # already projected onto the writer's version


def base_payload(version: str, registry: Registry) -> dict[str, Any]:
    shard: dict[str, Any] = {
        "agent_name": "agent-r0",
        "device_id": 0,
        "addr": 4096,
        "shard_offset": [0, 0],
        "shape": [4, 4],
    }
    if knows(registry, version, "digest"):
        shard["digest"] = None
    payload: dict[str, Any] = {
        "agent_name": "agent-r0",
        "metadata_endpoint": "h:1",
        "agent_meta_b64": "bWV0YQ==",
    }
    if knows(registry, version, "publisher_step"):
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


def nonzero_pad_bits() -> list[tuple[str, str]]:
    """(what, text): base64 of each kind of final quantum RFC 4648 has, one byte (``==``, 4 pad
    bits) and two (``=``, 2 pad bits), with each pad bit set alone: not the canonical encoding
    (AGENT_META_BASE64), which a decoder that drops pad bits, or masks too few, would take."""
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"
    found = []
    for data, what, bits in ((b"a", "", 4), (b"ab", " in a last quantum of two bytes ('=')", 2)):
        text = base64.b64encode(data).decode()
        body, pad = text.rstrip("="), "=" * text.count("=")
        for bit in range(bits):
            # (the lowest bit keeps the description earlier rounds gave it)
            which = "" if bit == 0 else f" (pad bit {bit + 1} of {bits})"
            last = alphabet[alphabet.index(body[-1]) | 1 << bit]
            found.append((f"agent_meta_b64 with non-zero pad bits{what}{which}", body[:-1] + last + pad))
    return found


def _with_meta(text: str) -> Callable[[dict[str, Any]], Any]:
    return lambda p: p.update(agent_meta_b64=text)


RULE_BREAKS: tuple[_Mutation, ...] = (
    *(("AGENT_META_BASE64", what, _with_meta(text)) for what, text in nonzero_pad_bits()),
    (
        "RANK_AGREEMENT",
        "shard_offset has fewer dims than shape",
        lambda p: _shard(p).update(shard_offset=[0]),
    ),
    ("BOX_IN_BOUNDS", "a box past the end of the tensor", lambda p: _shard(p).update(shard_offset=[6, 0])),
    ("ELSIZE_DTYPE", "elsize disagrees with dtype", lambda p: _tensor(p).update(elsize=4)),
    ("ADDR_SPAN", "a shard whose bytes wrap past 2^64", lambda p: _shard(p).update(addr=2**64 - 8)),
)


def refusal_cases(version: str, registry: Registry) -> tuple[RefusalCase, ...]:
    """One payload per writer-side rule a ``version`` writer checks, each breaking only that rule:
    the hand-written ones of the rules JSON Schema cannot say, then one per break of each
    keyword of each member of the version's wire model in ``registry`` (default: the default
    registry), released members and a candidate's new ones alike."""
    return _refusal_cases(version, registry)


@functools.cache
def _refusal_cases(version: str, registry: Registry) -> tuple[RefusalCase, ...]:
    # kept per registry (immutable), never per "whichever is the default now"
    from refitwire.compat.cases import _cases, _refusals

    model = _cases.model_of(version, registry)
    base = _cases.conform(
        base_payload(version, registry), version, 0, registry
    )  # a later version's members carried
    found: list[tuple[str, str, dict[str, Any]]] = []
    for rule, description, mutate in RULE_BREAKS:
        payload = copy.deepcopy(base)
        mutate(payload)
        found.append((rule, description, payload))
    found += _refusals.mutations(model, base)
    # named by the rule and the break (its place and what breaks there), never by the payload:
    # the base payload gains every member a later version adds, and the IDs stay
    return tuple(
        RefusalCase(f"refuse:{_cases.name_id(rule, rule, description)}", rule, description, payload)
        for rule, description, payload in found
    )
