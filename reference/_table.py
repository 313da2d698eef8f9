"""The rules of section 2.3 (and INTEGER_LITERAL) over a schema-valid table, in one pass that
also fills the table's models: the engine's table half (see ``refitwire._validate``)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from refitwire._errors import Violation, pointer
from refitwire._models import PublishedShard, PublishedTensor
from refitwire._spec import DTYPE_SIZES

__all__ = ["not_integer_literal", "table_rules"]

_U64_LIMIT = 2**64


class _SharedFields(frozenset[str]):
    """The fields-set every model the reader fills shares (one per model costs a quarter of a
    decode). pydantic copies it before it adds to it (``model_copy(update=...)``): a copy is
    a plain set of the copy's own, so the shared one never changes."""

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)


_SHARD_FIELDS = _SharedFields(PublishedShard.model_fields)
_TENSOR_FIELDS = _SharedFields(PublishedTensor.model_fields)


def _slot_setter(name: str) -> Any:
    """The setter of a pydantic model's own slot (``__dict__``, ``__pydantic_extra__``, ...).

    Calling it fills a model's slot exactly as ``model_construct`` does, at half the cost
    of ``object.__setattr__`` with the name (which is looked up again on every call).
    """
    owner = next(k for k in PublishedShard.__mro__ if name in vars(k))
    return vars(owner)[name].__set__


_SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE = map(
    _slot_setter, ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
)


def table_rules(
    entries: Sequence[Any], with_digest: bool, out: list[PublishedTensor] | None, typed: bool = False
) -> Iterator[Violation]:
    """The rules of section 2.3 and INTEGER_LITERAL over a schema-valid table, entry by entry.

    Every member is there with its JSON type (the schema has passed); JSON Schema counts
    4096.0 as an integer, so each entry's integers are summed as they are read: a float
    anywhere makes the sum a float, and only then is the entry searched for it. With
    ``out``, each entry's models are appended as it is checked, filled the way
    ``model_construct`` fills them (the caller drops them if anything is yielded).
    ``typed``: the entries are the fast path's Structs (``_typed``), read by attribute,
    not parsed dicts; the code is the same.
    """
    new, limit = object.__new__, _U64_LIMIT
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE
    le, add, prod = operator.le, operator.add, math.prod
    shard_set, tensor_set = _SHARD_FIELDS, _TENSOR_FIELDS
    literals = not typed  # the typed decode takes no 4096.0 for an integer: nothing to sum
    get = operator.attrgetter if typed else operator.itemgetter
    tensor_fields = get("full_shape", "elsize", "dtype", "shards", "name")
    shard_fields: Callable[[Any], tuple[Any, ...]] = _dict_shard_fields
    if typed:  # a Struct has the members its version knows; without digest, the sixth is unused
        shard_fields = get("shard_offset", "shape", "addr", "device_id", "agent_name",
                           "digest" if with_digest else "agent_name")  # fmt: skip
    sized: dict[tuple[str, int], int] = {}  # (dtype, elsize) -> the size it should be, 0 if right
    t = -1
    for entry in entries:
        t += 1
        full, elsize, dtype, entry_shards, name = tensor_fields(entry)
        wrong = sized.get((dtype, elsize), -1)
        if wrong < 0:
            known = DTYPE_SIZES.get(dtype.removeprefix("torch."))
            wrong = sized[(dtype, elsize)] = known if known is not None and known != elsize else 0
        if wrong:
            yield Violation(
                "ELSIZE_DTYPE", pointer("tensors", t, "elsize"), elsize, f"{dtype} elements are {wrong} bytes"
            )
        rank = len(full)
        total = elsize + sum(full) if literals else 0
        shards = []
        s = -1
        for shard in entry_shards:
            s += 1
            offset, shape, addr, device_id, agent_name, digest = shard_fields(shard)
            if literals:
                total += device_id + addr + sum(offset) + sum(shape)
            if len(offset) != rank or len(shape) != rank:
                yield Violation(
                    "RANK_AGREEMENT", pointer("tensors", t, "shards", s), [len(offset), len(shape), rank],
                    f"shard_offset has {len(offset)} dims, shape {len(shape)}, full_shape {rank}",
                )  # fmt: skip
                continue
            if rank == 2:  # most weights: the same tests, unrolled
                (o0, o1), (e0, e1) = offset, shape
                if o0 + e0 > full[0] or o1 + e1 > full[1]:
                    yield from _boxes_out_of_bounds(offset, shape, full, t, s)
                if addr + elsize * e0 * e1 > limit:
                    yield _addr_span(addr, elsize * e0 * e1, t, s)
            else:
                if not all(map(le, map(add, offset, shape), full)):
                    yield from _boxes_out_of_bounds(offset, shape, full, t, s)
                if addr + elsize * prod(shape) > limit:
                    yield _addr_span(addr, elsize * prod(shape), t, s)
            if out is not None:
                model = new(PublishedShard)
                set_dict(model, {
                    "agent_name": agent_name, "device_id": device_id, "addr": addr,
                    "shard_offset": offset if typed else tuple(offset), "shape": shape if typed else tuple(shape),
                    "digest": digest if with_digest else None,
                })  # fmt: skip
                set_fields_set(model, shard_set)
                set_extra(model, None)
                set_private(model, None)
                shards.append(model)
        if type(total) is float:
            yield from _integer_literals(entry, t)
        if out is not None:
            tensor = new(PublishedTensor)
            set_dict(tensor, {
                "name": name, "dtype": dtype, "elsize": elsize,
                "full_shape": full if typed else tuple(full), "shards": tuple(shards),
            })  # fmt: skip
            set_fields_set(tensor, tensor_set)
            set_extra(tensor, None)
            set_private(tensor, None)
            out.append(tensor)


