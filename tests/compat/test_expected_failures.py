"""The expected-failure lists are strict both ways: a listed case that passes fails the run
(``_run.expected``), and every listed case is one the suite really runs, in the role it is
listed for, so a stale entry (a vector rebuilt under a new ID, a rule renamed) cannot sit
unnoticed while the failure it excused shows up as new."""

from __future__ import annotations

from refitwire import wire
from refitwire.compat import _built_cases, _cases, _expected, _merge, _size_budget, _sizes, _write_unknown
from refitwire.engine import blob_limit
from refitwire.wire import released_versions


def _known_cases() -> dict[str, str]:
    """Every case ID a run can produce -> the role of the participant it judges."""
    known = {}
    for case in _cases.read_cases() + _cases.count_cases(wire.default_registry()):
        known[case.id] = "reader"
        if any(e is not None and not e["valid"] for e in case.expect.values()):
            known[f"{case.id}#rule"] = "reader"
    for merge in _merge.merge_cases():
        known.update({merge.id: "reader", f"{merge.id}#rule": "reader"})
    known.update((c.id, "reader") for c in _sizes.size_cases(blob_limit(wire.default_registry())))
    known[_size_budget.GROWTH_CASE] = "reader"
    for version in released_versions():
        golden = [c for c in _cases.write_cases() if c.spec_version == version]
        for c in golden + list(_write_unknown.unknown_member_cases(version, wire.default_registry())):
            known.update({c.id: "writer", f"{c.id}:bytes": "writer"})
        for c in _built_cases.refusal_cases(version, wire.default_registry()):
            known.update({c.id: "writer", f"{c.id}#rule": "writer"})
    return known


def stale(listed: dict[tuple[str, str, str], object], known: dict[str, str]) -> list[tuple[str, str, str]]:
    return [(name, role, case) for name, role, case in listed if known.get(case) != role]


def test_every_listed_case_is_one_the_suite_runs_in_that_role() -> None:
    listed = _expected.load()
    assert listed
    found = stale(dict(listed), _known_cases())
    assert not found, f"listed but never run in that role: {found}"


def test_the_check_sees_a_stale_entry() -> None:
    known = _known_cases()
    some_read = _cases.read_cases()[0].id
    bogus = {
        ("x", "reader", "read:v-000000000000"): None,  # no such vector
        ("x", "writer", some_read): None,  # a reader's case listed for a writer
        ("x", "writer", "refuse:NO_SUCH_RULE-0"): None,
    }
    assert len(stale(bogus, known)) == 3
    assert not stale({("x", "reader", some_read): None}, known)
