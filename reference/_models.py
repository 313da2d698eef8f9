"""Typed, immutable views of the wire objects, generated from the wire model.

The fields of :class:`PublishedTensor` and :class:`PublishedShard` are the members of the
table's two levels in the newest schema the default registry knows (``refitwire.wire``), with the
schema's types, bounds and patterns: a member added to a schema file is a field here with
no code edit. Nothing is built at import: the two public names resolve on first use (module
``__getattr__``), from the default registry as it is then. Scalars are strict (no ``"12"``, no
``1.0``, no ``True``); arrays are tuples (lists or tuples accepted).
tests/test_models.py proves models and schema agree both ways.
Another registry (one with a candidate holding new members) has its own pair of classes,
built the same way from its newest model (:func:`table_classes`).

A model that cannot be built raises InvalidBlob, never pydantic's ValidationError: the
constructor (``PublishedShard(device_id=-1, ...)``) and the ``model_validate*`` methods name each problem
by its rule, at a pointer relative to the object being built (``/device_id``; ``""`` for a
missing member, as REQUIRED names the object that lacks it). The reader's own models are
filled without either (``refitwire._table``), so this costs the read nothing.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, TypeVar

from annotated_types import Interval
from pydantic import (
    BaseModel,
    ConfigDict,
    Strict,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    create_model,
)
from refitwire import _wire
from refitwire._errors import FrozenModel, InvalidBlob, Violation
from refitwire._wire import Member, Registry, SchemaFolderError, WireModel

__all__ = [
    "PublishedShard", "PublishedTensor", "RendezvousPayload", "TableClasses", "as_model", "classes_of", "table_classes",
    "table_levels",
]  # fmt: skip


if TYPE_CHECKING:
    from typing_extensions import Self


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _invalid(type(self), exc) from None

    # pydantic calls a model's own __init__ for every nested object unless it is marked as
    # pydantic's: marked, nested objects are validated in one pass and converted here, once
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from None

    @classmethod
    def model_validate_json(cls, json_data: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from None

    @classmethod
    def model_validate_strings(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate_strings(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from None

    # pydantic's frozen models refuse an assignment with its own ValidationError ("Instance is
    # frozen", a link to its docs): the library's error instead, naming the field
    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenModel.single("FROZEN", _wire.pointer(name), value, _FROZEN.format(type(self).__name__))

    def __delattr__(self, name: str) -> None:
        raise FrozenModel.single("FROZEN", _wire.pointer(name), None, _FROZEN.format(type(self).__name__))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update``, built by the constructor, so a new value is checked as
        there (pydantic's own copy takes any value unchecked and would make a model the
        constructor refuses)."""
        if not update:
            return super().model_copy(deep=deep)
        kept = {name: getattr(self, name) for name in self.model_fields_set}
        return type(self)(**{**(copy.deepcopy(kept) if deep else kept), **update})


_FROZEN = "{} is immutable: build another, e.g. with model_copy(update=...)"


