"""The rules of section 2.3 (and INTEGER_LITERAL) over a schema-valid table, in one pass that
also fills the table's models: the engine's table half (see ``refitwire._validate``)."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from refitwire._errors import Violation
from refitwire._models import TableClasses, classes_of, table_levels
from refitwire._nested import (
    as_builtins,
    as_models,
    deep_integers,
    holds_objects,
    member_literals,
)
from refitwire._spec import dtype_sizes
from refitwire._wire import Member, Registry, WireModel, pointer

if TYPE_CHECKING:
    from refitwire._models import PublishedTensor

__all__ = ["TableShape", "table_rules", "table_shape"]

_U64_LIMIT = 2**64


class _SharedFields(frozenset[str]):
    """The fields-set every model the reader fills shares (one per model costs a quarter of a
    decode). pydantic copies it before it adds to it (``model_copy(update=...)``): a copy is
    a plain set of the copy's own, so the shared one never changes."""

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)


def _slot_setter(name: str) -> Any:
    """The setter of a pydantic model's own slot (``__dict__``, ``__pydantic_extra__``, ...).

    Calling it fills a model's slot exactly as ``model_construct`` does, at half the cost
    of ``object.__setattr__`` with the name (which is looked up again on every call).
    """
    owner = next(k for k in BaseModel.__mro__ if name in vars(k))
    return vars(owner)[name].__set__


_SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE = map(
    _slot_setter, ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
)


@dataclass(frozen=True)
class TableShape:
    """What the table pass needs of one version's model beyond the members its rules read.

    The rules of section 2.3 name the members they are about; every other member (optional
    ones, and members a later schema adds) is carried into the models generically: a member
    the version declares is copied, one it does not is ``None``.
    """

    shard_known: tuple[str, ...]
    shard_unknown: tuple[str, ...]
    tensor_known: tuple[str, ...]
    tensor_unknown: tuple[str, ...]
    integers: tuple[tuple[Member, ...], tuple[Member, ...]]  # members holding integers: (tensor, shard)
    classes: TableClasses  # the models filled (the registry's PublishedTensor and PublishedShard)
    shard_fields: frozenset[str]  # the fields-set each shard model shares (see _SharedFields)
    tensor_fields: frozenset[str]
    #: Whether the version gives every member the rules read a shape they can read (required,
    #: of a JSON type they compute with): always for a release; a candidate that makes ``addr`` a
    #: string or a member optional is checked by its schema alone (those rules cannot be read there).
    ruled: bool
    #: Element sizes of the dtype labels the registry's SPEC.md knows (ELSIZE_DTYPE).
    dtype_sizes: Mapping[str, int]
    #: Known members of a tensor and of a shard holding a level of their own (an array of
    #: objects a later schema adds), with that level: read as its models, as the shards are.
    nested: tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, tuple[str, ...]], ...]] = ((), ())
    #: Members of a tensor and of a shard with integers deeper than the summed ``integers``
    #: reach (inside an object, an array of arrays, a level of their own): looked at one by one.
    deep: tuple[tuple[Member, ...], tuple[Member, ...]] = ((), ())
    model: WireModel | None = None
    #: Members of a tensor and of a shard holding objects that are not a level (an object
    #: member): the typed read holds them as structs, the models as plain dicts, as JSON has them.
    objects: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


#: The members the rules of section 2.3 read, per level (the rest are carried generically).
_TENSOR_RULED = ("name", "dtype", "elsize", "full_shape", "shards")
_SHARD_RULED = ("agent_name", "device_id", "addr", "shard_offset", "shape")


def table_shape(document: str, version: str, registry: Registry) -> TableShape:
    """The shape of ``document`` at ``version`` in ``registry`` (default: the default registry)."""
    return _table_shape(document, version, registry)


@functools.cache
def _table_shape(document: str, version: str, registry: Registry) -> TableShape:
    # kept per registry (registries are immutable), never per "the default one"
    model = registry.wire_model(document, version)
    return shape_of(model, classes_of(registry), dtype_sizes(registry, version))


#: What the rules of section 2.3 can read a member as: the JSON types they compute with (a
#: number where a release says integer: the sums and bounds hold for any number).
_RULED_TYPES = {"shards": {"array"}, "name": {"string"}, "dtype": {"string"}, "agent_name": {"string"},
                "shard_offset": {"array"}, "shape": {"array"}, "full_shape": {"array"}}  # fmt: skip
_NUMBERS = {"integer", "number"}


def _reads_as_ruled(model: WireModel, tensor_level: tuple[str, ...], shard_level: tuple[str, ...]) -> bool:
    top = model.top
    if tensor_level[0] not in top or not top[tensor_level[0]].required:
        return False
    for level, ruled in ((tensor_level, _TENSOR_RULED), (shard_level, _SHARD_RULED)):
        declared = model.level(*level)
        for name in ruled:
            if name not in declared:
                return False
            member, wanted = declared[name], _RULED_TYPES.get(name, _NUMBERS)
            if not member.required or member.nullable or not member.types or not set(member.types) <= wanted:
                return False
    return True


