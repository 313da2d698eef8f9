"""tools/figures.py: every figure of the README and the docs sits between its markers, ``--check``
fails on a marker missing or malformed (never on a number) and on a figure typed outside the
markers (tools/_figure_scan.py), and what the script writes from a run passes the check and
leaves the other figures as they were. Nothing here measures."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import tools_module

ROOT = Path(__file__).resolve().parents[1]
STAMP = "(this machine: 2 cores, AMD EPYC, load average 5.1-6.3; 2026-12-07)"


@pytest.fixture(scope="module")
def figures() -> Iterator[Any]:
    yield from tools_module("figures")


def _docs(figures: Any) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in figures.documents()}


def _with_every_figure(figures: Any) -> dict[str, str]:
    """A set of documents holding each figure where it must be, each well formed."""
    files: dict[str, str] = {}
    for name, paths in figures.PLACES.items():
        for path in paths:
            files[path] = (
                files.get(path, "Text ") + f"took <!-- figure: {name} -->4 s {STAMP}<!-- /figure -->.\n"
            )
    return files


def test_the_checkouts_figures_are_all_in_place() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "figures.py"), "--check"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("figures: every marker in place")


def test_no_figure_in_the_docs_is_typed_by_hand(figures: Any) -> None:
    """The figures the issue found stale are gone from the prose: each is a marker now."""
    text = "\n".join(_docs(figures).values())
    for stale in ["29,404 cases in 11.3 s", "212 KB page", "about 15 s here", "a few tenths of a second",
                  "22,103 cases in 7.2 s"]:  # fmt: skip
        assert stale not in text, stale


def test_well_formed_figures_pass_whatever_their_numbers(figures: Any) -> None:
    files = _with_every_figure(figures)
    assert figures.check(files) == []
    other = {path: text.replace("4 s", "4000 s") for path, text in files.items()}
    assert figures.check(other) == []  # a number that differs is never an error


@pytest.mark.parametrize(
    ("break_it", "says"),
    [
        (lambda t: t.replace("<!-- figure: page -->", ""), "<!-- /figure --> closes no figure"),
        (lambda t: t.replace("<!-- figure: page -->", "<!-- figure: pages -->"), "no figure is named 'pages'"),
        (lambda t: t.replace("<!-- figure: page -->", "<!--figure: page-->"), "closes no figure"),
        (lambda t: "".join(t.rsplit("<!-- /figure -->", 1)), "is not closed"),
        (lambda t: t.replace("4 s (this machine", "<!-- figure: caches -->(this machine", 1), "opens inside 'matrix'"),
        (lambda t: t.replace(f"<!-- figure: page -->4 s {STAMP}", "<!-- figure: page -->"), "figure 'page' is empty"),
        (lambda t: t.replace(f"<!-- figure: page -->4 s {STAMP}", "<!-- figure: page -->4 s"),
         "figure 'page' does not name the machine and the date"),
        (lambda t: t.replace("took <!-- figure: codec-start -->", "took <!-- gone -->"), "no figure 'codec-start'"),
    ],
)  # fmt: skip
def test_a_missing_or_malformed_marker_fails_the_check(figures: Any, break_it: Any, says: str) -> None:
    files = _with_every_figure(figures)
    files["README.md"] = break_it(files["README.md"])
    problems = figures.check(files)
    assert any(says in line and line.startswith("README.md: ") for line in problems), problems


def test_the_script_stops_before_measuring_when_a_marker_is_malformed(
    figures: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("a <!-- figure: page -->x\n", encoding="utf-8")
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    monkeypatch.setattr(figures, "documents", lambda: [readme])
    monkeypatch.setattr(figures, "measure", lambda *a: pytest.fail("measured despite a malformed marker"))
    assert figures.main([]) == 1
    assert "figure 'page' is not closed" in capsys.readouterr().err


def test_what_the_script_writes_passes_the_check_and_keeps_the_rest(figures: Any) -> None:
    load = {"load": [5.12, 6.31], "date": "2026-12-07", "cores": 2, "cpu": "AMD EPYC"}
    report = {"cases": 80616, "seconds": 38.6, "wall": 44.0, "participants": 9, "examples": 200, "exit": 0,
              "upstream": "ran", "outcomes": {"passed": 79000, "xfailed": 890}, "required_failed": 0,
              "recommended_failed": 0, "xpassed": 0, "counted": {"no_rule": 236, "no_digest": 171},
              "expected_by_participant": {"modelexpress@0.6.0": 382, "gen-1.0.0": 40}, **load}  # fmt: skip
    measured = {
        **_refit_measurements(load),
        "matrix": report, "conformance-js": report, "conformance-reference": report,
        "page": {"bytes": 1_877_000, "wall": 2.4, "cases": 80616, **load},
        "codec-start": {"medians": {"validate": 0.71, "decode": 2.0}, "repeats": 5, **load},
        "caches": {"sizes": {"size-cases": 3 * 2**28, "compat-envs": 2**31}, "total": 3 * 2**28 + 2**31,
                   "envs": {"modelexpress-0.6.0": 2**30, "modelexpress-0.7.0": 2**30}, **load},
        "env-build": {"version": "0.7.0", "wall": 57.0, "bytes": 2**30, **load},
        "faulty-run": {"stdout": "cells\nseed 5, 50 generated payloads, 1235 cases in 14.755 s\nCONFORMANCE FAILED\n",
                       "exit": 1, "wall": 20.4, **load},
        "faulty-case": {"stdout": "case read:v-1\nseed 5, 50 generated payloads, 1 cases in 8.115 s\n", "exit": 1,
                        "wall": 9.0, **load},
    }  # fmt: skip
    written = figures.texts(measured)
    assert sorted(written) == sorted(figures.PLACES)
    assert written["matrix"].startswith("80,616 cases in 38.6 s (9 participants, 200 payloads")
    assert written["page"].startswith("the page of that run today: 1.79 MiB for 80,616 cases")
    assert written["caches"].startswith(
        "2.75 GiB in all: the upstream environments 2.00 GiB (2 environments, 1.00 GiB each)"
    )
    assert written["matrix-counted"].startswith("236 rejections that gave no rule, 171 digest cases")
    assert "load average 5.1-6.3; 2026-12-07" in written["codec-start"]
    command = 'refitwire conformance --testee "python tests/compat/faulty_testee.py rounds-large-addresses" --seed 5'
    assert written["faulty-run"].startswith(f"\n```\n$ {command}")
    assert (
        "--no-size-limit\n...\nseed 5, 50 generated payloads, 1235 cases in 14.755 s\nCONFORMANCE FAILED\n```\n"
        in (written["faulty-run"])
    )  # the matrix of cells before the run's summary is shown as ...
    assert "--case read:v-9179267ad442\ncase read:v-1\nseed 5" in written["faulty-case"]
    assert written["faulty-case"].endswith(f"```\n(exit 1, 9 s of wall clock) {STAMP}\n")
    with pytest.raises(SystemExit, match="no line starts with 'seed '"):
        figures.texts({"faulty-run": {**measured["faulty-run"], "stdout": "the testee did not start\n"}})
    files = _with_every_figure(figures)
    filled = {path: figures.fill(text, written) for path, text in files.items()}
    assert figures.check(filled) == []
    assert f"<!-- figure: page -->{written['page']}<!-- /figure -->" in filled["README.md"]
    only = {path: figures.fill(text, {"page": "new"}) for path, text in files.items()}
    assert only["README.md"] == files["README.md"].replace(
        f"<!-- figure: page -->4 s {STAMP}<!-- /figure -->", "<!-- figure: page -->new<!-- /figure -->"
    )
    assert {path: figures.fill(text, written) for path, text in filled.items()} == filled


def _refit_run(ok: bool = True) -> dict[str, Any]:
    phases = {
        "discover": 0.0014,
        "decode": 0.0004,
        "check": 0.0001,
        "transfer": 0.05,
        "verify": 0.023,
        "install": 0.0,
    }
    side = {
        "phases_s": phases,
        "median_total_s": 0.0994,
        "median_wall_over_transfer": 1.78,
        "median_over_raw": 0.285,
        "median_over_contiguous": 0.54,
    }
    warm = [
        {
            "wire_bytes": 48304128,
            "transfer_s": t,
            "total_s": 2 * t,
            "over_raw": 0.5,
            "over_contiguous": 0.6,
            "wall_over_transfer": 2.0,
            "bytes_per_s": 4.8e9,
            "phases_s": phases,
        }
        for t in (0.01, 0.02, 0.03)
    ]
    return {"argv": [], "wall": 24.0, "exit": 0 if ok else 1, "ok": ok, "setup_s": 14.4, "shards": 11,
            "summary": {"cold": {**side, "median_total_s": 2.59}, "warm": side}, "warm": warm}  # fmt: skip


def _refit_measurements(load: dict[str, Any]) -> dict[str, Any]:
    quiet = {
        "list_s": 0.0002,
        "read_s": 0.0115,
        "quorum_s": 0.0328,
        "decode_s": 0.352,
        "total_s": 0.397,
        "bytes": 7648562,
        "entries": 25392,
    }
    receiver = {"total_s": 0.0003}
    row = {
        "ranks": 16,
        "blob_bytes_median": 477320.0,
        "quiet": quiet,
        "loaded": {"total_s": 1.0},
        "receiver_first": {"total_s": 0.29},
        "receiver_steady": receiver,
        "receiver_one_reposted": receiver,
    }
    fleet = {
        "layout": "moe-30b-a3b",
        "reps": 3,
        "loaders": 2,
        "whole_model_bytes": 61_064_245_248,
        "rows": [
            {**row, "store": "directory"},
            {**row, "store": "redis", "quiet": {**quiet, "total_s": 0.3223}},
        ],
    }
    fuzz = {
        "runs": {
            "ci": {
                "flags": ["-runs=20000"],
                "exit": 0,
                "wall": 81.0,
                "inputs": 20000,
                "seconds": 76,
                "crashes": 0,
            },
            "timed": {
                "flags": ["-max_total_time=60"],
                "exit": 1,
                "wall": 69.0,
                "inputs": 13790,
                "seconds": 60,
                "crashes": 1,
            },
        }
    }
    return {"refit-demo": {**_refit_run(), **load}, "refit-models": {"default": _refit_run(), "1gib": _refit_run(False), **load},
            "refit-shapes": {"moe-30b-a3b": _refit_run(), **load}, "refit-scaling": {"2 x 2": _refit_run(), **load}, "fleet": {**fleet, **load},
            "bench": {"stdout": "decode ...\ngoals:\n  NOT met  encode\n", "exit": 0, "wall": 300.0, **load},
            "fuzz": {**fuzz, **load}}  # fmt: skip


def test_the_refit_figures_are_written_from_their_runs(figures: Any) -> None:
    load = {"load": [5.12, 6.31], "date": "2026-12-07", "cores": 2, "cpu": "AMD EPYC"}
    written = figures.texts(_refit_measurements(load))
    assert written["refit-demo"].startswith("24.0 s wall, process start included (14.4 s of it starting the processes; "
                                            "the cold step 2.59 s, warm steps 99.4 ms median; every step verified")  # fmt: skip
    assert "| `default` | 46.1 MiB | 20.0 ms | 40.0 ms | 2.00x | 0.50 | 0.868 ms |" in written["refit-models"]
    # a run that did not install every step gives no figure, it says so
    assert "| `1gib` | not every step verified and installed (exit 1) |" in written["refit-models"]
    assert "| 2 x 2 | 4.8 GB/s | 0.50 | 2.00x | 40.0 ms |" in written["refit-scaling"]
    assert written["refit-discovery"].startswith(
        "322 ms in Redis on loopback, 397 ms from a directory (16 ranks"
    )
    assert "pulls its share of the whole model, 7.6 GB, over one 400 Gbit/s NIC in 153 ms" in written["fleet"]
    assert written["bench"].startswith("\n```\n$ refitwire bench --repeats 5\ndecode ...\ngoals:")
    assert "| `-max_total_time=60` | 13,790 (~230/s) | 69 s | 1, exit 1 |" in written["fuzz"]
    files = _with_every_figure(figures)
    assert figures.check({path: figures.fill(text, written) for path, text in files.items()}) == []


@pytest.mark.parametrize(
    "typed",
    ["took 66 ms", "a 2.57 MB table", "16.6 GB/s per receiver", "80,616 cases", "18% of the step", "4.4-5.6 s wall",
     "| `default` | 46.1 MiB | 5.0 ms |", "```\npython fuzz/fuzz_reader.py -runs=20000   # about 5 s\n```"],
)  # fmt: skip
def test_a_figure_typed_outside_the_markers_fails_the_check(figures: Any, typed: str) -> None:
    files = _with_every_figure(figures)
    assert figures.check(files) == []
    files["docs/refit.md"] += f"\nThe run {typed}.\n"
    problems = figures.check(files)
    assert any(line.startswith("docs/refit.md: line ") and "is typed" in line for line in problems), problems


@pytest.mark.parametrize(
    "not_measured",
    ["a blob of up to 64 MiB", "rows of 4 KiB", "`--model-bytes 1GiB`", "(`1GiB`, `512MiB`, `2GB`)",
     "[--model-bytes N (1GiB, 512MiB, 2GB, ...)]", "socket timeout 5 s", "polls every 50 ms", "a goal of 5%",
     "within 20%", "at most 10% of the step", "version 1.2.0 and 0.7.0", "SPEC section 2.7"],
)  # fmt: skip
def test_what_is_no_measurement_passes_the_check(figures: Any, not_measured: str) -> None:
    files = _with_every_figure(figures)
    files["README.md"] += f"\nSee {not_measured}.\n"
    assert figures.check(files) == []