def table_levels(model: WireModel) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The levels of a table entry and of its shards (``WireModel.table_at``)."""
    tensor = model.table_at()
    return tensor, model.table_at(*tensor)


_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}
_TUPLE: Any = tuple  # subscripted with types known only at run time
_ANNOTATED: Any = Annotated


def _annotation(member: Member, models: Mapping[tuple[str, ...], type[BaseModel]]) -> Any:
    if member.child is not None:
        return _TUPLE[models[member.child], ...]
    if member.types == ("array",) and member.items is not None:
        item = _annotation(member.items, models)
        return _TUPLE[item | None if member.items.nullable else item, ...]
    if len(member.types) != 1 or member.types[0] not in _SCALARS:
        return Any
    kind = member.types[0]
    constraints: list[Any] = [Strict()]
    low, high = _wire.integer_bounds(member.schema) if kind == "integer" else member.bounds
    if (
        low is not None or high is not None
    ):  # (not a Field: at pydantic 2.6 one in Annotated made `...` a default)
        constraints.append(Interval(ge=low, le=high))
    if member.pattern is not None and _compiles(member.pattern):
        constraints.append(StringConstraints(pattern=member.pattern))
    whole, fraction = (int, *constraints), (float, *constraints)
    if kind == "number":  # an integer stays an integer (1, not 1.0): read as written (SPEC section 6)
        return _ANNOTATED[whole] | _ANNOTATED[fraction]
    args = (_SCALARS[kind], *constraints)
    return _ANNOTATED[args]


@functools.cache
def _compiles(pattern: str) -> bool:
    """Whether pydantic's regex engine reads ``pattern``. One it cannot (a lookahead: ECMA-262 has
    them, its engine not) is left out of the model: every document is checked against the schema
    (jsonschema-rs) before it is read or written, pattern included."""
    try:
        TypeAdapter(Annotated[str, StringConstraints(pattern=pattern)])
    except Exception:  # pydantic_core.SchemaError, whose module is not public
        return False
    return True


def _build(
    newest: WireModel,
    level: tuple[str, ...],
    name: str,
    doc: str,
    models: dict[tuple[str, ...], type[BaseModel]],
) -> Any:
    fields: dict[str, Any] = {}
    for member in newest.level(*level).members:
        annotation = _annotation(member, models)
        if not member.in_decoded_form:  # a required constant: never given, written as itself
            fields[member.name] = (annotation, member.const)
        elif member.required and not member.nullable:
            fields[member.name] = (annotation, ...)
        else:  # absent and null are one thing to a model: None
            fields[member.name] = (annotation | None, None)
    # Members are fields under their wire names (the codec's hot paths read them by it), so a
    # name pydantic keeps for itself cannot be one: said as the schema's fault, not a traceback.
    where = f"{newest.document} {newest.version}, the members of {_wire.pointer(*level)}"
    kept = [m for m in fields if m.startswith("_") or (m.startswith("model_") and hasattr(BaseModel, m))]
    if kept:
        why = f"{', '.join(map(repr, kept))}: a leading '_' or a name of BaseModel's own"
        raise SchemaFolderError(f"{where}: names the reference's models cannot hold ({why})")
    try:
        built: Any = create_model(name, __base__=_Wire, __module__=__name__, __doc__=doc, **fields)
    except (NameError, TypeError, ValueError) as exc:  # another name pydantic refuses
        raise SchemaFolderError(f"{where}: names the reference's models cannot hold ({exc})") from None
    # the newest model this class was built from and the level its fields are the members of; set
    # on the built class, never declared on _Wire (pydantic 2.6 took an underscore ClassVar under
    # ``from __future__ import annotations`` for a private attribute: every model it then built
    # held ``__pydantic_private__ == {}`` and compared unequal to the reader's, which hold None)
    built._wire_place = (newest, level)
    models[level] = built
    return built


if TYPE_CHECKING:  # what static checkers see; tests/test_models.py holds it to the generated fields

    class PublishedShard(_Wire):
        agent_name: str
        device_id: int
        addr: int
        shard_offset: tuple[int, ...]
        shape: tuple[int, ...]
        digest: str | None = None

        def __getattr__(self, name: str) -> Any: ...

    class PublishedTensor(_Wire):
        name: str
        dtype: str
        elsize: int
        full_shape: tuple[int, ...]
        shards: tuple[PublishedShard, ...]

        def __getattr__(self, name: str) -> Any: ...


@dataclass(frozen=True)
class TableClasses:
    """The model classes of a table entry and of its shard (and of any other level), built from
    one newest model."""

    model: WireModel
    tensor: type[PublishedTensor]
    shard: type[PublishedShard]
    tensor_level: tuple[str, ...]
    shard_level: tuple[str, ...]
    #: every level's class, the two above included: a level a later schema adds has its own
    levels: Mapping[tuple[str, ...], type[BaseModel]]


#: The class names and docstrings of the table's two levels; any other level (an array of objects
#: a later schema adds) is named after its member.
_TENSOR_DOC = "One source tensor and the shards of it that a publisher holds."
_SHARD_DOC = "One box of a tensor: ``shape`` elements from ``shard_offset``, row-major at ``addr``."


@functools.cache
def table_classes(newest: WireModel) -> TableClasses:
    """The classes whose fields are the members of ``newest``'s levels below the top (one set per
    model), built deepest first so that each level's class exists before the level holding it."""
    tensor_level, shard_level = table_levels(newest)
    named = {tensor_level: ("PublishedTensor", _TENSOR_DOC), shard_level: ("PublishedShard", _SHARD_DOC)}
    models: dict[tuple[str, ...], type[BaseModel]] = {}
    for level in sorted((path for path in newest.levels if path), key=len, reverse=True):
        title = "".join(part.title() for part in level[-1].split("_"))
        name, doc = named.get(level, (f"Published{title}", f"One item of ``{_wire.pointer(*level)}``."))
        _build(newest, level, name, doc, models)
    return TableClasses(newest, models[tensor_level], models[shard_level], tensor_level, shard_level, models)  # type: ignore[arg-type]


