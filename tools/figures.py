"""Measure every figure the README and the docs quote, and write each between its markers.

    python tools/figures.py [--only NAME...] [--build-env] [--keep FILE | --from FILE]
    python tools/figures.py --check

Each figure sits in README.md, docs/*.md, compat/IMPLEMENTERS.md or fuzz/README.md between markers,
``<!-- figure: NAME -->...<!-- /figure -->``, inside its sentence; the text between them is
written by this script from a run, never typed. What each NAME runs (:data:`FIGURES`): the
matrix (``refitwire matrix --seed 5 --examples 200``: its cases, seconds, failures, expected
failures and counted cases, and its throughput), the page ``refitwire report --html`` writes
from that matrix's report (its size), a conformance run of the reference and of the JavaScript
example testee (``--seed 5``, size cases and released versions included), the transcripts of
two runs against a broken testee (:mod:`_figure_transcripts`), the start of the
codec verbs (``validate``, ``decode``, ``digest``, ``schema list``; median of five starts
each), the size of every cache the kit writes (``refitwire cache --json``; the upstream
environments one by one), the refits and benchmarks of :mod:`_figure_refit` (the default
refit, the per-model and real-shape refits over real NIXL, discovery at fleet scale with a
real redis-server, ``refitwire bench``, the fuzzer), and, only with ``--build-env`` (it
downloads and installs torch), the build of one upstream environment into a temporary folder. Each figure ends with
the machine it was measured on (cores, CPU model), the load average while it ran and the date.

Figures are measured one after the other, never side by side. ``--only`` measures and writes
those figures alone (the others keep their text); a figure not measured in a run keeps its
text, so the environment build stays as its last ``--build-env`` run left it. ``--keep FILE``
saves the raw measurements as JSON and writes nothing, ``--from FILE`` writes the figures
from such a file without measuring again (to change the wording, not the numbers).

``--check`` measures nothing: it exits 1 when a marker is missing from a place that must hold
it (:data:`PLACES`), names a figure this script does not know, is not closed, is nested, is
empty, or does not name the machine and the date, and when a figure (a time, size, throughput
or count of a run) is typed outside the markers (:mod:`_figure_scan`). It never compares numbers: they vary from
one machine and one load to the next, so a figure that differs from what this machine would
measure now is not an error; run the script to bring them up to date.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _clone  # noqa: F401  (this checkout's packages first)
import _figure_disk
import _figure_refit
from _figure_scan import typed_figures
from _figure_text import COUNTED, texts
from _figure_transcripts import TRANSCRIPTS, measure_transcript

ROOT = Path(__file__).resolve().parents[1]
OPEN = re.compile(r"<!-- figure: (?P<name>[a-z0-9-]+) -->")
CLOSE = "<!-- /figure -->"
_ANY_MARKER = re.compile(r"<!-- (?:figure: (?P<name>[^>]*?) |/figure )-->")
#: What every figure's text must say (the machine and the date), for --check.
_STAMP = re.compile(r"this machine: \d+ cores?, .+, load average [\d.]+(?:-[\d.]+)?; \d{4}-\d{2}-\d{2}")
#: Where each figure must appear (a figure may appear in more places than these).
PLACES = {
    "matrix": ["README.md"],
    "matrix-expected": ["README.md"],
    "matrix-counted": ["README.md"],
    "matrix-throughput": ["README.md"],
    "page": ["README.md"],
    "codec-start": ["README.md"],
    "caches": ["README.md"],
    "env-size": ["docs/upstream-ci.md"],
    "env-build": ["docs/upstream-ci.md"],
    "size-cases": ["compat/IMPLEMENTERS.md"],
    "conformance-js": ["compat/IMPLEMENTERS.md"],
    "conformance-reference": ["compat/IMPLEMENTERS.md"],
    "faulty-run": ["compat/IMPLEMENTERS.md"],
    "faulty-case": ["compat/IMPLEMENTERS.md"],
    "refit-demo": ["README.md", "docs/refit.md"],
    "refit-models": ["README.md", "docs/refit.md"],
    "refit-shapes": ["README.md", "docs/refit.md"],
    "refit-scaling": ["docs/refit.md"],
    "refit-discovery": ["README.md"],
    "fleet": ["docs/refit.md"],
    "bench": ["README.md"],
    "fuzz": ["fuzz/README.md"],
}
SEED = 5
EXAMPLES = 200
JS_TESTEE = ROOT / "compat" / "testees" / "js" / "testee.js"


def documents() -> list[Path]:
    """Every file a figure may sit in."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "compat" / "IMPLEMENTERS.md",
            ROOT / "fuzz" / "README.md"]  # fmt: skip


