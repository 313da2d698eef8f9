"""The size cases' tables and what a reader is allowed: built once and kept per kit version, a
reader judged by its growth from the small table to the one at the limit."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from _support import proposed_schema
from refitwire import InvalidBlob, released_versions, to_decoded, unwrap_rendezvous_blob, wire
from refitwire.compat import _results, _testee
from refitwire.compat._results import Outcome
from refitwire.compat.cases import _cases, _forms, _sizes
from refitwire.compat.runner import _checks, _growth, _size_budget
from refitwire.wire import blob_limit

FAULTY = Path(__file__).with_name("faulty_testee.py")


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for cached in (_sizes._cache_key, _sizes.realistic_table):
        cached.cache_clear()
    yield tmp_path / "refitwire" / "size-cases"
    for cached in (_sizes._cache_key, _sizes.realistic_table):
        cached.cache_clear()


def test_a_table_is_exactly_its_size_and_valid_with_no_member_added() -> None:
    blob = _sizes.filled(200_000, _sizes._realistic_tensor)
    assert len(blob) == 200_000
    payload = unwrap_rendezvous_blob(blob)
    assert len(payload.tensors) == _sizes.count_tensors(blob) > 100
    assert payload.optional_members == {} and blob.rstrip(b" }").endswith(b'"publisher_step": 7')


def test_the_blob_over_the_limit_is_refused_before_it_is_read() -> None:
    over = next(
        c for c in _sizes.size_cases(blob_limit(wire.default_registry())) if c.id == "size:over-limit"
    )
    assert len(over.blob) == blob_limit(wire.default_registry()) + 1
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(over.blob)
    assert caught.value.rule == "BLOB_SIZE"
    # Its length is what is judged: a few tensors and whitespace, so a reader with no limit reads
    # it at once (a valid document: accepting it is the fault, not a parse error).
    assert 0 < _sizes.count_tensors(over.blob) < 10 and over.blob.count(b" " * 2**20) > 32
    assert json.loads(over.blob)["tensors"]


@pytest.mark.parametrize(
    ("case_id", "extra"), [("size:at-limit-multibyte", 0), ("size:over-limit-multibyte", 1)]
)
def test_the_multibyte_cases_count_bytes_not_characters(case_id: str, extra: int) -> None:
    """At the limit and one byte over it in bytes, in a third as many characters and fewer UTF-16
    code units: a reader counting either reads the blob over the limit (faulty_testee's
    counts-characters, caught in test_conformance_teeth)."""
    case = next(c for c in _sizes.size_cases(blob_limit(wire.default_registry())) if c.id == case_id)
    text = case.blob.decode("utf-8")
    assert len(case.blob) == blob_limit(wire.default_registry()) + extra and case.valid is (extra == 0)
    assert (
        len(text) < blob_limit(wire.default_registry()) // 2
        and len(text.encode("utf-16-le")) // 2 < blob_limit(wire.default_registry()) // 2
    )
    assert f"in {len(text)} characters" in case.description
    doc = json.loads(case.blob)
    assert doc["tensors"] and set(doc[_sizes.PAD_MEMBER]) == {"\u00e9", "\u20ac", "\U0001f600", "."}
    if extra:
        with pytest.raises(InvalidBlob) as caught:
            unwrap_rendezvous_blob(case.blob)
        assert caught.value.rule == "BLOB_SIZE"
    else:  # the pad is an unknown member: the table is the few tensors before it
        assert len(unwrap_rendezvous_blob(case.blob).tensors) == _sizes.count_tensors(case.blob)


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
    # another checkout's tables, read recently, are left alone: two checkouts never rebuild each other's
    assert sorted(p.name.split("-")[0] for p in fresh_cache.iterdir()) == ["1.0.0", "1.0.1"]
    unused = time.time() - _sizes.STALE_AFTER_S - 60
    os.utime(kept, (unused, unused))
    monkeypatch.setattr(_sizes, "kit_version", lambda: "1.0.2")
    _sizes._cache_key.cache_clear()
    _sizes.realistic_table.cache_clear()
    assert _sizes.realistic_table(100_000) == first and built == [100_000] * 3
    # the tables no run has read for a week are gone, the ones read since are kept
    assert sorted(p.name.split("-")[0] for p in fresh_cache.iterdir()) == ["1.0.1", "1.0.2"]


def test_each_case_is_allowed_what_a_linear_reader_needs_for_its_bytes_or_tensors() -> None:
    at_limit, _, over, _, many = _sizes.size_cases(blob_limit(wire.default_registry()))
    assert _size_budget.scale(at_limit) == pytest.approx(16.0, rel=0.01)  # bytes and tensors
    assert _size_budget.scale(over) == pytest.approx(16.0)  # bytes: a few tensors
    tensors = _sizes.count_tensors(many.blob) / _sizes.count_tensors(
        _size_budget.small_table(blob_limit(wire.default_registry()))
    )
    assert _size_budget.scale(many) == pytest.approx(tensors) and tensors > 16  # tensors, not bytes
    allowed = _size_budget.allowance(at_limit, 0.4, 5.0)
    assert allowed.seconds == pytest.approx(4 * 0.4 * _size_budget.scale(at_limit))
    assert (
        "(--timeout 5 s; 4 x a linear growth from its time at a sixteenth of the limit" in allowed.describe()
    )
    assert _size_budget.allowance(at_limit, 0.01, 5.0).seconds == 5.0  # never under --timeout
    assert _size_budget.allowance(many, None, 5.0).seconds == 5.0  # no small table read: --timeout


class FakeReader:
    """A reader on a fake clock: each table takes the seconds scripted for it (the next of a
    list), and one that takes longer than its allowance answers nothing in it. Not timed: the
    clock only moves when the reader is asked. The reference read beside it for size:growth
    (tests/compat/test_growth.py) is this reader too, timed by the wall-clock."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, **seconds: list[float]) -> None:
        self.now = 0.0
        self.seconds = seconds
        self.asked: list[tuple[str, float]] = []
        self.label, self.version, self.testee = "fake", released_versions()[-1], None
        monkeypatch.setattr(_growth, "time", SimpleNamespace(perf_counter=lambda: self.now))
        monkeypatch.setattr(_growth, "cpu_seconds", lambda who: None)
        monkeypatch.setattr(_growth, "yardstick", lambda *args: contextlib.nullcontext(self))
        monkeypatch.setattr(_checks, "ask_read", self.ask)
        monkeypatch.setattr(_size_budget, "judge_size", self.judge)

    def ask(self, r: Any, blob: bytes, timeout_s: float) -> Any:
        table = {
            len(_size_budget.small_table(blob_limit(wire.default_registry()))): "small",
            blob_limit(wire.default_registry()): "limit",
            blob_limit(wire.default_registry()) + 1: "over",
        }
        name = "multibyte" if _sizes.PAD_MEMBER.encode() in blob[:8192] else table.get(len(blob), "many")
        self.seconds.setdefault("multibyte", [1.0])  # the multi-byte cases, at and over the limit
        took = self.seconds[name].pop(0) if len(self.seconds[name]) > 1 else self.seconds[name][0]
        self.asked.append((name, timeout_s))
        self.now += min(took, timeout_s)
        if took > timeout_s:
            return _results.Broken(f"no reply within {timeout_s:g} s; stderr: (empty)")
        return _results.Decoded({})

    def judge(self, r: Any, case: _sizes.SizeCase, reply: Any, allowance: Any, registry: Any = None) -> Any:
        ok = isinstance(reply, _results.Decoded)
        yield _results.Result(case.id, case.tier, Outcome.PASSED if ok else Outcome.ERRORED, reader=r.label,
                              message=allowance.describe())  # fmt: skip