def classes_of(registry: Registry) -> TableClasses:
    """The model classes of ``registry`` (the default registry's are PublishedTensor and PublishedShard)."""
    return table_classes(registry.newest_model())


if TYPE_CHECKING:
    M = TypeVar("M", PublishedShard, PublishedTensor)
else:
    M = TypeVar("M", bound=BaseModel)

    def __getattr__(name: str) -> Any:
        # PublishedShard and PublishedTensor: the default registry's, built when first asked for
        if name in ("PublishedShard", "PublishedTensor"):
            classes = classes_of(_wire.default_registry())
            return classes.shard if name == "PublishedShard" else classes.tensor
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class RendezvousPayload(NamedTuple):
    """What ``unwrap_rendezvous_blob`` returns. Positions 0-3 never move; new fields are appended.

    Top-level optional members other than ``publisher_step`` (members a later schema added)
    are in ``optional_members`` and read as attributes too (``payload.publisher_rank``).
    """

    agent_metadata: bytes
    agent_name: str
    metadata_endpoint: str
    tensors: Sequence[PublishedTensor]  # a list, or a LazyTable with unwrap(..., lazy=True)
    publisher_step: int | None = None  # None means unknown, never step 0
    tensor_count: int | None = None  # set when the table was counted, not decoded
    optional_members: Mapping[str, Any] = {}
    #: the top-level members the reader's registry knows at its newest version: each reads as an
    #: attribute, None when the blob has none
    known_members: Container[str] = frozenset()  # (the newest model's top Level, read by name)

    def entry_count(self) -> int:
        return len(self.tensors) if self.tensor_count is None else self.tensor_count

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and (name in self.optional_members or name in self.known_members):
            return self.optional_members.get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def as_model(model: type[M], obj: Any, at: tuple[str | int, ...]) -> M:
    """``obj`` as exactly a ``model`` (a registry's PublishedTensor or PublishedShard): a mapping
    with its fields, or an instance of it or of a subclass (read by field name, extras left behind).

    What does not convert raises InvalidBlob, never pydantic's ValidationError: each
    problem becomes a violation at ``at`` + its place in ``obj``, named by the rule the
    schema gives that member (REQUIRED, TYPE, INTEGER_LITERAL, WRITE_KNOWN_MEMBERS, or
    the member's range or pattern rule).
    """
    if type(obj) is model:
        return obj
    try:  # (model_validate without its wrapper's frame: the writer takes this path per dict)
        validated: M = model.__pydantic_validator__.validate_python(obj, from_attributes=True)
    except ValidationError as exc:
        raise _invalid(model, exc, at) from None
    return validated


def _invalid(model: type[BaseModel], exc: ValidationError, at: tuple[str | int, ...] = ()) -> InvalidBlob:
    """pydantic's errors building ``model`` as violations, at ``at`` + each one's place in the object."""
    newest, level = getattr(model, "_wire_place", None) or (None, ())
    found = []
    for e in exc.errors():
        place, detail = e["loc"], e["msg"]
        if e["type"] == "missing":  # REQUIRED names the object, and the member it lacks
            place, detail = place[:-1], f"{json.dumps(place[-1])} is a required property"
        found.append(
            Violation(_rule_of(e, level, newest), _wire.pointer(*at, *place), e.get("input"), detail)
        )
    return InvalidBlob(found)


def _rule_of(error: Any, level: tuple[str, ...], newest: WireModel | None) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "missing":
        return "REQUIRED"
    if kind == "extra_forbidden":
        return "WRITE_KNOWN_MEMBERS"
    if kind == "json_invalid":  # model_validate_json
        return "JSON"
    if kind == "int_type" and type(value) is float and value.is_integer():
        return "INTEGER_LITERAL"
    if kind.endswith("_type") or kind in ("is_instance_of", "model_attributes_type") or newest is None:
        return "TYPE"
    # the level's path with an index per array, then the place inside the object
    path: list[str | int] = []
    for step in level:
        path += [step, 0]
    return newest.rule_at("", [*path, *error["loc"]])