# -- the markers -------------------------------------------------------------------------------


def figures_in(text: str) -> tuple[list[tuple[str, int, int]], list[str]]:
    """The figures of ``text`` as (name, start, end) of the text between their markers, and one
    line per malformed marker (not closed, nested, a stray close, an unknown name)."""
    found: list[tuple[str, int, int]] = []
    problems: list[str] = []
    opened: tuple[str, int, int] | None = None  # name, line, end of its opening marker
    for marker in _ANY_MARKER.finditer(text):
        line = text.count("\n", 0, marker.start()) + 1
        name = marker["name"]
        if name is not None:
            if opened is not None:
                problems.append(f"line {line}: figure {name!r} opens inside {opened[0]!r} (line {opened[1]})")
            if not OPEN.fullmatch(marker[0]) or name not in PLACES:
                problems.append(f"line {line}: no figure is named {name!r} (known: {', '.join(PLACES)})")
                opened = None
                continue
            opened = (name, line, marker.end())
            continue
        if opened is None:
            problems.append(f"line {line}: {CLOSE} closes no figure")
            continue
        found.append((opened[0], opened[2], marker.start()))
        opened = None
    if opened is not None:
        problems.append(f"line {opened[1]}: figure {opened[0]!r} is not closed ({CLOSE})")
    return found, problems


def check(files: dict[str, str]) -> list[str]:
    """Every problem with the markers of ``files`` (path relative to the checkout -> text)."""
    problems: list[str] = []
    where: dict[str, set[str]] = collections.defaultdict(set)
    for path, text in files.items():
        found, bad = figures_in(text)
        problems += [f"{path}: {line}" for line in bad]
        problems += [f"{path}: line {line}: {figure!r} is typed: a figure is written by a script from a run "
                     "(a marker here), or is no measurement (ALLOWED in tools/_figure_scan.py)"
                     for line, figure in typed_figures(text)]  # fmt: skip
        for name, start, end in found:
            where[name].add(path)
            line = text.count("\n", 0, start) + 1
            if not text[start:end].strip():
                problems.append(f"{path}: line {line}: figure {name!r} is empty")
            elif not _STAMP.search(text[start:end]):
                problems.append(
                    f"{path}: line {line}: figure {name!r} does not name the machine and the date"
                )
    for name, paths in PLACES.items():
        problems += [f"{path}: no figure {name!r} (<!-- figure: {name} -->...{CLOSE})"
                     for path in paths if path not in where[name]]  # fmt: skip
    return problems


def fill(text: str, texts: dict[str, str]) -> str:
    """``text`` with each figure named in ``texts`` written anew; the others as they were."""
    found, problems = figures_in(text)
    if problems:
        raise SystemExit("\n".join(problems))
    out, at = [], 0
    for name, start, end in found:
        out.append(text[at:start])
        out.append(texts.get(name, text[start:end]))
        at = end
    return "".join(out) + text[at:]


# -- measuring ---------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _refitwire() -> list[str]:
    """The ``refitwire`` command as a user runs it (the console script beside this interpreter)."""
    script = Path(sys.executable).with_name("refitwire")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "refitwire"]


