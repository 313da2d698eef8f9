"""The one table of the generators: each keyword the vocabulary marks as generated
(``refitwire.wire.KEYWORDS``, ``generated``), with its record from its family's module."""

from __future__ import annotations

from refitwire.compat.keywords import _arrays, _composed, _conditional, _objects, _scalars
from refitwire.compat.keywords._context import Generators

__all__ = ["TABLE"]

#: Every keyword's generators, by keyword (tests/compat/test_keywords.py holds the keys to the
#: vocabulary's generated keywords, both ways).
TABLE: dict[str, Generators] = {
    **_scalars.GENERATORS,
    **_arrays.GENERATORS,
    **_objects.GENERATORS,
    **_composed.GENERATORS,
    **_conditional.GENERATORS,
}
