"""Two violations inside one object, for every pair of validation stages SPEC 2.7 orders there.

For every object level of the wire model:

- a required member left out beside every other member broken (a wrong JSON type, a value past
  its bound or off its pattern, an integer written with a fraction): ``REQUIRED`` names the object,
  so it comes before anything inside it, whichever stage the other break belongs to;
- two members broken in step 3 (one of the wrong type, one past its bound or pattern), written in
  both orders: the first in document order as written is reported, whatever the schema's order;
- a step-3 break written after a step-4 break (an integer written with a fraction): step 3 first.

The expected rule and pointer follow from SPEC 2.7 by :func:`first_reported`, per version: a break
in a member a version does not know is no break for its readers (``READ_IGNORE_UNKNOWN``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import _clone
from _vector_dimensions import matches
from _vector_kit import VERSIONS, content_key, vector
from _vector_model import RAW, SAMPLES, base, model, wrong_types
from _vector_upstream import upstream_verdict
from refitwire import wire
from refitwire.wire import NO_CONST, Member

#: SPEC 2.7's stages of the rules these vectors break (REQUIRED, TYPE and the value rules: 3).
STEP_4 = {"INTEGER_LITERAL"}


class Break:
    """One broken member of an object: its rule, its stage, the value written (raw JSON text)."""

    def __init__(self, member: Member, rule: str, raw: str, what: str) -> None:
        self.member, self.rule, self.raw, self.what = member, rule, raw, what

    @property
    def step(self) -> int:
        return 4 if self.rule in STEP_4 else 3


def breaks(member: Member) -> Iterator[Break]:
    """A wrong type, a value rule broken (bound or pattern), and an integer not written as one."""
    if member.const is not NO_CONST or member.child is not None:
        return
    for kind in wrong_types(member)[:1]:  # (none where any JSON value is allowed)
        yield Break(member, "TYPE", json.dumps(SAMPLES[kind]), f"a JSON {kind}")
    low, high = member.bounds
    if high is not None:
        yield Break(member, member.rule or "SCHEMA", str(high + 1), f"{high + 1}, past its maximum")
    elif low is not None:
        yield Break(member, member.rule or "SCHEMA", str(low - 1), f"{low - 1}, below its minimum")
    if member.pattern is not None:
        miss = next(m for m in ("!", "", " ") if not matches(member, m))
        yield Break(member, member.rule or "SCHEMA", json.dumps(miss), f"{json.dumps(miss)}, off its pattern")
    if member.types == ("integer",):
        yield Break(member, "INTEGER_LITERAL", "", "its value written with a fraction")  # raw: from the blob


def first_reported(
    version: str, level: tuple[str, ...], at: str, missing: Member | None, written: list[Break]
) -> tuple[str, str] | None:
    """SPEC 2.7 for one object: REQUIRED (the object's pointer) first, then step 3 in document
    order, then step 4; breaks of members ``version`` does not know do not count."""
    known = _clone.registry().wire_model("rendezvous", version).levels.get(level)
    if known is None:  # a level a later version added: inside an unknown member, nothing is read
        return None
    if missing is not None and missing.name in known:
        return "REQUIRED", at
    seen = [b for b in written if b.member.name in known]
    for step in (3, 4):
        first = next((b for b in seen if b.step == step), None)
        if first is not None:
            return first.rule, wire.join(at, first.member.name)
    return None


def _object(level: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A valid blob, the first object of ``level`` in it, and that object's pointer."""
    doc = base()
    obj: Any = doc
    steps: list[str | int] = []
    for name in level:
        obj = obj[name][0]
        steps += [name, 0]
    return doc, obj, wire.pointer(*steps)


def _vector(
    level: tuple[str, ...], description: str, missing: Member | None, written: list[Break]
) -> dict[str, Any]:
    doc, obj, at = _object(level)
    if missing is not None:
        del obj[missing.name]
    first_names = [b.member.name for b in written]
    rest = {k: v for k, v in obj.items() if k not in first_names}
    obj.clear()
    obj.update({b.member.name: RAW + str(n) for n, b in enumerate(written)})  # written first, in this order
    obj.update(rest)
    blob = json.dumps(doc)
    values = _object(level)[1]  # the member's own value, where the break keeps it (INTEGER_LITERAL)
    for n, b in enumerate(written):
        blob = blob.replace(json.dumps(RAW + str(n)), b.raw or f"{values[b.member.name]}.0", 1)
    expect = {v: first_reported(v, level, at, missing, written) for v in VERSIONS}
    invalid = {v: found for v, found in expect.items() if found is not None}
    parsed = json.loads(blob) if len(invalid) < len(VERSIONS) else None
    tags = ["precedence", "in-object"]
    return vector(description, blob.encode(), invalid=invalid, parsed=parsed,
                  upstream=upstream_verdict("rendezvous", blob.encode()), tags=tags)  # fmt: skip


def stage_pair_vectors() -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for level, declared in model().levels.items():
        where = wire.pointer(*level) or "the top level"
        members = declared.members
        for missing in (m for m in members if m.required):
            for other in members:
                if other is missing:
                    continue
                for b in breaks(other):
                    v = _vector(level, f"{where}: {missing.name} missing and {other.name} {b.what}: REQUIRED first",
                                missing, [b])  # fmt: skip
                    found.setdefault(content_key(v), v)
        for a in members:
            for b in members:
                if a is b:
                    continue
                wrong = next(breaks(a), None)
                value = [x for x in breaks(b) if x.rule not in ("TYPE", *STEP_4)]
                if wrong is None or not value:
                    continue
                for first, second in ((wrong, value[0]), (value[0], wrong)):
                    v = _vector(level, f"{where}: {first.member.name} {first.what} written before {second.member.name} "
                                f"{second.what}: the first as written", None, [first, second])  # fmt: skip
                    found.setdefault(content_key(v), v)
                late = [x for x in breaks(a) if x.rule in STEP_4]
                if late:
                    v = _vector(level, f"{where}: {a.name} {late[0].what} written before {b.name} {value[0].what}: "
                                "step 3 first", None, [late[0], value[0]])  # fmt: skip
                    found.setdefault(content_key(v), v)
    return list(found.values())
