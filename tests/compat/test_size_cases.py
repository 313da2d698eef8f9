"""The size cases' tables and what a reader is allowed: built once and kept per kit version,
the reference calibrated once per kit version and machine, a reader judged by its growth."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from refitwire import InvalidBlob, unwrap_rendezvous_blob
from refitwire.compat import _cases, _checks, _forms, _size_budget, _sizes, _testee
from refitwire.compat._results import Outcome
from refitwire.engine import blob_limit
from refitwire.wire import released_versions

FAULTY = Path(__file__).with_name("faulty_testee.py")


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for cached in (_sizes._cache_key, _sizes.realistic_table, _size_budget.reference_times):
        cached.cache_clear()
    yield tmp_path / "refitwire" / "size-cases"
    for cached in (_sizes._cache_key, _sizes.realistic_table, _size_budget.reference_times):
        cached.cache_clear()


def test_a_table_is_exactly_its_size_and_valid_with_no_member_added() -> None:
    blob = _sizes.filled(200_000, _sizes._realistic_tensor)
    assert len(blob) == 200_000
    payload = unwrap_rendezvous_blob(blob)
    assert len(payload.tensors) == _sizes.count_tensors(blob) > 100
    assert payload.optional_members == {} and blob.rstrip(b" }").endswith(b'"publisher_step": 7')


def test_the_blob_over_the_limit_is_refused_before_it_is_read() -> None:
    over = next(c for c in _sizes.size_cases() if c.id == "size:over-limit")
    assert len(over.blob) == blob_limit() + 1
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(over.blob)
    assert caught.value.rule == "BLOB_SIZE"
    # Its length is what is judged: a few tensors and whitespace, so a reader with no limit reads
    # it at once (a valid document: accepting it is the fault, not a parse error).
    assert 0 < _sizes.count_tensors(over.blob) < 10 and over.blob.count(b" " * 2**20) > 32
    assert json.loads(over.blob)["tensors"]


def test_tables_are_kept_per_kit_version(fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = _sizes.filled

    def counting(size: int, tensor: Any) -> bytes:
        built.append(size)
        return real(size, tensor)

    monkeypatch.setattr(_sizes, "filled", counting)
    monkeypatch.setattr(_sizes, "kit_version", lambda: "1.0.0")
    first = _sizes.realistic_table(100_000)
    _sizes.realistic_table.cache_clear()
    assert _sizes.realistic_table(100_000) == first and built == [100_000]  # read back, not built
    (kept,) = fresh_cache.iterdir()
    assert kept.name.startswith("1.0.0-")
    monkeypatch.setattr(_sizes, "kit_version", lambda: "1.0.1")
    _sizes._cache_key.cache_clear()
    _sizes.realistic_table.cache_clear()
    assert _sizes.realistic_table(100_000) == first and built == [100_000, 100_000]  # a new version builds
    assert [p.name.split("-")[0] for p in fresh_cache.iterdir()] == ["1.0.1"]  # the old one is gone


def test_the_reference_is_calibrated_once_per_kit_version_and_machine(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[str] = []

    def measure() -> dict[str, float]:  # the testee's timing, counted; what is kept is the point here
        measured.append("once")
        return {"size:at-limit": 2.0, "size:many-tensors": 0.5}

    monkeypatch.setattr(_size_budget, "_measure_reference", measure)
    monkeypatch.setattr(_size_budget, "_probe", lambda: 0.1)
    monkeypatch.setattr(_sizes, "kit_version", lambda: "1.0.0")
    assert _size_budget.reference_times() == ({"size:at-limit": 2.0, "size:many-tensors": 0.5}, 1.0)
    _size_budget.reference_times.cache_clear()
    _size_budget.reference_times()
    assert measured == ["once"]  # kept on disk
    monkeypatch.setattr(_sizes, "kit_version", lambda: "1.1.0")
    _size_budget.reference_times.cache_clear()
    _size_budget.reference_times()
    assert measured == ["once", "once"]  # a new kit version measures again
    monkeypatch.setattr(_size_budget, "machine", lambda: {"node": "another"})
    _size_budget.reference_times.cache_clear()
    _size_budget.reference_times()
    assert measured == ["once", "once", "once"]  # and so does another machine


def test_a_busy_machine_scales_the_reference_bound(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = iter([0.1, 0.1, 0.3])  # calibrated quiet (two probes), then three times slower now
    monkeypatch.setattr(_size_budget, "_measure_reference", lambda: {"size:at-limit": 2.0})
    monkeypatch.setattr(_size_budget, "_probe", lambda: next(probes))
    times, load = _size_budget.reference_times()
    _size_budget.reference_times.cache_clear()
    times, load = _size_budget.reference_times()
    assert load == pytest.approx(3.0) and times["size:at-limit"] == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("seconds", "linear"),
    [((1.0, 3.9), True), ((1.0, 7.9), True), ((1.0, 16.0), False), ((0.001, 0.05), True)],
)
def test_growth_is_judged_against_a_linear_reader(seconds: tuple[float, float], linear: bool) -> None:
    assert _size_budget._linear(list(seconds)) is linear


def test_the_allowance_at_the_limit_is_the_least_of_growth_and_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        _size_budget, "reference_times", lambda: ({"size:at-limit": 3.0, "size:many-tensors": 1.0}, 1.0)
    )
    at_limit, over, many = _sizes.size_cases()
    fast = _size_budget.Growth((0.1, 0.4), True)
    assert _size_budget.allowance(at_limit, fast, 1.0, 10.0).seconds == pytest.approx(30.0)  # the larger
    slow_linear = _size_budget.Growth((2.0, 8.0), True)
    assert _size_budget.allowance(over, slow_linear, 1.0, 10.0).seconds == pytest.approx(64.0)  # 2 x 4 x 8
    superlinear = _size_budget.Growth((0.1, 2.0), False)
    assert _size_budget.allowance(at_limit, superlinear, 1.0, 10.0).seconds == pytest.approx(
        16.0
    )  # the smaller
    assert _size_budget.allowance(at_limit, superlinear, 60.0, 10.0).seconds == 60.0  # never under --timeout
    assert _size_budget.allowance(many, fast, 1.0, 10.0).seconds == pytest.approx(10.0)


def _small_case() -> _sizes.SizeCase:
    blob = _sizes.filled(300_000, _sizes._realistic_tensor)
    return _sizes.SizeCase("size:small", "required", "a realistic table of 300000 bytes", blob, True)


@pytest.mark.parametrize("version", released_versions())
def test_the_kept_decoded_form_is_the_projection_of_the_table(
    fresh_cache: Path, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _small_case()
    model = _cases.model_of(version)
    kept = _sizes.expected_read(case, model)
    payload = case.payload()
    assert payload is not None
    assert orjson.loads(kept) == _forms.project(payload, model)
    assert len([p for p in fresh_cache.rglob("size-small.decoded-*")]) == 1  # one file per shape

    def no_projection(*args: Any) -> None:
        raise AssertionError("projected again: the kept form was not read")

    monkeypatch.setattr(_forms, "project", no_projection)
    assert _sizes.expected_read(case, model) == kept  # read back from the cache folder


@pytest.mark.parametrize(("fault", "symptom"), [("none", None), ("reorders-shards", "value differs at ")])
def test_a_size_case_compares_the_whole_decoded_table(
    fresh_cache: Path, fault: str, symptom: str | None
) -> None:
    case = _small_case()
    testee = _testee.Testee([sys.executable, str(FAULTY), fault], timeout_s=60.0)
    testee.start()
    try:
        reader = SimpleNamespace(testee=testee, label=f"faulty:{fault}", version=released_versions()[-1])
        allowance = _size_budget.Allowance(60.0, 60.0)
        (result,) = list(_checks.read_size(reader, case, allowance))
    finally:
        testee.stop()
    if symptom is None:
        assert result.outcome is Outcome.PASSED, result
    else:
        assert result.outcome is Outcome.FAILED and result.symptom.startswith(symptom), result
        assert "/tensors/0/shards/0/" in result.message, result.message


def test_a_rerun_of_the_blob_over_the_limit_asks_it_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--case size:over-limit`` is judged by the blob's length: neither the growth tables (seconds
    of 4 and 16 MiB reads) nor the generated payloads (seconds of Hypothesis) are made for it."""
    from refitwire import compat

    def never(*_: Any) -> Any:
        raise AssertionError("made for a --case that does not need it")

    monkeypatch.setattr(_size_budget, "read_growth", never)
    monkeypatch.setattr(_cases, "generated_payloads", never)
    plan = compat.Plan([compat.reference()[-1]], examples=0, only="size:over-limit", check_messages=False)
    results = [line for line in compat.run_matrix(plan) if line["type"] == "result"]
    assert [(r["case"], r["outcome"]) for r in results] == [
        ("size:over-limit", "passed"), ("size:over-limit#rule", "passed")
    ], results  # fmt: skip
