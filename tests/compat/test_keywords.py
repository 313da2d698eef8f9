"""One vocabulary of keywords (``refitwire.wire.KEYWORDS``) read by the generators' table
(``compat.keywords``) and the gate: the table holds exactly the keywords the vocabulary marks as
generated, and a keyword the kit does not model is refused by the generators and reported by
the gate as ``UNCLASSIFIED_CHANGE``, both with the vocabulary's one reason."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat.keywords import TABLE, UnhandledKeyword, breaks, domain
from refitwire.gate import Document, compare

#: Each keyword of JSON Schema 2020-12 the kit does not model, and a name that is no keyword at
#: all, with a value of the shape the keyword takes.
VALUES: dict[str, Any] = {"unevaluatedItems": False, "$dynamicRef": "#member", "$dynamicAnchor": "member",
                          "$vocabulary": {}, "maxlength": 3}  # fmt: skip
UNMODELLED = [name for name, keyword in wire.KEYWORDS.items() if not keyword.modelled] + ["maxlength"]

BASE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:toy:1.0.0",
    "x-spec-version": "1.0.0",
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "integer"}, "x-added-in": "1.0.0"}},
}


def test_the_table_holds_exactly_the_generated_keywords_of_the_vocabulary() -> None:
    generated = {name for name, keyword in wire.KEYWORDS.items() if keyword.generated}
    assert set(TABLE) == generated, sorted(set(TABLE) ^ generated)


def test_the_vocabulary_leaves_some_keywords_unmodelled() -> None:
    """(Otherwise the test below would only try a name that is no keyword.)"""
    assert "unevaluatedItems" in UNMODELLED


@pytest.mark.parametrize("keyword", UNMODELLED)
def test_a_keyword_the_kit_does_not_model_is_refused_by_the_generators_and_unclassified_by_the_gate(
    keyword: str,
) -> None:
    reason = wire.unmodelled_reason(keyword)
    assert reason is not None and repr(keyword) in reason
    member = {"type": "array", "items": {"type": "integer"}, keyword: VALUES[keyword]}
    for generate in (domain, breaks):  # at the member's top and inside a subschema it applies
        for schema, where in ((member, ""), ({"type": "array", "items": member}, "/items")):
            with pytest.raises(UnhandledKeyword) as raised:
                generate(schema)
            assert (raised.value.keyword, raised.value.where, raised.value.reason) == (keyword, where, reason)
    new = copy.deepcopy(BASE)
    new["properties"]["ids"][keyword] = VALUES[keyword]
    old_doc, new_doc = Document("1.0.0", BASE), Document("1.1.0", new)
    findings = compare(old_doc, new_doc, "1.1.0", witnesses=False, registry=wire.default_registry())
    (finding,) = [f for f in findings if f.change.pointer == f"/properties/ids/{keyword}"]
    assert finding.change.rule == "UNCLASSIFIED_CHANGE"
    assert finding.change.detail == f"{keyword} changed; {reason}"


def test_a_keyword_the_generators_model_is_no_refusal() -> None:
    """The reason is given only where the kit models nothing: ``anyOf`` is the generators' (the
    gate compares it whole, with its own wording), ``x-`` keywords and annotations assert nothing."""
    for keyword in ("anyOf", "if", "dependentRequired", "x-anything", "title", "minContains"):
        assert wire.unmodelled_reason(keyword) is None
    plain = {"type": "integer", "minimum": 0, "maximum": 2}
    assert domain({**plain, "title": "t", "x-anything": 1}) == domain(plain)