def at_limit_table() -> bytes:
    """The table at the limit."""
    return _sizes.size_cases(blob_limit(wire.default_registry()))[0].blob


def outcomes(results: list[_results.Result]) -> dict[str, _results.Result]:
    return {r.case: r for r in results}


def test_a_small_read_out_of_time_on_a_busy_machine_is_asked_once_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the yardstick read past --timeout (a machine busy with other work) gets GROWTH_TOLERANCE x the room
    reader = FakeReader(monkeypatch, small=[12.0, 0.5, 0.5], limit=[6.0], over=[1.0], many=[1.0])
    found = outcomes(list(_size_budget.read_sizes(reader, 5.0, wire.default_registry())))
    assert found["size:growth"].outcome is Outcome.PASSED, found["size:growth"].message
    assert [(n, t) for n, t in reader.asked if n == "small"][:2] == [("small", 5.0), ("small", 20.0)]


def test_a_reader_that_cannot_read_the_small_table_in_four_times_the_room_fails_growth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = FakeReader(monkeypatch, small=[30.0], limit=[6.0], over=[1.0], many=[1.0])
    found = outcomes(list(_size_budget.read_sizes(reader, 5.0, wire.default_registry())))
    assert found["size:growth"].outcome is Outcome.FAILED
    assert found["size:growth"].symptom == "did not read the growth tables"
    assert [t for n, t in reader.asked if n == "small"] == [5.0, 20.0]


