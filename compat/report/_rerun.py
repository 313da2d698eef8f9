"""``--case ID``: one case alone, with everything needed to see why it failed.

It prints the case's input (payload and/or blob, as text and as base64), the raw answer of
every participant in the cell, and the verdicts of the normal run restricted to that case.
The ID is read once into its kind (``_kinds.parse``), whose record finds the inputs again
(a generated case's from the seed and the number of examples) and shows the answers.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from refitwire.compat.cases import _cases
from refitwire.compat.runner import Inputs, Plan, Source, Started, _kinds
from refitwire.wire import Registry


def known(plan: Plan, case_id: str) -> bool:
    return _inputs(plan, case_id) is not None


def describe(plan: Plan, started: list[Started], case_id: str) -> Iterator[str]:
    """The case's input and each participant's raw answer to it."""
    given = _inputs(plan, case_id)
    parsed = _kinds.parse(case_id)
    if given is None or parsed is None:
        yield f"no case {case_id} (with seed {plan.seed} and {plan.examples} examples)"
        return
    yield f"case {case_id}: {given.description}"
    yield from _kinds.kind(parsed).show(plan, started, parsed.bare, given)


def _inputs(plan: Plan, case_id: str) -> Inputs | None:
    return inputs(plan.seed, plan.examples, case_id, plan.registry)


def inputs(seed: int, examples: int, case_id: str, registry: Registry) -> Inputs | None:
    """A case's description and input (payload and/or blob), found again from its ID and the seed
    (the versions and the blob size limit of ``registry``)."""
    return _kinds.inputs(case_id, Source(registry, functools.partial(_generated, seed, examples, registry)))


@functools.lru_cache(maxsize=2)
def _generated(seed: int, examples: int, registry: Registry) -> dict[str, dict[str, Any]]:
    return _cases.generated_payloads(seed, examples, registry)
