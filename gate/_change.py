"""What the walk reports: one :class:`Change`, and the keyword sets the walk sorts keywords into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from refitwire.gate._rules import Direction, Rule

ANNOTATIONS = frozenset(
    {
        "$schema",
        "$comment",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$anchor",
    }
)
#: Keywords expected to change with every version; not reported.
_VERSION_STAMPS = frozenset({"$id", "x-spec-version"})
_MODELLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "pattern",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "unevaluatedProperties",
        "items",
        "$ref",
        "$defs",
        "definitions",
        "x-added-in",
    }
)
_LENGTHS = (("minLength", "maxLength"), ("minItems", "maxItems"), ("minProperties", "maxProperties"))
_JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


@dataclass(frozen=True)
class Change:
    """One change between two schema documents, named by the catalogue's :class:`Rule` (a ``str``)."""

    rule: Rule
    pointer: str
    path: str
    detail: str
    old: Any = None
    new: Any = None

    @property
    def directions(self) -> tuple[Direction, ...]:
        """The directions this change breaks, as the rule catalogue says."""
        return self.rule.directions

    @property
    def severity(self) -> str:
        return self.rule.severity

    @property
    def breaking(self) -> bool:
        return self.rule.breaking


# -- types and nullability -------------------------------------------------------------
