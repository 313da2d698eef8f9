"""``refitwire refit``: whole runs through the CLI, with real processes and NIXL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("refitwire.refit._nixl")

from refitwire.cli import main

pytestmark = [pytest.mark.nixl, pytest.mark.slow]


def test_a_corrupt_step_is_refused_and_the_run_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "report.json"
    argv = ["refit", "--model", "tiny", "--publishers", "2", "--receivers", "2", "--steps", "3",
            "--inject", "corrupt", "--json", str(report_path)]  # fmt: skip
    assert main(argv) == 1
    out, err = capsys.readouterr()
    report = json.loads(report_path.read_text())
    assert report["schema"] == "refitwire.refit-report.v1" and report["ok"] is False
    by_step = {s["step"]: s for s in report["steps"]}
    assert [s["inject"] for s in report["steps"]] == [None, "corrupt", None]
    for step, installed in ((1, True), (2, False), (3, True)):
        for row in by_step[step]["receivers"]:
            assert row["installed"] is installed
            assert row["matches_truth"] is True  # each holds exactly the values of the step it holds
            assert row["holds_step"] == (step if installed else step - 1)
    for row in by_step[2]["receivers"]:
        assert [v["tensor"] for v in row["verdicts"] if v["verdict"] == "corrupt"] == ["lm_head.bias"]
    assert report["totals"]["wire_bytes"] > 0 and report["totals"]["bytes_per_s"] > 0
    # The table is on stdout, progress on stderr.
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["step", "injected", "recv", "shards"]
    assert any(line.startswith("2     corrupt@pub1") and "1 corrupt" in line for line in lines)
    assert lines[-1] == "result: NOT every step installed"
    assert "MiB/s" in err and "step 1" in err


def test_a_clean_run_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["refit", "--model", "tiny", "--publishers", "1", "--receivers", "1", "--steps", "1",
            "--store", str(tmp_path / "rv")]  # fmt: skip
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[-1] == "result: every step verified and installed"
    assert (tmp_path / "rv" / "rank-00000.blob").exists()  # the store it was given


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refit", "--publishers", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
