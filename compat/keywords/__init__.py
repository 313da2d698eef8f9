"""Values of any member, by construction: one record per JSON Schema keyword.

Laid out like ``jsonschema._keywords`` (one function per keyword), but generating instead of
validating. Each keyword the vocabulary (``refitwire.wire.KEYWORDS``) marks as generated has
one record (:class:`Generators`, in ``_table``): the values it proposes for a whole schema and
the values that break it alone, built in the module of its family (``_scalars``, ``_arrays``,
``_objects``, ``_composed``, ``_conditional``) from what every family shares (``_context``,
``_build``, ``_regex``), and handed a :class:`Context` through which it asks for a subschema's
values and breaks instead of importing the functions that call it. For a member's (resolved)
subschema:

* :func:`domain` gives valid values that span it: every ``enum`` value, the ``const``, both
  bounds of a number and one between, the shortest and the longest string, the empty and the
  full array and one array per value its items may take, an object with only its required
  members, with every optional one, and with each inner member at each value;
* :func:`breaks` gives, per keyword, values that break exactly that keyword: each is checked
  with jsonschema-rs (the validator the reference uses), whose only error for it must be that
  keyword at the place the :class:`Break` names (relative to the value; the rule and the JSON
  pointer are the wire model's for that place: ``WireModel.rule_at``, ``wire.pointer``).

A keyword no generator knows raises :class:`UnhandledKeyword`, naming it: a schema that uses a
new keyword fails the build, it is never skipped; one the kit does not model at all carries the
vocabulary's reason, the one the gate gives when it reports its change as
``UNCLASSIFIED_CHANGE``. A keyword no value can break alone (``minLength: 0``, a ``maxLength``
its pattern already implies) has no break; :func:`unbreakable` names those, so a report can say so.
"""

from __future__ import annotations

from refitwire.compat.keywords._context import (
    SAMPLES,
    Break,
    Context,
    Generators,
    UnhandledKeyword,
    wrong_values,
)
from refitwire.compat.keywords._generate import (
    breaks,
    check_keywords,
    domain,
    level_breaks,
    level_domain,
    unbreakable,
)
from refitwire.compat.keywords._table import TABLE

__all__ = [
    "SAMPLES",
    "TABLE",
    "Break",
    "Context",
    "Generators",
    "UnhandledKeyword",
    "breaks",
    "check_keywords",
    "domain",
    "level_breaks",
    "level_domain",
    "unbreakable",
    "wrong_values",
]
