"""The figures of the refit, the benchmarks and the fuzzer, for tools/figures.py: what each
runs (real NIXL between real processes, a real redis-server, libFuzzer over the reader) and
the text it writes from that run.

Every run here is the command the page shows, run as a user runs it; the numbers are read back
from its ``--json`` report (or, for the bench and the fuzzer, from what it printed), never typed.
A run that did not pass (a refit step not installed, a fuzzer crash) is shown as such, never
as a figure: the text says what failed.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The refits behind the per-model table: one publisher, one receiver, four steps (one cold).
MODELS = ("default", "256mib", "1gib")
#: The real shapes, each scaled to 1 GiB: two publishers (expert-parallel), one receiver.
SHAPES = ("moe-30b-a3b", "dense-8b")
FLEET_RANKS = (16, 64, 256)
#: Publishers x receivers for the scaling table, on one model.
SCALING = ((1, 1), (2, 2), (4, 2))
SCALING_MODEL = "256mib"
BENCH_REPEATS = 5
FUZZ_SECONDS = 60


def _timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=3600
    )
    return time.monotonic() - started, done


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def _median_and_range(values: list[float], show: Callable[[float], str]) -> str:
    """The median, and the range of single values beside it when they differ."""
    if not values:
        return "-"
    middle, low, high = show(statistics.median(values)), show(min(values)), show(max(values))
    return middle if low == high else f"{middle} ({low}-{high})"


# -- the refit ---------------------------------------------------------------------------------


def _refit_run(refitwire: list[str], work: Path, name: str, argv: list[str]) -> dict[str, Any]:
    report = work / f"refit-{name}.json"
    wall, done = _timed([*refitwire, "refit", *argv, "--json", str(report)], work)
    if not report.is_file():
        return {"argv": argv, "wall": round(wall, 1), "exit": done.returncode, "error": done.stderr[-600:]}
    found = json.loads(report.read_text(encoding="utf-8"))
    rows = [r for step in found["steps"] for r in step["receivers"]]
    warm = [r for r in rows if r.get("plan_reused") and r.get("installed")]
    shards = len(rows[0].get("verdicts", ())) if rows else 0
    keep = (
        "wire_bytes",
        "transfer_s",
        "total_s",
        "over_raw",
        "over_contiguous",
        "wall_over_transfer",
        "bytes_per_s",
    )
    return {
        "argv": argv, "wall": round(wall, 1), "exit": done.returncode, "ok": found["ok"],
        "setup_s": found["setup_s"], "summary": found["summary"], "shards": shards,
        "warm": [{key: r.get(key) for key in (*keep, "phases_s")} for r in warm],
    }  # fmt: skip


def measure_demo(refitwire: list[str], work: Path) -> dict[str, Any]:
    return _refit_run(refitwire, work, "demo", [])


def measure_models(refitwire: list[str], work: Path) -> dict[str, Any]:
    return {model: _refit_run(refitwire, work, model, ["--model", model, "--publishers", "1", "--receivers", "1",
                                                        "--steps", "4"]) for model in MODELS}  # fmt: skip


def measure_shapes(refitwire: list[str], work: Path) -> dict[str, Any]:
    return {layout: _refit_run(refitwire, work, layout, ["--layout", layout, "--model-bytes", "1GiB",
                                                          "--publishers", "2", "--receivers", "1", "--steps", "4"])
            for layout in SHAPES}  # fmt: skip


def measure_scaling(refitwire: list[str], work: Path) -> dict[str, Any]:
    return {f"{p} x {r}": _refit_run(refitwire, work, f"fleet-{p}x{r}", ["--model", SCALING_MODEL, "--publishers", str(p),
                                                                       "--receivers", str(r), "--steps", "4"])
            for p, r in SCALING}  # fmt: skip


def _failed(run: dict[str, Any]) -> str | None:
    """What went wrong in a refit run, or None when every step verified and installed."""
    if "error" in run:
        return f"the run failed (exit {run['exit']}): {run['error'].strip().splitlines()[-1:]}"
    if not run["ok"]:
        return f"not every step verified and installed (exit {run['exit']})"
    return None


def _unmeasured_row(label: str, run: dict[str, Any], columns: int) -> str | None:
    """A table row that says why ``run`` gives no figures (it failed, or had no warm step), or
    None when it has them."""
    why = _failed(run) or (None if run["warm"] else "no warm step")
    return None if why is None else f"| {label} | {why} |" + " |" * (columns - 2)


def demo_text(run: dict[str, Any], stamp: str) -> str:
    failed = _failed(run)
    if failed:
        return f"{run['wall']:.1f} s wall, but {failed} {stamp}"
    cold, warm = run["summary"]["cold"], run["summary"]["warm"]
    return (f"{run['wall']:.1f} s wall, process start included ({run['setup_s']:.1f} s of it starting the processes; "
            f"the cold step {cold['median_total_s']:.2f} s, warm steps {_ms(warm['median_total_s'])} median; every "
            f"step verified and installed) {stamp}")  # fmt: skip


def models_text(runs: dict[str, Any], stamp: str) -> str:
    lines = ["| model | bytes per step | transfer | step wall | wall / transfer | of raw | step wall per MiB |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for model, run in runs.items():
        if row := _unmeasured_row(f"`{model}`", run, 7):
            lines.append(row)
            continue
        warm = run["warm"]
        mib = warm[0]["wire_bytes"] / 2**20
        wall = [r["total_s"] for r in warm]
        lines.append(
            f"| `{model}` | {mib:.1f} MiB | {_ms(statistics.median(r['transfer_s'] for r in warm))} | "
            f"{_ms(statistics.median(wall))} | {_median_and_range([r['wall_over_transfer'] for r in warm], '{:.2f}x'.format)} | "
            f"{_median_and_range([r['over_raw'] for r in warm], '{:.2f}'.format)} | {statistics.median(wall) * 1e3 / mib:.3f} ms |"
        )  # fmt: skip
    return (
        "\n\n"
        + "\n".join(lines)
        + f"\n\nOne publisher, one receiver, four steps; medians of the warm steps {stamp}\n"
    )


def shapes_text(runs: dict[str, Any], stamp: str) -> str:
    lines = ["| layout at 1 GiB, 2 x 1 | shards read per step | whole run | cold step | warm step | discover (decode) "
             "| check | transfer | verify | wall / transfer | of raw (same descriptors / large ones) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for layout, run in runs.items():
        if row := _unmeasured_row(f"`{layout}`", run, 11):
            lines.append(row)
            continue
        cold, warm = run["summary"]["cold"], run["summary"]["warm"]
        phase = warm["phases_s"]
        lines.append(
            f"| `{layout}` | {run['shards']:,} | {run['wall']:.1f} s | {cold['median_total_s']:.2f} s | "
            f"{_median_and_range([r['total_s'] for r in run['warm']], _ms)} | {_ms(phase['discover'])} ({_ms(phase['decode'])}) | "
            f"{_ms(phase['check'])} | {_ms(phase['transfer'])} | {_ms(phase['verify'])} | "
            f"{warm['median_wall_over_transfer']:.2f}x | {warm['median_over_raw']:.2f} / {warm['median_over_contiguous']:.2f} |"
        )  # fmt: skip
    return ("\n\n" + "\n".join(lines) + "\n\nFour steps, the first cold; phases are the means of the warm steps, ratios "
            f"their medians {stamp}\n")  # fmt: skip


def scaling_text(runs: dict[str, Any], stamp: str) -> str:
    lines = [
        "| publishers x receivers | per receiver | of raw | wall / transfer | step wall |",
        "|---|---|---|---|---|",
    ]
    for fleet, run in runs.items():
        if row := _unmeasured_row(fleet, run, 5):
            lines.append(row)
            continue
        warm = run["warm"]
        rate = statistics.median(r["bytes_per_s"] for r in warm)
        lines.append(
            f"| {fleet} | {rate / 1e9:.1f} GB/s | {_median_and_range([r['over_raw'] for r in warm], '{:.2f}'.format)} | "
            f"{_median_and_range([r['wall_over_transfer'] for r in warm], '{:.2f}x'.format)} | "
            f"{_ms(statistics.median(r['total_s'] for r in warm))} |"
        )  # fmt: skip
    return ("\n\n" + "\n".join(lines) + f"\n\n`--model {SCALING_MODEL}`, four steps; medians of the warm steps of every "
            f"receiver {stamp}\n")  # fmt: skip


# -- discovery at fleet scale ------------------------------------------------------------------


#: The fleet on paper the steady state is set against: each receiver one GPU of a
#: tensor-parallel engine pulling its share of the whole model over one NIC.
PAPER_TENSOR_PARALLEL = 8
PAPER_NIC_BITS_PER_S = 400e9


def measure_fleet(work: Path) -> dict[str, Any]:
    from refitwire.refit import resolve_model

    report = work / "fleet.json"
    ranks = [str(n) for n in FLEET_RANKS]
    argv = [
        sys.executable,
        "-m",
        "refitwire.bench._fleet",
        "--ranks",
        *ranks,
        "--reps",
        "3",
        "--json",
        str(report),
    ]
    wall, done = _timed(argv, work)
    if done.returncode != 0 or not report.is_file():
        raise SystemExit(f"the fleet benchmark failed ({done.returncode}): {done.stderr[-600:]}")
    found = json.loads(report.read_text(encoding="utf-8"))
    whole = resolve_model("whole", found["layout"]).nbytes  # the layout unscaled
    return {**found, "wall": round(wall, 1), "whole_model_bytes": whole}


def fleet_text(found: dict[str, Any], stamp: str) -> str:
    lines = ["| N | store | blob | entries read | bytes read | list | read | quorum | decode | discovery | loaded "
             "| receiver, first step | receiver, steady | receiver, one re-posted |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for row in found["rows"]:
        quiet = row["quiet"]
        lines.append(
            f"| {row['ranks']} | {row['store']} | {row['blob_bytes_median'] / 1e3:.0f} kB | {quiet['entries']:,.0f} | "
            f"{quiet['bytes'] / 1e6:.1f} MB | {_ms(quiet['list_s'])} | {_ms(quiet['read_s'])} | {_ms(quiet['quorum_s'])} | "
            f"{_ms(quiet['decode_s'])} | {_ms(quiet['total_s'])} | {_ms(row['loaded']['total_s'])} | "
            f"{_ms(row['receiver_first']['total_s'])} | {_ms(row['receiver_steady']['total_s'])} | "
            f"{_ms(row['receiver_one_reposted']['total_s'])} |"
        )  # fmt: skip
    most = max(row["ranks"] for row in found["rows"])
    share = found["whole_model_bytes"] / PAPER_TENSOR_PARALLEL
    step = share / (PAPER_NIC_BITS_PER_S / 8)
    steady = ", ".join(f"{row['receiver_steady']['total_s'] / step:.1%} ({row['store']})"
                       for row in found["rows"] if row["ranks"] == most)  # fmt: skip
    first = ", ".join(f"{row['receiver_first']['total_s'] / step:.0%} ({row['store']})"
                      for row in found["rows"] if row["ranks"] == most)  # fmt: skip
    paper = (f"On paper, at {most} ranks: a receiver that is one GPU of a tensor-parallel-{PAPER_TENSOR_PARALLEL} engine "
             f"pulls its share of the whole model, {share / 1e9:.1f} GB, over one {PAPER_NIC_BITS_PER_S / 1e9:.0f} Gbit/s "
             f"NIC in {_ms(step)}; the steady state is {steady} of that step, a first step (or any step whose tables "
             f"changed) {first}.")  # fmt: skip
    return ("\n\n" + "\n".join(lines) + f"\n\n`{found['layout']}` tables, medians of {found['reps']}; `loaded`: while "
            f"{found['loaders']} other receivers discover in a loop. {paper} {stamp}\n")  # fmt: skip


def discovery_text(found: dict[str, Any], stamp: str) -> str:
    """The two stores side by side at the fewest ranks measured."""
    fewest = min(row["ranks"] for row in found["rows"])
    by_store = {row["store"]: row for row in found["rows"] if row["ranks"] == fewest}
    blob = by_store["directory"]["blob_bytes_median"] / 1e3
    return (f"{_ms(by_store['redis']['quiet']['total_s'])} in Redis on loopback, "
            f"{_ms(by_store['directory']['quiet']['total_s'])} from a directory ({fewest} ranks of "
            f"`{found['layout']}` tables of {blob:.0f} kB, every table decoded) {stamp}")  # fmt: skip


# -- the bench and the fuzzer -------------------------------------------------------------------

BENCH_ARGV = ["bench", "--repeats", str(BENCH_REPEATS)]


def measure_bench(refitwire: list[str], work: Path) -> dict[str, Any]:
    wall, done = _timed([*refitwire, *BENCH_ARGV], work)
    return {"stdout": done.stdout, "exit": done.returncode, "wall": round(wall, 1)}


def bench_text(found: dict[str, Any], stamp: str) -> str:
    body = "\n".join([f"$ refitwire {' '.join(BENCH_ARGV)}", *found["stdout"].rstrip("\n").splitlines()])
    return f"\n```\n{body}\n```\n(exit {found['exit']}, {found['wall']:.0f} s of wall clock) {stamp}\n"


#: The fuzzer's runs: the CI run, and a timed one with the dictionary and long inputs.
FUZZ_RUNS = {
    "ci": ["-runs=20000", "-dict=fuzz/blob.dict"],  # as tox -e fuzz runs it
    "timed": [f"-max_total_time={FUZZ_SECONDS}", "-dict=fuzz/blob.dict", "-max_len=65536"],
}
_DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def measure_fuzz(root: Path, work: Path) -> dict[str, Any]:
    runs = {}
    for name, flags in FUZZ_RUNS.items():
        corpus = work / f"fuzz-{name}"  # libFuzzer's working corpus: fuzz/corpus only seeds it
        corpus.mkdir()
        argv = [
            sys.executable,
            "fuzz/fuzz_reader.py",
            *flags,
            f"-artifact_prefix={work}/{name}-",
            str(corpus),
            "fuzz/corpus",
        ]
        wall, done = _timed(argv, root)
        counted = _DONE.search(done.stderr)
        runs[name] = {"flags": flags, "exit": done.returncode, "wall": round(wall, 1),
                      "inputs": int(counted[1]) if counted else None, "seconds": int(counted[2]) if counted else None,
                      "crashes": len(list(work.glob(f"{name}-crash-*")))}  # fmt: skip
    return {"runs": runs}


def fuzz_text(found: dict[str, Any], stamp: str) -> str:
    lines = ["| run | inputs | time | crashes |", "|---|---|---|---|"]
    for run in found["runs"].values():
        shown = " ".join(f"`{flag}`" for flag in run["flags"])
        if run["inputs"] is None:
            lines.append(
                f"| {shown} | the run failed (exit {run['exit']}) | {run['wall']:.0f} s | {run['crashes']} |"
            )
            continue
        rate = f" (~{run['inputs'] / run['seconds']:,.0f}/s)" if run["seconds"] else ""
        crashes = f"{run['crashes']}" + ("" if run["exit"] == 0 else f", exit {run['exit']}")
        lines.append(f"| {shown} | {run['inputs']:,}{rate} | {run['wall']:.0f} s | {crashes} |")
    return (
        "\n\n" + "\n".join(lines) + f"\n\nSeeded with `fuzz/corpus`, each in a fresh working corpus {stamp}\n"
    )
