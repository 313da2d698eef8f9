"""The case kinds are one table: every case ID belongs to exactly one kind, reads back as itself,
and its kind finds the case's inputs again; the page shows the inputs the report recorded."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat._results import LISTED_PER_GROUP, REQUIRED, Outcome, Result
from refitwire.compat.cases import _cases
from refitwire.compat.report import _html, _report
from refitwire.compat.runner import _kinds, _run
from refitwire.compat.runner._rebuild import Source


def _every_id() -> list[str]:
    registry = wire.default_registry()
    return [*_kinds.known_cases(registry), *_cases.generated_payloads(3, 4, registry), "handshake", "count", "merge",
            *(f"{g}:bytes" for g in _cases.generated_payloads(3, 2, registry))]  # fmt: skip


def test_every_case_id_belongs_to_one_kind_and_reads_back_as_itself() -> None:
    for case_id in _every_id():
        parsed = _kinds.parse(case_id)
        assert parsed is not None, case_id
        assert str(parsed) == case_id
        assert [k.name for k in _kinds.KINDS if k.owns(parsed.bare)] == [parsed.kind], case_id
        assert parsed.derived in ("", *_kinds.kind(parsed).derived)
    assert _kinds.parse("no-such-kind:x") is None


def test_every_kind_finds_its_cases_inputs_again() -> None:
    """--case of each kind's first case is known (a count-only read and a merge were not)."""
    registry = wire.default_registry()
    source = Source(registry, lambda: _cases.generated_payloads(3, 2, registry))
    version = registry.released_versions()[-1]
    for kind in _kinds.KINDS:
        cases = [] if kind.name == "size" else list(kind.cases(registry, version))[:1]  # (64 MiB tables)
        cases += [type("Case", (), {"id": i})() for i in source.drawn()][:1] if kind.uses_seed else []
        if kind.name == "size":
            cases = [type("Case", (), {"id": "size:growth"})()]
        for case in cases:
            found = _kinds.inputs(case.id, source)
            assert found is not None and found.description, (kind.name, case.id)
            assert _kinds.inputs(case.id + "#rule" if "#rule" in kind.derived else case.id, source) == found


def test_the_page_shows_the_inputs_the_report_recorded_without_drawing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*_: Any) -> Any:
        raise AssertionError("the page drew the generated payloads again")

    monkeypatch.setattr(_cases, "generated_payloads", never)
    recorded = {"description": "a generated payload", "payload": '{"agent_name": "x"}'}
    head = {"type": "header", "schema": _report.REPORT_SCHEMA, "started_at": "", "seed": 3, "examples": 2,
            "participants": [], "unavailable": [], "upstream": "not asked", "kit": "0.0.1"}  # fmt: skip
    failed = Result(
        "gen-1:bytes", REQUIRED, Outcome.FAILED, "w", "r", "differs", "bytes differ", "writer", None, recorded
    )
    again = Result("gen-1", REQUIRED, Outcome.FAILED, "w", "r2", "differs", "value differs", "reader")
    report = _report.read_report([_report.json.dumps(head), failed.line, again.line])
    data = _html.model(report)
    assert data["inputs"] == {"gen-1": recorded}  # by the case, from the line that recorded it
    cases = [c for cell in data["cells"] for g in cell["groups"] for c in g["cases"]]
    assert {c["input"] for c in cases} == {"gen-1"}
    assert "recorded" in data["inputs_note"]


def test_a_run_records_the_inputs_of_the_cases_a_page_lists_once_each() -> None:
    """As many cases per group of a cell as the page lists, each case's inputs once, nothing for a pass."""
    registry = wire.default_registry()
    source = Source(registry, dict)
    recorded: set[str] = set()
    per_group: collections.Counter[tuple[Any, ...]] = collections.Counter()
    reads = _cases.read_cases()[: LISTED_PER_GROUP + 2]
    failed = [Result(c.id, REQUIRED, Outcome.FAILED, None, "r", "m", "one symptom", "reader") for c in reads]
    out = [_run._with_inputs(r, source, recorded, per_group) for r in failed]
    assert [r.input is not None for r in out] == [True] * LISTED_PER_GROUP + [False, False]
    assert out[0].input == _kinds.inputs(reads[0].id, source).recorded()  # type: ignore[union-attr]
    other = Result(
        f"{reads[0].id}#rule", REQUIRED, Outcome.FAILED, None, "r", "m", "another symptom", "reader"
    )
    assert _run._with_inputs(other, source, recorded, per_group).input is None  # its case's inputs are there
    passed = Result(reads[-1].id, REQUIRED, Outcome.PASSED, None, "r2")
    assert _run._with_inputs(passed, source, recorded, per_group).input is None
