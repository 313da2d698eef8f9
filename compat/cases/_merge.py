"""The merge cases: a receiver merges the shard tables of several publishers (SPEC.md section
2.6, protocol command ``merge``), and must give what the rules say.

The cases are ``schema/vectors/merge/merge.json`` (``tools/build_merge_vectors.py``, built from
the rules' own terms). A merged table is compared as the rules speak of it: its tensors by the
key ``MERGE_CONSISTENT`` names, their shards by the box ``MERGE_REPLICAS`` names, in any order,
each with every member as the first publisher wrote it, and a dtype label with or without
``torch.`` (``DTYPE_LABEL``: the two name the same type). A testee that merges no tables answers
``skipped``: it is asked once and gets one skipped case, ``merge``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from refitwire.compat._results import (
    REASON,
    RECOMMENDED,
    Broken,
    Decoded,
    Outcome,
    Rejected,
    Result,
    Skipped,
    dumps_short,
    exchange,
    pointer_of,
)
from refitwire.compat.cases import _forms
from refitwire.compat.cases._cases import first_difference
from refitwire.wire import Registry, WireModel, spec_rules

__all__ = ["MergeCase", "check_merge", "merge_cases", "merge_terms", "same_merge"]


@dataclass(frozen=True)
class MergeCase:
    id: str
    description: str
    rule: str
    tier: str
    tables: list[list[dict[str, Any]]]
    expect: dict[str, Any]  # {"merged": [...]} or {"refuse": RULE}


@functools.cache
def merge_cases() -> tuple[MergeCase, ...]:
    text = (
        resources.files("refitwire.schema").joinpath("vectors/merge/merge.json").read_text(encoding="utf-8")
    )
    return tuple(
        MergeCase(f"merge:{v['id']}", v["description"], v["rule"], v["tier"], v["tables"], v["expect"])
        for v in json.loads(text)["vectors"]
    )


def merge_terms(model: WireModel, registry: Registry) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """What SPEC.md's merge rules name, read from their terms: the key tensors are merged by (the
    first tensor member ``MERGE_CONSISTENT`` names), the members the tables must agree on (the
    others it names), and the shard members that make a box (those ``MERGE_REPLICAS`` names)."""
    tensor = model.table_at()
    shard = model.table_at(*tensor)

    def named(rule: str, level: tuple[str, ...]) -> list[str]:
        found = spec_rules(registry).rules_of(model.version)[rule]
        words = [w for term in found.terms for w in re.findall(r"[a-z_]+", term)]
        return [w for w in dict.fromkeys(words) if w in model.level(*level).names]

    key, *agreed = named("MERGE_CONSISTENT", tensor)
    return key, tuple(agreed), tuple(named("MERGE_REPLICAS", shard))


def _canonical(table: list[dict[str, Any]], key: str, box: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tensor in table:
        shards: dict[str, Any] = {}
        for s in tensor.get("shards") or []:  # a box twice is told apart by _twice
            shards.setdefault(json.dumps([s.get(b) for b in box]), s)
        label = tensor.get("dtype")
        dtype = label.removeprefix("torch.") if isinstance(label, str) else label
        out[json.dumps(tensor.get(key))] = {**tensor, "dtype": dtype, "shards": shards}
    return out


def _twice(table: list[dict[str, Any]], key: str, box: tuple[str, ...]) -> str | None:
    """Where a merged table holds a tensor, or a tensor a box, more than once (None: nowhere)."""
    names = [json.dumps(t.get(key)) for t in table]
    for i, tensor in enumerate(table):
        if names.index(names[i]) != i:
            return f"tensor {names[i]} twice, at {pointer_of((i,))}"
        boxes = [json.dumps([s.get(b) for b in box]) for s in tensor.get("shards") or []]
        for j, b in enumerate(boxes):
            if boxes.index(b) != j:
                return f"box {b} twice in tensor {names[i]}, at {pointer_of((i, 'shards', j))}"
    return None


def same_merge(
    expected: list[dict[str, Any]], got: list[dict[str, Any]], key: str, box: tuple[str, ...]
) -> bool:
    """Whether ``got`` is the merged table ``expected`` as the rules compare them."""
    return (
        _twice(got, key, box) is None
        and first_difference(_canonical(expected, key, box), _canonical(got, key, box)) is None
    )


def check_merge(who: Any, case: MergeCase, registry: Registry) -> Iterator[Result]:
    """Ask ``who`` to merge the case's tables (as its version sees them) and judge the answer."""
    base = {"case": case.id, "tier": case.tier, "reader": who.label}
    model = registry.wire_model("rendezvous", who.version)
    key, _, box = merge_terms(model, registry)

    def seen(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_forms.project(t, model, model.table_at()) for t in table]

    reply = exchange(who.testee, {"cmd": "merge", "seq": 0, "tables": [seen(t) for t in case.tables]})
    if isinstance(reply, Rejected):
        if "refuse" not in case.expect:
            yield _failed(
                base,
                f"refused tables that agree ({f'named {reply.rule}' if reply.rule else 'no rule given'})",
                f"{case.description}: {reply.message}",
            )
        elif reply.rule not in (None, case.expect["refuse"]):
            yield _failed({**base, "case": f"{case.id}{REASON}", "tier": RECOMMENDED},
                          f"wrong rule: named {reply.rule}, the spec says {case.expect['refuse']}", reply.message)  # fmt: skip
        else:
            yield Result(**base, outcome=Outcome.PASSED)
        return
    if isinstance(reply, Decoded):
        if "refuse" in case.expect:
            yield _failed(base, f"merged tables that break {case.expect['refuse']}",
                          f"{case.description}: merged them into {dumps_short(reply.payload, 200)}")  # fmt: skip
            return
        wanted, got = seen(case.expect["merged"]), reply.payload["merged"]
        twice = _twice(got, key, box)
        diff = ("a tensor or a box twice", twice) if twice else first_difference(
            _canonical(wanted, key, box), _canonical(got, key, box)
        )  # fmt: skip
        if diff is None:
            yield Result(**base, outcome=Outcome.PASSED)
        else:
            yield _failed(base, f"merged wrongly: {diff[0]}", f"{case.description} ({case.rule}): {diff[1]}")
        return
    if isinstance(reply, Skipped):
        yield Result(**base, outcome=Outcome.SKIPPED, message=reply.reason)
        return
    malformed = isinstance(reply, Broken) and reply.malformed
    yield Result(**base, outcome=Outcome.FAILED if malformed else Outcome.ERRORED, fault="reader",
                 symptom="malformed merge answer" if malformed else "errored on a merge",
                 message=f"{case.description}: {getattr(reply, 'message', dumps_short(reply))}")  # fmt: skip


def _failed(base: dict[str, Any], symptom: str, message: str) -> Result:
    return Result(**base, outcome=Outcome.FAILED, fault="reader", symptom=symptom, message=message)
