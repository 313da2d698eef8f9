"""The keywords a schema may hold, described once: one record per keyword of JSON Schema 2020-12
and of our own ``x-`` keywords, read by the gate, the value generators and the wire model.

Each record says what the keyword is (its kind), where its subschemas lie (its descent), and
which parts of the kit model it: the gate classifies each of its changes under a rule of its
own, the generators build values that satisfy and break it, the reader's typed fast path
translates it. A keyword no part of the kit models (``unevaluatedItems``, ``$dynamicRef``, or a
name that is no keyword at all) has one reason, :func:`unmodelled_reason`: the gate reports its
change as ``UNCLASSIFIED_CHANGE`` with it and the generators refuse a schema holding it with it,
so neither skips it silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["KEYWORDS", "Keyword", "asserting", "asserts_nothing", "length_pairs", "unmodelled_reason"]

Kind = Literal["core", "assertion", "applicator", "annotation", "ours"]
#: Where a keyword's subschemas lie in its value: one subschema, a list of them, a map of them.
Descent = Literal["schema", "list", "map"]
#: What a bound counts (a length pair is a lower and an upper bound of the same count).
Counts = Literal["value", "characters", "items", "members", "matches"]


@dataclass(frozen=True)
class Keyword:
    """One keyword: what it is, where its subschemas lie, and what of the kit models it."""

    name: str
    kind: Kind
    #: where its subschemas lie (an applicator's, ``$defs``'), None when it holds none
    descent: Descent | None = None
    #: the gate compares it under rules of its own; otherwise a change of it is UNCLASSIFIED_CHANGE
    classified: bool = False
    #: the generators build values that satisfy it and values that break it alone
    generated: bool = False
    #: the reader's typed fast path translates it (or, holding no check, passes over it)
    fast_path: bool = False
    #: the lower or the upper bound of what it counts: of two given, the tighter one applies
    bound: Literal["lower", "upper"] | None = None
    #: what its bound counts
    counts: Counts | None = None
    #: it changes with every version (the document's identity), so a change of it is no finding
    per_version: bool = False

    @property
    def asserts(self) -> bool:
        """Whether it can change which instances validate (annotations and our keywords never do)."""
        return self.kind not in ("annotation", "ours") and self.name not in _IDENTIFYING

    @property
    def modelled(self) -> bool:
        """Whether some part of the kit models it (an annotation is modelled by asserting nothing)."""
        return self.classified or self.generated or not self.asserts


#: Core keywords that name or comment a schema and assert nothing.
_IDENTIFYING = frozenset({"$schema", "$id", "$comment", "$anchor"})


def _records() -> Iterator[Keyword]:
    core: Kind = "core"
    assertion: Kind = "assertion"
    applicator: Kind = "applicator"
    annotation: Kind = "annotation"
    ours: Kind = "ours"
    yield Keyword("$schema", core, fast_path=True)
    yield Keyword("$id", core, fast_path=True, per_version=True)
    yield Keyword("$comment", core, fast_path=True)
    yield Keyword("$anchor", core)
    yield Keyword("$ref", core, classified=True)
    yield Keyword("$defs", core, "map", classified=True, fast_path=True)
    yield Keyword("definitions", core, "map", classified=True)  # (draft 7's $defs, still read)
    yield from (Keyword(name, core) for name in ("$dynamicRef", "$dynamicAnchor", "$vocabulary"))
    yield Keyword("type", assertion, classified=True, generated=True, fast_path=True)
    yield Keyword("enum", assertion, classified=True, generated=True)
    yield Keyword("const", assertion, classified=True, generated=True, fast_path=True)
    yield Keyword(
        "minimum", assertion, classified=True, generated=True, fast_path=True, bound="lower", counts="value"
    )
    yield Keyword(
        "maximum", assertion, classified=True, generated=True, fast_path=True, bound="upper", counts="value"
    )
    yield Keyword(
        "exclusiveMinimum", assertion, classified=True, generated=True, bound="lower", counts="value"
    )
    yield Keyword(
        "exclusiveMaximum", assertion, classified=True, generated=True, bound="upper", counts="value"
    )
    yield Keyword("multipleOf", assertion, classified=True, generated=True)
    lengths: tuple[tuple[Counts, str, str], ...] = (
        ("characters", "minLength", "maxLength"),
        ("items", "minItems", "maxItems"),
        ("members", "minProperties", "maxProperties"),
    )
    for count, low, high in lengths:
        yield Keyword(low, assertion, classified=True, generated=True, bound="lower", counts=count)
        yield Keyword(high, assertion, classified=True, generated=True, bound="upper", counts=count)
    yield Keyword("pattern", assertion, classified=True, generated=True, fast_path=True)
    yield Keyword("uniqueItems", assertion, classified=True, generated=True)
    yield Keyword("required", assertion, classified=True, generated=True, fast_path=True)
    yield Keyword("dependentRequired", assertion, generated=True)
    yield Keyword("minContains", assertion, generated=True, bound="lower", counts="matches")
    yield Keyword("maxContains", assertion, generated=True, bound="upper", counts="matches")
    yield Keyword("properties", applicator, "map", classified=True, generated=True, fast_path=True)
    yield Keyword("additionalProperties", applicator, "schema", classified=True, generated=True)
    yield Keyword("unevaluatedProperties", applicator, "schema", classified=True, generated=True)
    yield Keyword("items", applicator, "schema", classified=True, generated=True, fast_path=True)
    yield Keyword("prefixItems", applicator, "list", generated=True)
    yield Keyword("contains", applicator, "schema", generated=True)
    yield from (Keyword(name, applicator, "list", generated=True) for name in ("anyOf", "oneOf", "allOf"))
    yield from (Keyword(name, applicator, "schema", generated=True) for name in ("not", "propertyNames"))
    yield from (Keyword(name, applicator, "schema", generated=True) for name in ("if", "then", "else"))
    yield from (
        Keyword(name, applicator, "map", generated=True) for name in ("patternProperties", "dependentSchemas")
    )
    yield Keyword("unevaluatedItems", applicator, "schema")
    for name in ("title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"):
        yield Keyword(name, annotation, fast_path=name in ("title", "description"))
    # annotations in 2020-12 as the reference validates them (jsonschema-rs asserts no format)
    yield from (Keyword(name, annotation) for name in ("format", "contentEncoding", "contentMediaType"))
    yield Keyword("contentSchema", annotation, "schema")
    yield Keyword("x-added-in", ours, classified=True, fast_path=True)
    yield from (Keyword(name, ours, fast_path=True) for name in ("x-rule", "x-wire-id"))
    yield Keyword("x-spec-version", ours, fast_path=True, per_version=True)


#: Every keyword the kit knows, by name, in the order of the records above.
KEYWORDS: dict[str, Keyword] = {record.name: record for record in _records()}


def asserts_nothing(name: str) -> bool:
    """Whether keyword ``name`` never changes which instances validate: an annotation, a core
    keyword that names or comments, or any ``x-`` keyword (ours, and any other's)."""
    record = KEYWORDS.get(name)
    return name.startswith("x-") or (record is not None and not record.asserts)


def asserting(names: Iterable[str]) -> list[str]:
    """The keywords among ``names`` (a schema's keys, in order) that may assert something."""
    return [name for name in names if not asserts_nothing(name)]


def unmodelled_reason(name: str) -> str | None:
    """Why the kit does not model keyword ``name``, or None when it does: the one reason the
    gate gives for its change (``UNCLASSIFIED_CHANGE``) and the generators for refusing it."""
    if name.startswith("x-"):
        return None
    record = KEYWORDS.get(name)
    if record is None:
        return f"{name!r} is no keyword of JSON Schema 2020-12 that the kit knows (refitwire.wire.KEYWORDS)"
    if record.modelled:
        return None
    return f"{name!r} ({record.kind}) is a JSON Schema 2020-12 keyword the kit does not model (refitwire.wire.KEYWORDS)"


def length_pairs() -> tuple[tuple[str, str], ...]:
    """Each (lower, upper) pair of keywords bounding a length: characters, items, members."""
    lows = [
        k for k in KEYWORDS.values() if k.bound == "lower" and k.counts in ("characters", "items", "members")
    ]
    return tuple(
        (low.name, next(k.name for k in KEYWORDS.values() if k.bound == "upper" and k.counts == low.counts))
        for low in lows
    )
