"""Generated payloads at the magnitudes the field uses, each a named class (``gen-<class>``).

Hypothesis draws small values (a few bytes of agent metadata, names of a few characters, a few
shards): enough to reach every member, never the sizes at which real implementations go wrong.
In the field, NIXL agent metadata (what ``get_agent_metadata()`` returns, carried as base64)
runs from bytes to tens of KiB, a tensor is cut into many shards, and a publisher may list one
source tensor under its name in several entries: no rule of SPEC.md forbids a repeated name in a
table, and the merges (SPEC.md section 2.6) join entries by name, so the entries of one name here
agree on what those merges require and differ in their shards. Each class is built, not drawn:
it is in every run whatever the seed, and its ID says what its failure is about (a writer that
compresses large metadata fails a ``gen-meta-*`` case at ``/agent_meta_b64``; one that keeps
one entry per name fails ``gen-repeated-names`` at ``/tensors``).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import struct
from collections.abc import Callable
from typing import Any

from refitwire.compat.cases._forms import objects_at
from refitwire.wire import Member, Registry, dtype_sizes

__all__ = ["MAGNITUDE_CLASSES", "NAME_LENGTH_UNBOUNDED", "agent_metadata", "magnitude_payloads"]

#: Agent metadata sizes, by class: a few bytes (a bare agent), just past a 4 KiB page (where a
#: writer that switches encoding at a page or at a round threshold starts), and past 64 KiB
#: (tens of KiB: an agent with many registered regions; past what a 16-bit length holds).
METADATA_BYTES = {"meta-bytes": 5, "meta-4-kib": 4 * 1024 + 1, "meta-64-kib": 64 * 1024 + 1}
#: How long a name is where its schema bounds its length nowhere: past what a 16-bit length
#: field or a 64 KiB buffer holds. Where the schema has a ``maxLength``, that is the length.
NAME_LENGTH_UNBOUNDED = 64 * 1024 + 1
#: Shards of the one tensor of ``many-shards``: past 2^10 (and an 8-bit count).
MANY_SHARDS = 2**10 + 1
#: Entries of the one repeated name in ``repeated-names`` (another tensor sits between them).
REPEATS = 3
_BASE_ADDR = 0x7F00_0000_0000  # where a CUDA allocation of a real process sits
_AGENT = "trainer-rank-0-6f1c2a9e"


def agent_metadata(size: int) -> bytes:
    """``size`` bytes shaped like serialized NIXL agent metadata: per registered region a
    backend tag, a little-endian address, zero padding and key material (pseudo-random, every
    byte value), repeated and cut to ``size``. The same bytes in every run."""
    noise = hashlib.shake_256(b"refitwire: nixl agent metadata").digest(size)
    out = bytearray()
    for region in itertools.count():
        if len(out) >= size:
            break
        key = noise[len(out) : len(out) + 40]
        out += b"UCX\x00" + struct.pack("<Q", _BASE_ADDR + region * 2**21) + bytes(12) + key
    return bytes(out[:size])


def _newest(registry: Registry) -> str:
    return registry.released_versions()[-1]


def _dtype(registry: Registry) -> tuple[str, int]:
    """A dtype of the registry's table (a two-byte one where there is: bfloat16 in practice)."""
    sizes = sorted((size != 2, name) for name, size in dtype_sizes(registry).items() if name[0] != "c")
    name = sizes[0][1]
    return f"torch.{name}", dtype_sizes(registry)[name]


def _shard(n: int, rows: int, cols: int, elsize: int, agent: str = _AGENT) -> dict[str, Any]:
    """Shard ``n`` of a tensor cut in row blocks of ``rows``: its box and its own bytes."""
    digest = hashlib.sha256(str(n).encode()).hexdigest()[:32] if n % 2 else None
    return {
        "agent_name": agent, "device_id": n % 8, "addr": _BASE_ADDR + n * rows * cols * elsize,
        "shard_offset": [n * rows, 0], "shape": [rows, cols], "digest": digest,
    }  # fmt: skip


def _payload(tensors: list[dict[str, Any]], meta: bytes = b"UCX\x00", **top: Any) -> dict[str, Any]:
    return {
        "agent_name": top.get("agent_name", _AGENT),
        "metadata_endpoint": top.get("metadata_endpoint", "10.0.0.7:5555"),
        "agent_meta_b64": base64.b64encode(meta).decode("ascii"),
        "publisher_step": 120_000,
        "tensors": tensors,
    }


