"""The table ``unwrap_rendezvous_blob(..., lazy=True)`` hands back: checked whole, built on read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from refitwire._validate import table_models
from refitwire._wire import Registry

if TYPE_CHECKING:
    from refitwire._models import PublishedTensor

__all__ = ["LazyTable"]


class LazyTable(Sequence["PublishedTensor"]):
    """A checked table whose models are built on first read (``unwrap(..., lazy=True)``).

    Every rule has already been checked; reading an entry only fills its models. Supports
    what a receiver does with a table: ``len``, indexing, slicing, iteration and ``==``
    against a list, a tuple or another table. It is read-only, and pickles as the list of
    its models.
    """

    __slots__ = ("_built", "_entries", "_registry", "_typed", "_version")

    def __init__(self, entries: Sequence[Any], version: str, *, typed: bool, registry: Registry) -> None:
        self._entries = entries
        self._version = version
        self._typed = typed
        self._registry = registry
        self._built: list[PublishedTensor | None] = [None] * len(entries)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> PublishedTensor: ...
    @overload
    def __getitem__(self, index: slice) -> list[PublishedTensor]: ...
    def __getitem__(self, index: int | slice) -> PublishedTensor | list[PublishedTensor]:
        if isinstance(index, slice):
            return self._models(range(*index.indices(len(self))))
        return self._models([range(len(self))[index]])[0]  # a negative index, or an IndexError

    def __iter__(self) -> Iterator[PublishedTensor]:
        return iter(self._models(range(len(self))))

    def _models(self, indices: Sequence[int]) -> list[PublishedTensor]:
        """The models of ``indices``, those not built yet built in one call: one entry a call
        costs about twice as much a model (19,300 MoE entries: 166 against 94 ms)."""
        missing = [i for i in indices if self._built[i] is None]
        if missing:
            models = table_models(
                [self._entries[i] for i in missing], self._version, typed=self._typed, registry=self._registry
            )
            for i, model in zip(missing, models, strict=True):
                self._built[i] = model
        return [self._built[i] for i in indices]  # type: ignore[misc]  # every one built above

    def entries_as_read(self) -> Sequence[Any]:
        """Every entry as the checked read holds it, no model built: for a reader that only
        looks (compares geometry, collects digests) and does not keep what it looks at.

        Each entry reads by attribute as its model does, for every member the model has
        (``name``, ``full_shape``, ``shards``, and each shard's ``addr``, ``digest``, ...; arrays
        as tuples, an absent optional member as ``None``, and so one only a later version or a
        candidate declares), and cannot be changed.
        A blob the fast typed read could not vouch for (see ``refitwire._typed``) was read as
        plain dicts: then this builds the models.
        """
        return self._entries if self._typed else list(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (list, tuple, LazyTable)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[list[PublishedTensor]], tuple[list[PublishedTensor]]]:
        # Pickled (to a worker process, say) as the plain list of its models.
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"LazyTable({len(self)} entries)"
