"""What the walk reports: one :class:`Change`, and the keyword sets the walk sorts keywords into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from refitwire.gate._rules import Direction, Rule
from refitwire.wire import JSON_TYPES, KEYWORDS, length_pairs

#: Keywords that never change which instances validate (ANNOTATION_CHANGED when one does).
ANNOTATIONS = frozenset(
    name
    for name, keyword in KEYWORDS.items()
    if not keyword.asserts and not keyword.per_version and keyword.kind != "ours"
)
#: Keywords expected to change with every version; not reported.
_VERSION_STAMPS = frozenset(name for name, keyword in KEYWORDS.items() if keyword.per_version)
#: Keywords the gate compares under rules of its own; any other asserting one is UNCLASSIFIED_CHANGE.
_MODELLED = frozenset(name for name, keyword in KEYWORDS.items() if keyword.classified)
_LENGTHS = length_pairs()
_JSON_TYPES = frozenset(JSON_TYPES)


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
