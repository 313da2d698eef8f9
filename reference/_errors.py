"""The one error type a reader raises on bad input, and the record it carries."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from refitwire._wire import SchemaFolderError, show_pointer

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclass(frozen=True)
class Violation:
    """One broken rule: its ID from SPEC.md, where it broke, and the offending value."""

    rule: str
    pointer: str
    value: Any
    detail: str

    def __str__(self) -> str:
        return f"{show_value(self.value)} at {show_pointer(self.pointer)}: {self.detail} [{self.rule}]"


class InvalidBlob(ValueError):
    """A blob (or table) broke one or more rules of the spec.

    The first violation is the headline: ``rule``, ``pointer`` and ``value`` are its fields.
    All of them are in ``violations``, in document order (``refitwire._validate.in_document_order``
    says exactly what that order is).
    """

    def __init__(self, violations: Sequence[Violation]) -> None:
        if not violations:
            raise TypeError("InvalidBlob needs at least one violation")
        self.violations = tuple(violations)
        first = self.violations[0]
        self.rule, self.pointer, self.value = first.rule, first.pointer, first.value
        more = len(self.violations) - 1
        super().__init__(str(first) + (f" (and {more} more)" if more else ""))

    def __reduce__(self) -> tuple[type[InvalidBlob], tuple[tuple[Violation, ...]]]:
        # Rebuilt from the violations (the default passes the message alone), so the error
        # survives pickling to and from a worker process, and ``copy``.
        return type(self), (self.violations,)

    @classmethod
    def single(cls, rule: str, pointer: str, value: Any, detail: str) -> Self:
        return cls([Violation(rule, pointer, value, detail)])


class FrozenModel(InvalidBlob):
    """An assignment to a field of one of the library's immutable models (``PublishedShard``,
    ``PublishedTensor``), or its deletion.

    No blob is at fault, so the rule, ``FROZEN``, is the library's own, not one of SPEC.md; the
    pointer names the field (``/addr``) and the value is the one that was being assigned. A
    model is changed by building another: ``model_copy(update=...)``, checked as the
    constructor checks (an ``InvalidBlob`` naming the rule a new value breaks).
    """


def as_json_value(value: Any) -> Any:
    """``value`` as JSON holds it: JSON values as they are (tuples as arrays), raw bytes as
    text (undecodable bytes as ``\\xNN``), the non-finite numbers, which JSON cannot hold, by
    name (``"NaN"``), and anything else as its ``str``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NON_FINITE[str(value)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {str(key): as_json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json_value(item) for item in value]
    return str(value)


_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def show_value(value: Any, limit: int = 60) -> str:
    """``value`` as a message shows it: as JSON (``"abc"``, ``[1, 2]``, ``null``), the
    non-finite numbers bare (``NaN``), characters that do not print (a BOM, a lone surrogate)
    escaped as JSON escapes them, cut to ``limit`` characters with ``...``. Only what is shown
    is converted: a whole document as the value costs its first ``limit`` characters."""
    text = _json_text(value, limit)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_text(value: Any, room: int) -> str:
    """``value`` as JSON text, stopped once it is longer than ``room`` (each level of nesting
    takes a character, so the depth is bounded too)."""
    if isinstance(value, dict):
        named = ((json.dumps(str(key), ensure_ascii=False) + ": ", item) for key, item in value.items())
        opening, closing, items = "{", "}", named
    elif isinstance(value, (list, tuple)):
        opening, closing, items = "[", "]", (("", v) for v in value)
    else:
        if isinstance(value, (str, bytes, bytearray, memoryview)) and len(value) > room:
            value = value[: room + 1]  # still longer than room, so cut where it is shown
        return json.dumps(value, ensure_ascii=False, default=as_json_value)
    text = opening
    for prefix, item in items:
        if len(text) > room:
            break
        text += ("" if text == opening else ", ") + prefix + _json_text(item, room - len(text))
    return text + closing


class LinesError(Exception):
    """The exchange with the child failed; the subclass says how."""


class NoReply(LinesError):
    """No reply line within the timeout."""


class ProcessExited(LinesError):
    """The child closed its reply stream (it exited) before replying."""


class ReplyTooLong(LinesError):
    """A reply line over the limit (the rest of the line is skipped)."""


class SpecError(SchemaFolderError):
    """SPEC.md has a table row (or a dtype list) this parser cannot read; the message names the line."""
