"""A run against its base report: keyed by case and cell, never by the symptom's text."""

from __future__ import annotations

from refitwire.compat import REQUIRED, Outcome, Report, Result
from refitwire.compat.report._delta import compare, render, without_known
from refitwire.compat.report._report import Footer, Header

TREE = {"label": "modelexpress@0.8.0.dev0+gabc", "kind": "upstream-source"}


def _report(label: str, results: list[Result]) -> Report:
    participants = ({**TREE, "label": label}, {"label": "reference@1.2.0", "kind": "reference"})
    header = Header(5, 10, participants, (), "ran", {"focus": [label]})
    return Report(header, tuple(results), Footer(1.0, {}, 0, 0, 0, {}))


def _failed(case: str, symptom: str, who: str, tier: str = "recommended") -> Result:
    return Result(case, tier, Outcome.FAILED, who, "reference@1.2.0", f"{symptom}: details", symptom)


def test_a_case_failing_for_another_reason_is_its_own_line_not_fixed_plus_new() -> None:
    base = _report("modelexpress@0.8.0.dev0+gold", [
        _failed("gen-1", "bytes differ", "modelexpress@0.8.0.dev0+gold"),
        _failed("gen-2", "bytes differ", "modelexpress@0.8.0.dev0+gold"),
        _failed("gen-3", "value differs at /addr", "modelexpress@0.8.0.dev0+gold", REQUIRED),
    ])  # fmt: skip
    head = _report("modelexpress@0.8.0.dev0+gnew", [
        _failed("gen-1", "bytes differ", "modelexpress@0.8.0.dev0+gnew"),
        _failed("gen-2", "bytes differ", "modelexpress@0.8.0.dev0+gnew"),
        _failed("gen-3", "value differs at /publisher_step", "modelexpress@0.8.0.dev0+gnew", REQUIRED),
    ])  # fmt: skip
    delta = compare(head, base)
    assert not delta.fixed and not delta.new_required and len(delta.known) == 2
    [(was, now)] = delta.changed
    assert (was.symptom, now.symptom) == ("value differs at /addr", "value differs at /publisher_step")
    assert not delta.ok(), "a Required case failing for a new reason is news"
    text = "\n".join(render(delta, "base.jsonl"))
    assert (
        "required x1: value differs at /publisher_step (in the base: value differs at /addr) in "
        "modelexpress@0.8.0.dev0+gnew -> reference@1.2.0; e.g. case gen-3" in text
    )
    # the base's own failures are counted once, not listed again
    assert "for the same reason (not counted, not listed again): 2 recommended" in text
    assert "bytes differ" not in text
    assert [r.case for r in without_known(head, delta).results] == ["gen-3"]


def test_cases_failing_now_for_one_cause_are_one_line_with_their_count() -> None:
    old, new = "modelexpress@0.8.0.dev0+gold", "modelexpress@0.8.0.dev0+gnew"
    base = _report(old, [_failed(f"gen-{i}", f"value differs at /tensors/{i}", old) for i in range(20)])
    head = _report(new, [_failed(f"gen-{i}", "wrote an invalid blob (TYPE)", new) for i in range(20)])
    text = render(compare(head, base), "base.jsonl")
    listed = [line for line in text if "wrote an invalid blob (TYPE)" in line]
    assert listed == [
        "    recommended x20: wrote an invalid blob (TYPE) (in the base: value differs at /tensors/0, and 19 "
        "other cause(s)) in modelexpress@0.8.0.dev0+gnew -> reference@1.2.0; e.g. case gen-0"
    ], text