def test_a_rerun_of_the_blob_over_the_limit_asks_it_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--case size:over-limit`` times the small table (its allowance rests on it) and sends the
    blob over the limit: never the table at the limit, nor the generated payloads."""
    from refitwire import compat

    def never(*_: Any) -> Any:
        raise AssertionError("made for a --case that does not need it")

    reader = FakeReader(monkeypatch, small=[0.4], limit=[6.0], over=[1.0], many=[1.0])
    monkeypatch.setattr(_cases, "generated_payloads", never)
    plan = compat.Plan(
        registry=wire.default_registry(),
        participants=[compat.reference(wire.default_registry())[-1]],
        examples=0,
        only="size:over-limit",
        check_messages=False,
    )
    results = [line for line in compat.run_matrix(plan) if line["type"] == "result"]
    assert [(r["case"], r["outcome"]) for r in results] == [("size:over-limit", "passed")], results
    assert [name for name, _ in reader.asked] == ["small", "small", "over"]


def _small_case() -> _sizes.SizeCase:
    blob = _sizes.filled(300_000, _sizes._realistic_tensor)
    return _sizes.SizeCase(
        "size:small",
        "required",
        "a realistic table of 300000 bytes",
        blob,
        True,
        blob_limit(wire.default_registry()),
    )


@pytest.mark.parametrize("version", released_versions())
def test_the_kept_decoded_form_is_the_projection_of_the_table(
    fresh_cache: Path, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _small_case()
    model = _cases.model_of(version, wire.default_registry())
    kept = _sizes.expected_read(case, model)
    # what the reference reader decodes from the table: an oracle apart from the model's projection
    assert orjson.loads(kept) == to_decoded(unwrap_rendezvous_blob(case.blob, spec_version=version), version)
    assert (
        len([p for p in fresh_cache.rglob(f"size-small-{len(case.blob)}.decoded-*")]) == 1
    )  # one file per shape

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
        (result,) = list(
            _size_budget.judge_size(
                reader, case, _checks.ask_read(reader, case.blob, 60.0), allowance, wire.default_registry()
            )
        )
    finally:
        testee.stop()
    if symptom is None:
        assert result.outcome is Outcome.PASSED, result
    else:
        assert result.outcome is Outcome.FAILED and result.symptom.startswith(symptom), result
        assert "/tensors/0/shards/0/" in result.message, result.message


def test_the_size_cases_follow_the_limit_of_the_registry_they_are_read_with(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A registry whose SPEC.md states another blob size limit is read at that limit: the small
    table, the table at the limit, one byte over and the many small tensors all follow it."""
    proposed = wire.Registry.from_folder(
        proposed_schema(tmp_path / "schema", {"| blob size 64 MiB |": "| blob size 1 MiB |"})
    )
    limit = blob_limit(proposed)
    assert limit == 1 << 20 < blob_limit(wire.default_registry())
    reader = FakeReader(monkeypatch, small=[0.4])
    sent: list[int] = []

    def ask(r: Any, blob: bytes, timeout_s: float) -> Any:
        sent.append(len(blob))
        reader.now += 0.1  # the fake clock: every table read in a tenth of a second
        return _results.Decoded({})

    monkeypatch.setattr(_checks, "ask_read", ask)
    found = outcomes(list(_size_budget.read_sizes(reader, 5.0, proposed)))
    # the reader's first read of the small table, the reference's, a round of both in turns, the
    # table at the limit (the reference first), each other case
    turns = [limit // 16] * (1 + 1 + 2 * _growth.PAIRS)
    assert sent == [*turns, limit, limit, limit, limit + 1, limit + 1, limit // 8], sent
    assert f"of exactly {limit} bytes" in _sizes.size_cases(limit)[0].description
    assert found["size:growth"].outcome is Outcome.PASSED, found["size:growth"]
