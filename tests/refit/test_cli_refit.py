"""``refitwire refit``: whole runs through the CLI, with real processes and NIXL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from refitwire.refit._errors import NixlMissing

# NIXL raises a plain ImportError when missing; pytest 9 skips only on ModuleNotFoundError unless told.
pytest.importorskip("refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing)

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
    argv = ["refit", "--model", "tiny", "--publishers", "1", "--receivers", "1", "--steps", "2",
            "--store", str(tmp_path / "rv"), "--json", str(tmp_path / "report.json")]  # fmt: skip
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[-1] == "result: every step verified and installed"
    assert (tmp_path / "rv" / "rank-00000.blob").exists()  # the store it was given
    # Each step beside the raw NIXL READ of the same bytes, and its wall time over its transfer time.
    report = json.loads((tmp_path / "report.json").read_text())
    rows = [row for step in report["steps"] for row in step["receivers"]]
    for row in rows:
        raw = row["raw_nixl"]  # measured right after the step, by the same processes
        assert raw["ok"] and raw["bytes"] == row["wire_bytes"] > 0 and raw["bytes_per_s"] > 0
        assert row["transfer_s"] > 0 and row["total_s"] >= row["transfer_s"]
        assert row["over_raw"] == pytest.approx(row["bytes_per_s"] / raw["bytes_per_s"])
        assert row["wall_over_transfer"] == pytest.approx(row["total_s"] / row["transfer_s"])
        assert set(row["phases_s"]) == {"discover", "decode", "check", "transfer", "verify", "install"}
        # The floors: the READ or the digests, whichever is slower; and, where they share the
        # cores, the CPU both took (this process, every thread) over the cores.
        floor = max(raw["best_s"], raw["digest_best_s"])
        assert row["over_floor"] == pytest.approx(row["total_s"] / floor)
        assert raw["cpu_s"] > 0 and raw["digest_cpu_s"] > 0 and raw["cores"] == len(os.sched_getaffinity(0))
        shared = max(floor, (raw["cpu_s"] + raw["digest_cpu_s"]) / raw["cores"])
        assert row["cpu_floor_s"] == pytest.approx(shared)
        assert row["over_cpu_floor"] == pytest.approx(row["total_s"] / shared)
    assert [row["plan_reused"] for row in rows] == [False, True]
    assert out.splitlines()[0].split()[-2:] == ["raw", "wall/xfer"]
    assert "of raw: each row's MiB/s over a plain NIXL READ of the same bytes" in out
    assert "cpu: the raw READ took" in out and f"on {len(os.sched_getaffinity(0))} cores" in out


def test_a_model_of_a_given_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["refit", "--model-bytes", "300000", "--publishers", "1", "--receivers", "1", "--steps", "1",
            "--raw-reps", "0", "--json", str(tmp_path / "report.json")]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["config"]["model"] == "300000B" and report["model_bytes"] >= 300000
    (row,) = report["steps"][0]["receivers"]
    assert "raw_nixl" not in row and row["over_raw"] is None


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["refit", "--publishers", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
    assert main(["refit", "--layout", "nope.json"]) == 2
    assert (
        "layout 'nope.json': no such file, and not a preset (dense-8b, moe-30b-a3b)"
        in capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as stopped:  # argparse refuses the value itself
        main(["refit", "--model-bytes", "1 parsec"])
    assert stopped.value.code == 2 and "is not a byte count" in capsys.readouterr().err


def test_a_real_moe_layout_is_refit_tensor_by_tensor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 18,867 tensors in 4 MiB: experts whole on one publisher, split by both receivers.
    argv = ["refit", "--layout", "moe-30b-a3b", "--model-bytes", "4MiB", "--publishers", "2",
            "--receivers", "2", "--steps", "2", "--raw-reps", "1", "--json", str(tmp_path / "r.json")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().out[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["config"]["layout"] == "moe-30b-a3b" and report["model_bytes"] >= 4 << 20
    for step in report["steps"]:
        for row in step["receivers"]:
            assert row["installed"] and row["matches_truth"]
            assert len(row["verdicts"]) > 18867 // 2 and {v["verdict"] for v in row["verdicts"]} == {
                "verified"
            }
            raw = row["raw_nixl"]  # the same descriptors, and the same bytes in a few large ones
            assert raw["descriptors"] == len(row["verdicts"]) and raw["contiguous_descriptors"] <= 4


def test_parsing_a_refitwire_command_and_running_the_harness_import_no_torch() -> None:
    code = (
        "import argparse, sys\n"
        "import refitwire.cli, refitwire.cli.refit, refitwire.refit._run, refitwire.refit._publisher, refitwire.wire\n"
        "parser = argparse.ArgumentParser()\n"
        "refitwire.cli.refit.add_arguments(parser, refitwire.wire.default_registry())\n"
        "parser.parse_args(['--model', 'tiny'])\n"
        "print(sorted(m for m in ('torch', 'nixl_cu12', 'nixl') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout
