"""Two step-4 violations in one blob: the first in document order is reported (SPEC 2.7:
"within step 4, the first violation in document order", a value before the values inside it),
whatever the rule and however deep; two at one value (an integer written as a number that also
breaks a box or a span there), the first by rule ID in ASCII order.

The violations are the rules JSON Schema cannot say, each broken alone by one change
(``compat.cases._built_cases.RULE_BREAKS``: pad bits, a rank, a box, an element size, a span) and
``INTEGER_LITERAL`` at every integer place of the model; each pair of different rules is written
as the base blob orders its members and with every object's members in reverse. The expected
answer follows from the two single violations (each the reference's for that break alone, as
its own vectors pin it) and the order the blob writes them, worked out here by walking the
document, not by the reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import Any

from _vector_kit import VERSIONS, at_one_value, first_violation, vector
from _vector_model import base, get, integer_places, put, text
from _vector_upstream import upstream_verdict
from refitwire import InvalidBlob, unwrap_rendezvous_blob, wire
from refitwire.compat.cases._built_cases import RULE_BREAKS

Change = Callable[[dict[str, Any]], Any]


def _breaks() -> Iterator[tuple[str, str, Change]]:
    """(rule, what, change) for each single step-4 violation."""
    yield from RULE_BREAKS
    for _member, path, _ in integer_places():
        yield "INTEGER_LITERAL", f"{wire.pointer(*path)} written with a fraction", _as_float(path)


def _as_float(path: tuple[str | int, ...]) -> Change:
    return lambda doc: put(doc, path, float(get(doc, path)))


def _both(blob: bytes, alone_a: dict[str, Any], alone_b: dict[str, Any]) -> bool:
    """Whether the newest reader finds each single violation in ``blob`` (in any order)."""
    newest = VERSIONS[-1]
    try:
        unwrap_rendezvous_blob(blob, spec_version=newest)
    except InvalidBlob as exc:
        found = {(v.rule, v.pointer) for v in exc.violations}
        return {alone_a[newest], alone_b[newest]} <= found
    return False


def _preorder(doc: Any) -> dict[str, int]:
    """Each pointer of ``doc`` and its place in document order (a value before those inside it)."""
    order: dict[str, int] = {}

    def walk(node: Any, at: tuple[str | int, ...]) -> None:
        order[wire.pointer(*at)] = len(order)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            walk(value, (*at, key))

    walk(doc, ())
    return order


def _reversed(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _reversed(node[k]) for k in reversed(node)}
    return [_reversed(v) for v in node] if isinstance(node, list) else node


def order_vectors() -> list[dict[str, Any]]:
    found = []
    singles = []
    for rule, what, change in _breaks():
        doc = base()
        change(doc)
        alone = {v: first_violation(text(doc), v) for v in VERSIONS}
        if any(found_ is not None and found_[0] != rule for found_ in alone.values()):
            continue  # the change breaks something else first: not this rule's single violation
        singles.append((rule, what, change, alone))
    for (rule_a, what_a, change_a, alone_a), (rule_b, what_b, change_b, alone_b) in combinations(singles, 2):
        if rule_a == rule_b:
            continue
        for written in ("as written", "every object's members in reverse"):
            doc = base()
            change_a(doc)
            change_b(doc)
            if written != "as written":
                doc = _reversed(doc)
            order = _preorder(doc)
            expect: dict[str, tuple[str, str]] = {}
            for v in VERSIONS:
                reported = [r for r in (alone_a[v], alone_b[v]) if r is not None]
                if reported:  # the first in document order; at one value, by SPEC 2.7's tie rule
                    expect[v] = min(reported, key=lambda r: (order[r[1]], *at_one_value(r[0])))
            if not _both(text(doc), alone_a, alone_b):
                continue  # the two changes interact (one undoes the other): not a pair
            tie = any(a and b and a[1] == b[1] for a, b in zip(alone_a.values(), alone_b.values()))
            if tie and written != "as written":
                continue  # at one value the order the members are written in cannot matter
            blob = text(doc)
            how = "both at one value: by rule ID" if tie else "the first in document order"
            found.append(vector(f"{what_a} and {what_b}, {written}: {how}", blob,
                                invalid=expect, upstream=upstream_verdict("rendezvous", blob),
                                tags=["precedence", "document-order"]))  # fmt: skip
    return found


#: Items of one array in an index-order vector: past 9, so that item 10 sorts before item 2 as text.
_ITEMS = 11


def index_order_vectors() -> list[dict[str, Any]]:
    """Per array of objects (each level below the top), the same step-4 violation in items 2 and 10
    of one array of eleven: item 2 is first in document order. A reader that orders pointers as
    text ("/10/" before "/2/") names item 10. The violation is the first integer member of the
    level written with a fraction (INTEGER_LITERAL), each copy of the item otherwise the base
    blob's (no rule asks items to differ)."""
    found: dict[tuple[str | int, ...], dict[str, Any]] = {}  # by array: the level's first integer member
    for member, path, _ in integer_places():
        level = member.level
        if not level or len(path) != 2 * len(level) + 1:
            continue  # a member directly in an object of a level below the top, once per level
        array = path[: 2 * len(level) - 1]
        if array in found:
            continue
        doc = base()
        items = get(doc, array)
        put(doc, array, [json.loads(json.dumps(items[0])) for _ in range(_ITEMS)])
        for index in (2, 10):
            _as_float((*array, index, *path[len(array) + 1 :]))(doc)
        first = wire.pointer(*array, 2, *path[len(array) + 1 :])
        blob = text(doc)
        expect = {v: ("INTEGER_LITERAL", first) for v in VERSIONS if first_violation(blob, v) is not None}
        found[array] = vector(f"{wire.pointer(*array)}: items 2 and 10 written with a fraction at "
                              f"{member.name}: item 2 first in document order (10 is no earlier as text)",
                              blob, invalid=expect, upstream=upstream_verdict("rendezvous", blob),
                              tags=["precedence", "document-order"])  # fmt: skip
    return list(found.values())
