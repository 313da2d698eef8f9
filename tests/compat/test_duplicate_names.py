"""A reader MAY reject a blob that repeats a member name, naming DUPLICATE_KEYS at the repeated
member (SPEC.md 2.1). One that rejects it under another rule fails the valid vector, and the
message says what it may do instead, so the implementer is told the fix, not only the fault."""

from __future__ import annotations

from typing import Any

from refitwire import wire
from refitwire.compat._results import Outcome
from refitwire.compat.cases import _cases
from refitwire.compat.runner import _checks


class _StrictReader:
    """The reference, but a blob that repeats a name is refused as broken JSON."""

    def __init__(self, rule: str) -> None:
        self.rule, self.version, self.label, self.stderr = rule, "1.2.0", "reader", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        return {"seq": message["seq"], "rejected": True, "rule": self.rule, "message": "duplicate member"}


def _repeating() -> list[_cases.ReadCase]:
    found = [c for c in _cases.read_cases() if c.repeated_name is not None and c.expect["1.2.0"]["valid"]]
    assert found
    return found


def test_a_repeated_name_rejected_under_another_rule_is_told_what_it_may_do() -> None:
    results = [
        r
        for c in _repeating()
        for r in _checks.read_vector(_StrictReader("JSON"), c, wire.default_registry())
    ]
    assert results and all(r.outcome is Outcome.FAILED for r in results)
    assert all("a reader MAY reject it only naming DUPLICATE_KEYS at /" in r.message for r in results)


def test_a_repeated_name_rejected_naming_duplicate_keys_passes() -> None:
    results = [
        r
        for c in _repeating()
        for r in _checks.read_vector(_StrictReader("DUPLICATE_KEYS"), c, wire.default_registry())
    ]
    assert results and all(r.outcome is not Outcome.FAILED or r.case.endswith("#rule") for r in results)
    assert any(r.outcome is Outcome.PASSED and not r.case.endswith("#rule") for r in results)