def shape_of(model: WireModel, classes: TableClasses, sizes: Mapping[str, int]) -> TableShape:
    """What the table pass needs of ``model``, filling ``classes``' models, with the dtype ``sizes``
    of its registry's SPEC.md (kept by :func:`table_shape`, per registry and version)."""
    tensor_level, shard_level = table_levels(model)
    shapes = []  # (known, unknown) for the tensor level, then the shard level
    for level, fields, ruled in ((tensor_level, classes.tensor.model_fields, _TENSOR_RULED),
                                 (shard_level, classes.shard.model_fields, _SHARD_RULED)):  # fmt: skip
        declared = model.level(*level)
        rest = [name for name in fields if name not in ruled]
        shapes.append((tuple(n for n in rest if n in declared), tuple(n for n in rest if n not in declared)))
    integers = tuple(
        tuple(m for m in model.level(*level).members if m.holds_integers)
        for level in (tensor_level, shard_level)
    )
    (tensor_known, tensor_unknown), (shard_known, shard_unknown) = shapes
    nested = tuple(
        tuple((m.name, m.child) for m in model.level(*level).members if m.child not in (None, shard_level))
        for level in (tensor_level, shard_level)
    )  # fmt: skip
    deep = tuple(
        tuple(m for m in model.level(*level).members if m.child != shard_level and deep_integers(m))
        for level in (tensor_level, shard_level)
    )
    objects = tuple(
        tuple(m.name for m in model.level(*level).members if m.child is None and holds_objects(m.schema))
        for level in (tensor_level, shard_level)
    )
    return TableShape(
        shard_known, shard_unknown, tensor_known, tensor_unknown, integers,  # type: ignore[arg-type]
        classes, _SharedFields(classes.shard.model_fields), _SharedFields(classes.tensor.model_fields),
        _reads_as_ruled(model, tensor_level, shard_level), sizes, nested, deep, model, objects,  # type: ignore[arg-type]
    )  # fmt: skip


