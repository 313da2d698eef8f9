"""The expected-failure lists are strict both ways: a listed case that passes fails the run
(``_run.expected``), and every listed case is one the suite really runs, in the role it is
listed for, so a stale entry (a vector rebuilt under a new ID, a rule renamed) cannot sit
unnoticed while the failure it excused shows up as new."""

from __future__ import annotations

from refitwire import wire
from refitwire.compat.cases import _cases
from refitwire.compat.runner import _expected


def _known_cases() -> dict[str, str]:
    return _expected.known_cases(wire.default_registry())


def test_every_listed_case_is_one_the_suite_runs_in_that_role() -> None:
    listed = _expected.load()
    assert listed
    found = _expected.stale(listed, _known_cases())
    assert not found, f"listed but never run in that role: {found}"


def test_the_check_sees_a_stale_entry() -> None:
    known = _known_cases()
    some_read = _cases.read_cases()[0].id
    bogus = {
        ("x", "reader", "read:v-000000000000"): None,  # no such vector
        ("x", "writer", some_read): None,  # a reader's case listed for a writer
        ("x", "writer", "refuse:NO_SUCH_RULE-0"): None,
    }
    assert len(_expected.stale(bogus, known)) == 3
    assert not _expected.stale({("x", "reader", some_read): None}, known)