def _stamped(measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    before = _load()
    found = measure()
    return {**found, "load": [round(before, 2), round(_load(), 2)], "date": datetime.date.today().isoformat(),
            "cores": os.cpu_count() or 1, "cpu": cpu_model()}  # fmt: skip


def _run(argv: list[str], cwd: Path, timeout: float = 3600) -> tuple[float, int, str]:
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    return time.monotonic() - started, done.returncode, done.stderr[-2000:]


def _summary(report: Path) -> dict[str, Any]:
    """What a JSON-lines report says: counts, seconds, and who each expected failure is held against."""
    header: dict[str, Any] = {}
    footer: dict[str, Any] = {}
    held = collections.Counter[str]()
    outcomes = collections.Counter[str]()
    for line in report.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "header":
            header = record
        elif record["type"] == "footer":
            footer = record
        elif record["type"] == "result":
            outcomes[record["outcome"]] += 1
            if record["outcome"] == "xfailed":
                side = record.get("writer") if record.get("fault") == "writer" else record.get("reader")
                held[side or record.get("writer") or "?"] += 1
    return {
        "participants": len(header.get("participants", ())),
        "examples": header.get("examples"),
        "upstream": header.get("upstream"),
        "cases": sum(outcomes.values()),
        "outcomes": dict(outcomes),
        "seconds": footer.get("seconds"),
        "required_failed": footer.get("required_failed"),
        "recommended_failed": footer.get("recommended_failed"),
        "xpassed": footer.get("xpassed"),
        "counted": {key: footer[key] for key in COUNTED if key in footer},
        "expected_by_participant": dict(sorted(held.items())),
    }


def measure_matrix(work: Path) -> dict[str, Any]:
    report = work / "matrix.jsonl"
    argv = [
        "matrix",
        "--seed",
        str(SEED),
        "--examples",
        str(EXAMPLES),
        "--format",
        "text",
        "--output",
        str(report),
    ]
    wall, code, _err = _run([*_refitwire(), *argv], work)
    return {"argv": argv[:5], "wall": round(wall, 1), "exit": code, **_summary(report)}


def measure_page(work: Path) -> dict[str, Any]:
    report = work / "matrix.jsonl"
    if not report.is_file():  # --only page: the page needs a matrix's report
        measure_matrix(work)
    page = work / "matrix.html"
    wall, code, err = _run([*_refitwire(), "report", str(report), "--html", str(page)], work)
    if code != 0:
        raise SystemExit(f"report --html failed ({code}): {err}")
    return {"bytes": page.stat().st_size, "wall": round(wall, 2), "cases": _summary(report)["cases"]}


def measure_conformance(work: Path, testee: str, shown: str) -> dict[str, Any]:
    report = work / f"conformance-{shown.split()[0]}.jsonl"
    argv = ["conformance", "--testee", testee, "--seed", str(SEED), "--output", str(report)]
    wall, code, _err = _run([*_refitwire(), *argv], work)
    return {"shown": shown, "wall": round(wall, 1), "exit": code, **_summary(report)}


def measure_codec_start(work: Path, repeats: int = 5) -> dict[str, Any]:
    blob = work / "blob.json"
    subprocess.run(
        [sys.executable, "-c", "import sys, refitwire; from refitwire import PublishedShard, PublishedTensor\n"
         "s = PublishedShard(agent_name='a', device_id=0, addr=4096, shard_offset=(0, 0), shape=(4, 4))\n"
         "t = [PublishedTensor(name='w', dtype='torch.float32', elsize=4, full_shape=(4, 4), shards=[s])]\n"
         "open(sys.argv[1], 'wb').write(refitwire.wrap_rendezvous_blob(b'meta', 'a', 'h:1', t))", str(blob)],
        check=True, cwd=work,
    )  # fmt: skip
    verbs = {"validate": ["validate", str(blob)], "decode": ["decode", str(blob)],
             "digest": ["digest", str(blob)], "schema list": ["schema", "list"]}  # fmt: skip
    medians = {}
    for name, argv in verbs.items():
        times = []
        for _ in range(repeats):
            wall, code, err = _run([*_refitwire(), *argv], work, timeout=120)
            if code != 0:
                raise SystemExit(f"refitwire {name} failed ({code}): {err}")
            times.append(wall)
        medians[name] = round(statistics.median(times), 2)
    return {"medians": medians, "repeats": repeats}


def measure(names: list[str], work: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    runs: dict[str, Callable[[], dict[str, Any]]] = {
        "matrix": lambda: measure_matrix(work),
        "page": lambda: measure_page(work),
        "codec-start": lambda: measure_codec_start(work),
        "caches": lambda: _figure_disk.measure_caches(_refitwire(), work),
        "conformance-reference": lambda: measure_conformance(
            work,
            f"{sys.executable} -m refitwire.compat.testees.reference",
            "python -m refitwire.compat.testees.reference",
        ),
        "conformance-js": lambda: measure_conformance(
            work, f"node {JS_TESTEE}", "node compat/testees/js/testee.js"
        ),
        "env-build": lambda: _figure_disk.measure_env_build(work),
        **{name: (lambda name=name: measure_transcript(name, _refitwire(), ROOT)) for name in TRANSCRIPTS},
        "refit-demo": lambda: _figure_refit.measure_demo(_refitwire(), work),
        "refit-models": lambda: _figure_refit.measure_models(_refitwire(), work),
        "refit-shapes": lambda: _figure_refit.measure_shapes(_refitwire(), work),
        "refit-scaling": lambda: _figure_refit.measure_scaling(_refitwire(), work),
        "fleet": lambda: _figure_refit.measure_fleet(work),
        "bench": lambda: _figure_refit.measure_bench(_refitwire(), work),
        "fuzz": lambda: _figure_refit.measure_fuzz(ROOT, work),
    }
    for name in names:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        yield name, _stamped(runs[name])


#: What is measured for each figure (a measurement may fill several).
SOURCE = {"matrix": "matrix", "matrix-expected": "matrix", "matrix-counted": "matrix", "matrix-throughput": "matrix",
          "page": "page", "codec-start": "codec-start", "caches": "caches", "env-size": "caches",
          "size-cases": "caches", "env-build": "env-build", "conformance-js": "conformance-js",
          "conformance-reference": "conformance-reference", **{name: name for name in TRANSCRIPTS},
          "refit-demo": "refit-demo", "refit-models": "refit-models", "refit-shapes": "refit-shapes", "refit-scaling": "refit-scaling",
          "refit-discovery": "fleet", "fleet": "fleet", "bench": "bench", "fuzz": "fuzz"}  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="check the markers only; measure nothing")
    parser.add_argument(
        "--only", nargs="+", choices=sorted(PLACES), metavar="NAME", help="these figures alone"
    )
    parser.add_argument("--build-env", action="store_true", help="also time an upstream environment's build")
    parser.add_argument(
        "--keep", type=Path, metavar="FILE", help="save the raw measurements as JSON, write nothing"
    )
    parser.add_argument(
        "--from", dest="source", type=Path, metavar="FILE", help="write from saved measurements"
    )
    args = parser.parse_args(argv)
    files = {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in documents()}
    if args.check:
        problems = check(files)
        for line in problems:
            print(line, file=sys.stderr)
        if not problems:
            print(f"figures: every marker in place ({len(PLACES)} figures)")
        return 1 if problems else 0
    malformed = [f"{path}: {line}" for path, text in files.items() for line in figures_in(text)[1]]
    if malformed:  # checked before anything is measured: a run must not be wasted
        print("\n".join(malformed), file=sys.stderr)
        return 1
    if args.source:
        measured = json.loads(args.source.read_text(encoding="utf-8"))
    else:
        wanted = args.only or [name for name in PLACES if name != "env-build" or args.build_env]
        if args.build_env and "env-build" not in wanted:
            wanted.append("env-build")
        order = list(dict.fromkeys(SOURCE[name] for name in wanted))
        with tempfile.TemporaryDirectory(prefix="refitwire-figures-") as tmp:
            measured = dict(measure(order, Path(tmp)))
        if args.keep:
            args.keep.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
            print(f"kept the measurements in {args.keep}; write them with --from {args.keep}")
            return 0
    written = texts(measured)
    if args.only:
        written = {name: text for name, text in written.items() if name in args.only}
    for path, text in files.items():
        new = fill(text, written)
        if new != text:
            (ROOT / path).write_text(new, encoding="utf-8")
            print(f"wrote {path}")
    for name, text in written.items():
        print(f"{name}: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
