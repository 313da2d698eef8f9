"""The suite has teeth: each deliberately broken testee fails conformance, naming the case that caught it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FAULTY = Path(__file__).with_name("faulty_testee.py")
FAULTS = [
    "step-missing-as-zero", "writes-null-step", "drops-step-zero", "rejects-unknown-keys",
    "accepts-wrong-schema-id", "rounds-large-addresses", "reorders-shards", "uppercases-digests",
    "writes-null-digests", "crashes-on-empty-table", "hangs-on-read", "wrong-seq",
    "endpoint-null-as-none", "garbage-output", "drops-unknown-dtype-tensors",
]  # fmt: skip


def conformance(fault: str, tmp_path: Path) -> tuple[int, list[dict], str]:  # type: ignore[type-arg]
    report = tmp_path / "report.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "refitwire", "conformance", "--testee", f"{sys.executable} {FAULTY} {fault}",
         "--seed", "7", "--examples", "25", "--timeout", "1.5", "--output", str(report)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    return done.returncode, lines, done.stdout


def test_the_correct_implementation_passes(tmp_path: Path) -> None:
    code, lines, out = conformance("none", tmp_path)
    assert code == 0, out
    assert lines[-1]["required_failed"] == 0
    assert sum(1 for r in lines if r["type"] == "result" and r["outcome"] == "passed") > 300


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_testee_fails_and_the_case_is_named(fault: str, tmp_path: Path) -> None:
    code, lines, out = conformance(fault, tmp_path)
    assert code == 1, out
    caught = [
        r
        for r in lines
        if r["type"] == "result" and r["tier"] == "required" and r["outcome"] in ("failed", "errored")
    ]
    assert caught, out
    assert all("testee:" in (r.get("writer", "") + r.get("reader", "")) for r in caught)
    assert caught[0]["case"] in out  # the failing case is named in the text report