def _dict_shard_fields(shard: dict[str, Any]) -> tuple[Any, ...]:
    return (shard["shard_offset"], shard["shape"], shard["addr"], shard["device_id"], shard["agent_name"],
            shard.get("digest"))  # fmt: skip


def _boxes_out_of_bounds(
    offset: Sequence[int], shape: Sequence[int], full: Sequence[int], t: int, s: int
) -> Iterator[Violation]:
    for d, (start, extent, size) in enumerate(zip(offset, shape, full)):
        if start + extent > size:
            yield Violation(
                "BOX_IN_BOUNDS", pointer("tensors", t, "shards", s, "shape", d), extent,
                f"box [{start}, {start + extent}) exceeds full_shape[{d}] = {size}",
            )  # fmt: skip


def _addr_span(addr: int, nbytes: int, t: int, s: int) -> Violation:
    return Violation(
        "ADDR_SPAN", pointer("tensors", t, "shards", s, "addr"), addr,
        f"the shard's {nbytes} bytes run past the end of the 64-bit address space",
    )  # fmt: skip


def _integer_literals(entry: dict[str, Any], t: int) -> Iterator[Violation]:
    """Where an entry writes an integer with a fraction or exponent (rule INTEGER_LITERAL)."""
    for obj, at, members in [
        (entry, ("tensors", t), ("elsize", "full_shape")),
        *[
            (shard, ("tensors", t, "shards", s), ("device_id", "addr", "shard_offset", "shape"))
            for s, shard in enumerate(entry["shards"])
        ],
    ]:
        for member in members:
            value = obj[member]
            if type(value) is float:
                yield not_integer_literal(value, *at, member)
            elif type(value) is list or type(value) is tuple:  # a writer's own document holds tuples
                for d, item in enumerate(value):
                    if type(item) is float:
                        yield not_integer_literal(item, *at, member, d)


def not_integer_literal(value: float, *path: str | int) -> Violation:
    return Violation(
        "INTEGER_LITERAL", pointer(*path), value, "integers are written without a fraction or exponent"
    )