def table_rules(
    entries: Sequence[Any], shape: TableShape, out: list[PublishedTensor] | None, typed: bool = False
) -> Iterator[Violation]:
    """The rules of section 2.3 and INTEGER_LITERAL over a schema-valid table, entry by entry.

    Every member is there with its JSON type (the schema has passed); JSON Schema counts
    4096.0 as an integer, so each entry's integers are summed as they are read: a float
    anywhere makes the sum a float, and only then is the entry searched for it. With
    ``out``, each entry's models are appended as it is checked, filled the way
    ``model_construct`` fills them (the caller drops them if anything is yielded).
    ``typed``: the entries are the fast path's Structs (``_typed``), read by attribute,
    not parsed dicts; the code is the same. ``shape``: :func:`table_shape` of the version.
    """
    new, limit = object.__new__, _U64_LIMIT
    set_dict, set_fields_set, set_extra, set_private = _SET_DICT, _SET_FIELDS_SET, _SET_EXTRA, _SET_PRIVATE
    le, add, prod = operator.le, operator.add, math.prod
    shard_set, tensor_set, sizes = shape.shard_fields, shape.tensor_fields, shape.dtype_sizes
    shard_class, tensor_class = shape.classes.shard, shape.classes.tensor
    literals = not typed  # the typed decode takes no 4096.0 for an integer: nothing to sum
    get = operator.attrgetter if typed else operator.itemgetter
    tensor_fields = get("full_shape", "elsize", "dtype", "shards", "name")
    # The first optional member rides in the same getter and the same dict display as the
    # rules' members (most versions have one: this is the hot loop); with none, the display
    # repeats "agent_name". Any further ones are copied one by one.
    first = shape.shard_known[0] if shape.shard_known else "agent_name"
    more_known, tensor_known = shape.shard_known[1:], shape.tensor_known
    shard_fields: Callable[[Any], tuple[Any, ...]]
    if typed:
        shard_fields = get("shard_offset", "shape", "addr", "device_id", "agent_name", first)
    else:  # a parsed dict may lack an optional member

        def shard_fields(shard: Any) -> tuple[Any, ...]:
            return (shard["shard_offset"], shard["shape"], shard["addr"], shard["device_id"], shard["agent_name"],
                    shard.get(first))  # fmt: skip

    shard_absent, tensor_absent = dict.fromkeys(shape.shard_unknown), dict.fromkeys(shape.tensor_unknown)
    # the integers of members beyond the rules' own count towards the INTEGER_LITERAL sum too
    tensor_counted = [m.name for m in shape.integers[0] if m.name not in _TENSOR_RULED]
    shard_counted = [m.name for m in shape.integers[1] if m.name not in _SHARD_RULED]
    shard_rest, tensor_rest = bool(more_known or shard_absent), bool(tensor_known or tensor_absent)
    tensor_nested, shard_nested = shape.nested
    tensor_deep, shard_deep = shape.deep if literals else ((), ())
    tensor_objects, shard_objects = shape.objects if typed else ((), ())
    sized: dict[tuple[str, int], int] = {}  # (dtype, elsize) -> the size it should be, 0 if right
    t = -1
    for entry in entries:
        t += 1
        full, elsize, dtype, entry_shards, name = tensor_fields(entry)
        wrong = sized.get((dtype, elsize), -1)
        if wrong < 0:
            known = sizes.get(dtype.removeprefix("torch."))
            wrong = sized[(dtype, elsize)] = known if known is not None and known != elsize else 0
        if wrong:
            yield Violation(
                "ELSIZE_DTYPE", pointer("tensors", t, "elsize"), elsize, f"{dtype} elements are {wrong} bytes"
            )
        rank = len(full)
        total = elsize + sum(full) if literals else 0
        if type(total) is float:  # 2.0 (INTEGER_LITERAL, reported in its place): its value, exactly
            elsize, full = _exact(elsize), [_exact(size) for size in full]
        if literals and tensor_counted:
            for member in tensor_counted:
                total += _number(entry.get(member))
        shards = []
        s = -1
        for shard in entry_shards:
            s += 1
            offset, shape_, addr, device_id, agent_name, first_value = shard_fields(shard)
            if literals:
                total += device_id + addr + sum(offset) + sum(shape_)
                if type(total) is float:  # (the geometry in floats would round: 2^64 - 8 + 32 is 2^64)
                    addr, offset, shape_ = _exact(addr), [*map(_exact, offset)], [*map(_exact, shape_)]
                if shard_counted:
                    for member in shard_counted:
                        total += _number(shard.get(member))
                if shard_deep:
                    yield from member_literals(shard, shard_deep, shape.model, ("tensors", t, "shards", s))
            if len(offset) != rank or len(shape_) != rank:
                yield Violation(
                    "RANK_AGREEMENT", pointer("tensors", t, "shards", s), [len(offset), len(shape_), rank],
                    f"shard_offset has {len(offset)} dims, shape {len(shape_)}, full_shape {rank}",
                )  # fmt: skip
                continue
            if rank == 2:  # most weights: the same tests, unrolled
                (o0, o1), (e0, e1) = offset, shape_
                if o0 + e0 > full[0] or o1 + e1 > full[1]:
                    yield from _boxes_out_of_bounds(offset, shape_, full, t, s)
                if addr + elsize * e0 * e1 > limit:
                    yield _addr_span(addr, elsize * e0 * e1, t, s)
            else:
                if not all(map(le, map(add, offset, shape_), full)):
                    yield from _boxes_out_of_bounds(offset, shape_, full, t, s)
                if addr + elsize * prod(shape_) > limit:
                    yield _addr_span(addr, elsize * prod(shape_), t, s)
            if out is not None:
                model = new(shard_class)
                fields = {
                    "agent_name": agent_name, "device_id": device_id, "addr": addr,
                    "shard_offset": offset if typed else tuple(offset), "shape": shape_ if typed else tuple(shape_),
                    first: first_value,
                }  # fmt: skip
                if shard_rest:  # members beyond the first optional one, or ones the version lacks
                    for member in more_known:
                        fields[member] = getattr(shard, member) if typed else shard.get(member)
                    fields.update(shard_absent)
                if shard_nested:  # (the first optional member may be one)
                    as_models(fields, shard_nested, shape.model, shape.classes.levels)
                if shard_objects:
                    as_builtins(fields, shard_objects)
                set_dict(model, fields)
                set_fields_set(model, shard_set)
                set_extra(model, None)
                set_private(model, None)
                shards.append(model)
        if type(total) is float:  # a summed member written with a fraction: which, and where
            tensor_integers, shard_integers = shape.integers
            yield from member_literals(entry, tensor_integers, shape.model, ("tensors", t))
            for j, item in enumerate(entry_shards):
                yield from member_literals(item, shard_integers, shape.model, ("tensors", t, "shards", j))
        if tensor_deep:
            yield from member_literals(entry, tensor_deep, shape.model, ("tensors", t))
        if out is not None:
            tensor = new(tensor_class)
            fields = {
                "name": name, "dtype": dtype, "elsize": elsize,
                "full_shape": full if typed else tuple(full), "shards": tuple(shards),
            }  # fmt: skip
            if tensor_rest:
                for member in tensor_known:
                    fields[member] = getattr(entry, member) if typed else entry.get(member)
                fields.update(tensor_absent)
                if tensor_nested:
                    as_models(fields, tensor_nested, shape.model, shape.classes.levels)
                if tensor_objects:
                    as_builtins(fields, tensor_objects)
            set_dict(tensor, fields)
            set_fields_set(tensor, tensor_set)
            set_extra(tensor, None)
            set_private(tensor, None)
            out.append(tensor)


def _exact(value: Any) -> Any:
    return int(value) if type(value) is float else value


def _number(value: Any) -> Any:
    """An optional integer member's contribution to the sum: 0 when absent, the items' sum for an array."""
    if value is None:
        return 0
    return sum(value) if type(value) is list or type(value) is tuple else value


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
