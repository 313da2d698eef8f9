"""The report as a page, checked in a real headless Chromium (Debian's ``chromium``, driven by
``playwright-core`` from ``tests/compat/browser/``): real reports of a passing matrix, a
conformance run of a broken testee, a gate run with a witness, a report cut before its
footer, and a full 22,000-case matrix. Also the compact text grid and the ``report`` verb.

The browser tests skip only when ``node`` or ``chromium`` is missing; ``.ci/run`` installs both.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from refitwire.compat.report import _render, _report
from refitwire.compat.upstream import envs

HERE = Path(__file__).parent
BROWSER = HERE / "browser"
FAULTY = HERE / "faulty_testee.py"
ROOT = HERE.parents[1]
CHROMIUM = os.environ.get("REFITWIRE_CHROMIUM", "/usr/bin/chromium")


def refitwire(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, "NO_COLOR": "1"})  # fmt: skip


@pytest.fixture(scope="module")
def driver() -> Path:
    """The probe script, with playwright-core installed from the lockfile (npm ci) when missing."""
    if shutil.which("node") is None or not Path(CHROMIUM).exists():
        pytest.skip(f"needs node and {CHROMIUM} (Debian's chromium); .ci/run installs both")
    if not (BROWSER / "node_modules" / "playwright-core").is_dir():
        npm = shutil.which("npm")
        assert npm, "node without npm: install Debian's npm to fetch playwright-core"
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=BROWSER, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    return BROWSER / "probe.mjs"


def probe(driver: Path, page: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(["node", str(driver), str(page), *args], capture_output=True, text=True,
                          timeout=180, env={**os.environ, "REFITWIRE_CHROMIUM": CHROMIUM})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    # nothing but the page itself: no script, style, font or image from anywhere, no error
    assert seen["requests"] == [page.resolve().as_uri()] and seen["blocked"] == [], seen["requests"]
    assert seen["console_errors"] == [] and seen["page_errors"] == [], seen
    return seen


def pairs(report: _report.Report) -> set[tuple[str, str]]:
    return {(r.writer or _render.VECTORS, r.reader or _render.VECTORS) for r in report.results}


def check_grid(seen: dict[str, Any], report: _report.Report) -> None:
    """One cell per (writer, reader) pair of the report, in a full writers x readers table."""
    grid = seen["grid"]
    shown = {(c["writer"], c["reader"]) for c in grid["cells"]}
    assert shown == pairs(report) and len(grid["cells"]) == len(shown)
    assert set(grid["cells_per_row"]) == {len(grid["readers"])}
    assert len(grid["writers"]) == len({w for w, _ in shown})


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A passing matrix (no upstream, 3 payloads): its JSON lines and its --format html page."""
    folder = tmp_path_factory.mktemp("matrix")
    done = refitwire("matrix", "--seed", "5", "--examples", "3", "--no-upstream", "--format", "html",
                     "--output", str(folder / "m.jsonl"), cwd=folder)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (folder / "m.html").write_text(done.stdout, encoding="utf-8")
    return folder / "m.jsonl", folder / "m.html"


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conformance run of a testee that rounds large addresses (Required failures)."""
    folder = tmp_path_factory.mktemp("broken")
    done = refitwire("conformance", "--testee", f"{sys.executable} {FAULTY} rounds-large-addresses",
                     "--seed", "3", "--examples", "3", "--no-size-limit", "--no-upstream",
                     "--output", str(folder / "c.jsonl"), "--format", "json", cwd=folder)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    return folder / "c.jsonl"


@pytest.mark.browser
def test_a_passing_matrix_renders_every_pair_from_the_report_alone(
    driver: Path, matrix: tuple[Path, Path]
) -> None:
    jsonl, page = matrix
    report = _report.read_report(jsonl)
    again = page.with_name("again.html")
    done = refitwire("report", str(jsonl), "--html", str(again), "--format", "none")
    assert done.returncode == 0, done.stderr
    assert again.read_text() == page.read_text()  # the page is a function of the report
    seen = probe(driver, page, "--click", "reference@1.2.0=>reference@1.0.0")
    assert (seen["verdict"], seen["title"]) == ("PASSED", "refitwire matrix: passed")
    assert seen["completeness"].startswith("Complete") and "INCOMPLETE" not in seen["footer"]
    check_grid(seen, report)
    assert {c["standing"] for c in seen["grid"]["cells"]} <= {"s-passed", "s-expected"}
    assert seen["cell"]["title"] == "reference@1.2.0 → reference@1.0.0" and seen["cell"]["cases"] == []
    assert seen["standings"] == len(report.header.participants)
    # it opens saying there is nothing to fix, on the first screen; counts say what they count
    fix = seen["first_fix"]
    assert fix["text"].startswith("Nothing to fix") and fix["bottom"] <= seen["viewport_height"]
    assert seen["cell_counts"] and all(" passed of " in c and "/" not in c for c in seen["cell_counts"])


@pytest.mark.browser
def test_a_broken_testee_page_lists_each_failing_case_with_a_rerun_that_works(
    driver: Path, broken: Path
) -> None:
    report = _report.read_report(broken)
    failed = next(r for r in report.results if r.tier == "required" and r.outcome.value == "failed")
    page = broken.with_name("c.html")
    assert refitwire("report", str(broken), "--html", str(page)).returncode == 0  # written: its purpose
    writer, reader = failed.writer or _render.VECTORS, failed.reader or _render.VECTORS
    seen = probe(driver, page, "--click", f"{writer}=>{reader}")
    assert seen["verdict"] == "FAILED" and seen["title"] == "refitwire conformance: failed"
    check_grid(seen, report)
    assert (
        next(c for c in seen["grid"]["cells"] if (c["writer"], c["reader"]) == (writer, reader))["standing"]
        == "s-required"
    )
    assert any(g.startswith("FAILED required") for g in seen["cell"]["groups"])
    case = next(c for c in seen["cell"]["cases"] if c["id"] == failed.case)
    assert case["reason"] == f"reason: {failed.message}"
    assert "input:" in case["text"] and "blob as base64" in case["text"]  # a vector read: the blob
    rerun = shlex.split(case["rerun"])
    assert rerun[:2] == ["refitwire", "conformance"] and rerun[rerun.index("--case") + 1] == failed.case
    assert rerun[rerun.index("--seed") + 1] == "3"
    again = refitwire(*rerun[1:], "--no-size-limit", "--no-upstream", cwd=broken.parent)
    assert again.returncode == 1 and f"case {failed.case}:" in again.stdout, again.stderr[-2000:]


@pytest.mark.browser
def test_a_failing_page_opens_with_the_first_thing_to_fix_and_its_rerun(driver: Path, broken: Path) -> None:
    """Above the fold: the top Required group, one case's reason and its rerun command; its cell's
    cases are open below the grid; a failing cell reads "N failing of M"."""
    report = _report.read_report(broken)
    (tier, _, symptom, side), members = _render.groups(report.results)[0]
    page = broken.with_name("fix.html")
    assert refitwire("report", str(broken), "--html", str(page)).returncode == 0
    seen = probe(driver, page, "--shot", os.environ.get("REFITWIRE_SHOT", str(broken.with_name("fix.png"))))
    fix = seen["first_fix"]
    assert fix["text"].startswith("First thing to fix") and fix["bottom"] <= seen["viewport_height"]
    assert f"{symptom} ({tier.capitalize()}, {len(members)} failing; {side} at fault)" in fix["text"]
    assert f"e.g. {members[0].case}: {members[0].message}" in fix["text"]
    (rerun,) = fix["rerun"]
    assert rerun == _render.rerun_command(report.header, members[0].case) and "--case" in rerun
    assert any(" failing of " in c for c in seen["cell_counts"])
    assert not any("/" in c.split(" ")[0] for c in seen["cell_counts"])


@pytest.mark.browser
def test_a_report_without_its_footer_renders_as_incomplete_never_passed(
    driver: Path, matrix: tuple[Path, Path]
) -> None:
    jsonl, _ = matrix
    lines = jsonl.read_text().splitlines()
    cut = jsonl.with_name("cut.jsonl")
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    page = cut.with_suffix(".html")
    done = refitwire("report", str(cut), "--html", str(page))
    assert done.returncode == 0 and "the run stopped before it finished" in done.stderr
    assert refitwire("report", str(cut)).returncode == 1  # the text's exit is the verdict's
    seen = probe(driver, page, "--click-bad")
    assert seen["verdict"] == "INCOMPLETE" and seen["title"] == "refitwire matrix: incomplete"
    assert seen["completeness"].startswith("INCOMPLETE") and "not a pass" in seen["completeness"]
    check_grid(seen, _report.read_report(cut))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.upstream
def test_a_gate_run_shows_its_witness_the_baseline_entry_and_the_runtime_grid(
    driver: Path, tmp_path: Path
) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "gate"))
    from _gate_helpers import candidate, make_repo, write

    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json",
          candidate("1.3.0", lambda s: s["$defs"]["shard"]["properties"]["addr"].update(maximum=2**48 - 1)))  # fmt: skip
    page = tmp_path / "gate.html"
    done = refitwire("gate", "--against", "HEAD", "--matrix", "always", "--examples", "2", "--seed", "3",
                     "--allow-missing-readers", "--format", "html", "--output", str(page),
                     "--also", f"json={tmp_path / 'gate.jsonl'}", cwd=repo)  # fmt: skip
    assert done.returncode == 100, done.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "gate.jsonl").read_text().splitlines()]
    findings = [r for r in records if r["type"] == "finding"]
    seen = probe(driver, page)
    assert seen["verdict"] == "BREAKING" and seen["completeness"].startswith("Complete")
    # copied exactly: a witness's address past 2^53 survives (the page's script would round it)
    blobs = [w["blob"] for f in findings for w in f["witnesses"]]
    assert [json.loads(w) for w in seen["witnesses"]] == blobs != []
    assert any(s["addr"] > 2**53 for b in blobs for t in b["tensors"] for s in t["shards"])
    entries = [f["baseline_entry"] for f in findings if f["baseline_entry"]]
    assert [json.loads(b) for b in seen["baseline"]] == entries != []
    assert {e["change"] for e in entries} == {f["change"] for f in findings if f["failing"]}
    matrix = next(r for r in records if r["type"] == "matrix")
    shown = {(c["writer"], c["reader"]) for c in seen["grid"]["cells"]}
    assert (
        shown == {(c["writer"], c["reader"]) for c in matrix["grid"]}
        and "candidate@1.3.0" in seen["grid"]["readers"]
    )
    again = tmp_path / "again.html"
    assert refitwire("report", str(tmp_path / "gate.jsonl"), "--html", str(again)).returncode == 0
    assert again.read_text() == page.read_text()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.upstream
def test_a_22000_case_report_opens_and_answers_a_click(
    driver: Path, tmp_path: Path, record_property: Any
) -> None:
    """The full matrix (README's run: seed 5, 200 payloads, the released upstream included). The
    time to a rendered grid is recorded (``ready_ms``), not asserted: the machine is shared."""
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream envs {missing} not built (python -m refitwire.compat.upstream.envs)")
    done = refitwire("matrix", "--seed", "5", "--examples", "200", "--output", str(tmp_path / "full.jsonl"),
                     "--format", "html", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    page = tmp_path / "full.html"
    page.write_text(done.stdout)
    report = _report.read_report(tmp_path / "full.jsonl")
    assert len(report.results) > 20_000
    seen = probe(driver, page, "--click", "modelexpress@0.7.0=>(vectors)")
    record_property("ready_ms", seen["ready_ms"])
    record_property("page_bytes", page.stat().st_size)
    print(
        f"\n22k-case page: {len(report.results)} cases, {page.stat().st_size} bytes, ready in {seen['ready_ms']} ms"
    )
    check_grid(seen, report)
    assert any(g.startswith("EXPECTED recommended") for g in seen["cell"]["groups"])


# -- text and the verb, no browser ------------------------------------------------------------------


def test_the_default_text_grid_fits_100_columns_and_wide_is_on_request(matrix: tuple[Path, Path]) -> None:
    jsonl, _ = matrix
    text = refitwire("report", str(jsonl))
    assert text.returncode == 0
    lead, grid = (part.splitlines() for part in text.stdout.split("\n\n")[:2])
    assert lead == ["NOTHING TO FIX: every case passed or failed as listed"]
    assert max(map(len, grid)) <= 100 and grid[0].startswith("writer \\ reader")
    assert (
        len(grid[1].split()) == 2 + len(_report.read_report(jsonl).header.participants) + 1
    )  # n, label, cells
    assert "ran: 7 participants (numbered above)" in text.stdout
    wide = refitwire("report", str(jsonl), "--format", "wide").stdout
    assert "req " in wide and max(map(len, wide.splitlines())) > 100


def test_badges_are_svg_per_participant(matrix: tuple[Path, Path], broken: Path, tmp_path: Path) -> None:
    jsonl, _ = matrix
    assert (
        refitwire("report", str(jsonl), "--badges", str(tmp_path / "ok"), "--format", "none").returncode == 0
    )
    files = sorted(p.name for p in (tmp_path / "ok").iterdir())
    assert files == sorted(f"{p['label']}.svg" for p in _report.read_report(jsonl).header.participants)
    ok = ET.fromstring((tmp_path / "ok" / "reference@1.2.0.svg").read_text())
    assert "required ✓ · recommended ✓" in "".join(ok.itertext())
    refitwire("report", str(broken), "--badges", str(tmp_path / "bad"), "--format", "none")
    (bad,) = [p for p in (tmp_path / "bad").iterdir() if p.name.startswith("testee")]
    assert "required: " in "".join(ET.fromstring(bad.read_text()).itertext())


def test_a_file_that_is_not_a_report_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = {"type": "result", "case": "read:v-1", "tier": "required", "outcome": "passed"}
    for text, says in ((json.dumps(result), "no header"), ("not json", "line 1: not a report record"),
                       ('{"type": "header", "tool": "refitwire gate"}\n{', "line 2: not JSON")):  # fmt: skip
        (tmp_path / "x.jsonl").write_text(text + "\n")
        done = refitwire("report", str(tmp_path / "x.jsonl"), "--html", str(tmp_path / "x.html"))
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
        assert not (tmp_path / "x.html").exists()
