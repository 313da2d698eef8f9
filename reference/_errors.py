"""The one error type a reader raises on bad input, and the record it carries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from refitwire.wire import show_pointer


@dataclass(frozen=True)
class Violation:
    """One broken rule: its ID from SPEC.md, where it broke, and the offending value."""

    rule: str
    pointer: str
    value: Any
    detail: str

    def __str__(self) -> str:
        return f"{_short(self.value)} at {show_pointer(self.pointer)}: {self.detail} [{self.rule}]"


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
    def single(cls, rule: str, pointer: str, value: Any, detail: str) -> InvalidBlob:
        return cls([Violation(rule, pointer, value, detail)])


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