def _tensor(name: str, dtype: tuple[str, int], shards: list[dict[str, Any]], rows: int) -> dict[str, Any]:
    return {"name": name, "dtype": dtype[0], "elsize": dtype[1], "full_shape": [rows, 64], "shards": shards}


def _one_tensor(registry: Registry) -> list[dict[str, Any]]:
    dtype = _dtype(registry)
    return [_tensor("model.embed_tokens.weight", dtype, [_shard(0, 8, 64, dtype[1])], 8)]


def _metadata_class(size: int) -> Callable[[Registry], dict[str, Any]]:
    return lambda registry: _payload(_one_tensor(registry), agent_metadata(size))


def _repeated_names(registry: Registry) -> dict[str, Any]:
    """One expert weight listed under its name in ``REPEATS`` entries (its row blocks split
    between them), another tensor between the first two: every entry's shards are the payload's."""
    dtype = _dtype(registry)
    rows, per = 4, 2  # rows per shard, shards per entry
    whole = rows * per * REPEATS
    entries = [
        _tensor("model.layers.3.mlp.experts.w13_weight", dtype,
                [_shard(k * per + j, rows, 64, dtype[1]) for j in range(per)], whole)
        for k in range(REPEATS)
    ]  # fmt: skip
    other = _tensor("model.layers.3.input_layernorm.weight", dtype, [_shard(0, 1, 64, dtype[1])], 1)
    return _payload([entries[0], other, *entries[1:]])


def _many_shards(registry: Registry) -> dict[str, Any]:
    """One tensor cut into ``MANY_SHARDS`` row blocks, spread over eight devices."""
    dtype = _dtype(registry)
    shards = [_shard(n, 1, 64, dtype[1]) for n in range(MANY_SHARDS)]
    return _payload([_tensor("model.lm_head.weight", dtype, shards, MANY_SHARDS)])


def free_text(member: Member) -> bool:
    """A string member a writer takes as given: no pattern, no constant (names, the endpoint)."""
    return member.types == ("string",) and member.pattern is None and member.in_decoded_form


def name_length(member: Member) -> int:
    """The longest value ``member``'s schema allows, or :data:`NAME_LENGTH_UNBOUNDED` where it
    bounds none (read from the wire model: a ``maxLength`` a later version adds is used)."""
    longest = member.schema.get("maxLength")
    return int(longest) if isinstance(longest, int) else NAME_LENGTH_UNBOUNDED


def _long_text(seed: str, length: int) -> str:
    """``length`` characters of a dotted module path (how long names grow), ending in ``seed``."""
    path = "".join(f"model.layers.{n}.block_sparse_moe.experts.{n}." for n in range(length // 40 + 2))
    return (path + seed)[-length:] if length else ""


def _names_at_limit(registry: Registry) -> dict[str, Any]:
    """Every free-text member of the newest version's table (names, the endpoint) at its
    longest: a tensor with one shard, and the agent metadata as a real agent's."""
    model = registry.wire_model("rendezvous", _newest(registry))
    texts: dict[tuple[tuple[str, ...], str], str] = {}
    for path, level in model.levels.items():
        for member in filter(free_text, level.members):
            texts[(path, member.name)] = _long_text(member.name, name_length(member))
    payload = _payload(_one_tensor(registry), agent_metadata(METADATA_BYTES["meta-4-kib"]))
    for (path, name), text in texts.items():
        for obj in objects_at(payload, model, path):
            obj[name] = text
    return payload


#: Each class's payload, built from the registry (its dtypes, its schemas' bounds).
MAGNITUDE_CLASSES: dict[str, Callable[[Registry], dict[str, Any]]] = {
    **{name: _metadata_class(size) for name, size in METADATA_BYTES.items()},
    "names-at-limit": _names_at_limit,
    "many-shards": _many_shards,
    "repeated-names": _repeated_names,
}


def magnitude_payloads(registry: Registry) -> dict[str, dict[str, Any]]:
    """One decoded payload per class of :data:`MAGNITUDE_CLASSES`, by class name."""
    return {name: build(registry) for name, build in sorted(MAGNITUDE_CLASSES.items())}
