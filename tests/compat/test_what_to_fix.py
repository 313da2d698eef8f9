"""Reports that lead with what to fix (issue 47): a ``--case`` run starts only what it needs, a
crashed testee's stderr keeps its first and last lines, progress has a total and a time left,
the report's path is said, ``report --html`` writes the page and exits 0, the text report opens
with the first thing to fix and its rerun command, and counts say what they count. The page's
side is in ``test_html_report.py`` (a real Chromium)."""

from __future__ import annotations

import collections
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from refitwire.compat import _session, _testee
from refitwire.compat._results import Outcome, Result
from refitwire.compat.report import _render, _report
from refitwire.compat.runner import _run
from refitwire.compat.runner._participants import Participant
from refitwire.wire import default_registry

HERE = Path(__file__).parent
FAULTY = HERE / "faulty_testee.py"
ROUNDS = f"{sys.executable} {FAULTY} rounds-large-addresses"
VECTOR = "read:v-9179267ad442"  # a vector the rounding testee misreads


def refitwire(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env={**os.environ, "NO_COLOR": "1"})  # fmt: skip


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A conformance run of a testee that rounds large addresses: its report and what it printed."""
    folder = tmp_path_factory.mktemp("failing")
    done = refitwire("conformance", "--testee", ROUNDS, "--seed", "3", "--examples", "3", "--no-size-limit",
                     "--no-upstream", "--output", str(folder / "c.jsonl"), cwd=folder)  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    return folder / "c.jsonl", done


# -- 1. a run starts only what it needs -----------------------------------------------------------


def referee(version: str) -> Participant:
    """The reference at ``version``, as the CLI lines it up."""
    command = (sys.executable, "-m", "refitwire.compat.testees.reference", "--spec-version", version)
    return Participant(f"reference@{version}", command, "reference")


def test_a_case_asked_of_the_testee_alone_starts_no_generation_and_no_released_package() -> None:
    testee = Participant("testee: t", ("t",), "third-party")
    frozen = Participant("generation@1.2.0", ("python",), "generation")
    released = Participant("modelexpress@0.7.0", ("python",), "upstream")
    everyone = [testee, referee("1.0.0"), referee("1.2.0"), frozen, released]

    def started(only: str | None, focus: list[str] | None = ["testee: t"]) -> set[str]:  # noqa: B006
        plan = _run.Plan(everyone, focus=focus, only=only, registry=default_registry())
        return {p.kind for p in _run.needed(plan)}

    for case in (VECTOR, f"{VECTOR}#rule", "write:w-1@1.2.0", "refuse:ADDR_RANGE", "digest:d-1",
                 "protocol:unknown-command", "size:at-limit", "count:v-1", "merge:m-1"):  # fmt: skip
        assert started(case) == {"third-party", "reference"}, case
    every = {"third-party", "reference", "generation", "upstream"}
    assert started("gen-0123abcd") == started(None) == every  # a generated case meets every peer
    assert started(VECTOR, focus=None) == every  # a matrix runs each vector on every participant


def test_a_rerun_of_a_vector_says_the_released_versions_were_not_needed(tmp_path: Path) -> None:
    done = refitwire("conformance", "--testee", ROUNDS, "--seed", "3", "--examples", "3", "--case", VECTOR,
                     "--no-upstream", "--output", str(tmp_path / "one.jsonl"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and f"case {VECTOR}:" in done.stdout, done.stderr[-2000:]
    head = _report.read_report(tmp_path / "one.jsonl").header
    assert {p["kind"] for p in head.participants} == {"third-party", "reference"}
    assert head.upstream == f"not needed (--case {VECTOR} is asked of the testee alone)"
    # the testee was asked that case (seq 1), then again to show its answer: nothing else first
    assert '"seq": 2,' in next(line for line in done.stdout.splitlines() if " reads it: " in line)


# -- 2. a crashed testee's stderr: first and last lines ---------------------------------------------

NODE_CRASH = """node:internal/modules/cjs/loader:1210
  throw err;
  ^

Error: Cannot find module '/tmp/missing.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)
    at Module._load (node:internal/modules/cjs/loader:1038:27)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.20.2"""


def test_an_excerpt_keeps_the_first_and_last_lines_and_counts_the_rest() -> None:
    kept = _testee.Stderr()
    for line in NODE_CRASH.splitlines():
        kept.append(line)
    lines = _testee.excerpt(kept)
    assert "Error: Cannot find module '/tmp/missing.js'" in lines[:5] and lines[-1] == "Node.js v20.20.2"
    assert lines[5] == "... 2 more lines ..." and len(lines) == 11
    flood = _testee.Stderr(keep=50)
    for n in range(1000):  # the first lines stay when the deque has long forgotten them
        flood.append(f"line {n}")
    assert _testee.excerpt(flood, head=2, tail=2) == [
        "line 0",
        "line 1",
        "... 996 more lines ...",
        "line 998",
        "line 999",
    ]
    assert _testee.excerpt(["a", "", "b"]) == ["a", "b"] and _testee.excerpt_text([]) == "(empty)"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_a_mistyped_testee_command_is_reported_with_its_key_line(tmp_path: Path) -> None:
    done = refitwire("conformance", "--testee", "node missing.js", "--no-upstream", "--no-size-limit",
                     "--examples", "1", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1
    assert "Cannot find module" in done.stdout and "Cannot find module" in done.stderr, done.stdout[-3000:]


# -- 3. progress: done of total, and the time left --------------------------------------------------


def test_progress_counts_every_check_of_a_run_and_estimates_the_time_left() -> None:
    plan = _run.Plan(
        [referee(v) for v in ("1.0.0", "1.1.0", "1.2.0")],
        examples=2,
        limits=False,
        focus=["reference@1.2.0"],
        registry=default_registry(),
    )
    started, failed = _run.start_all(plan)
    progress = _run.Progress()
    try:
        results = list(_run.run(plan, started, progress))
    finally:
        _run.stop_all(started)
    assert not failed and results and progress.total == progress.done > 100  # the total was right
    line = _session.progress_line(_run.Progress(total=4000, done=1000), 30.0)
    assert line == "1000 of 4000 checks (25%), about 90 s left"
    assert _session.progress_line(_run.Progress(total=4000, done=1000), 60.0).endswith("about 3 min left")


# -- 4. where the report went ---------------------------------------------------------------------


def test_the_run_says_where_its_report_was_written(
    failing: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    path, done = failing
    assert f"refitwire: report written to {path.resolve()}" in done.stderr
    assert f"refitwire report {path} --html {path.with_suffix('.html')}" in done.stderr


# -- 5. report --html writes the page, says where, exits 0 ----------------------------------------


def test_report_html_writes_the_page_says_where_and_exits_0(
    failing: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    path, _ = failing
    page = tmp_path / "out" / "page.html"
    done = refitwire("report", str(path), "--html", str(page))
    assert done.returncode == 0 and page.is_file() and done.stdout == "", done.stdout[-2000:]
    assert f"refitwire report: wrote {page.resolve()}" in done.stderr
    assert "the run failed; FIRST TO FIX: value differs at /tensors/*/shards/*/addr" in done.stderr
    text = refitwire("report", str(path))  # without --html: the text, and the verdict's exit
    assert text.returncode == 1 and text.stdout.startswith("FIRST TO FIX: ")


# -- 6. the text opens with the first thing to fix --------------------------------------------------


def test_the_text_report_opens_with_the_first_thing_to_fix_and_its_rerun(
    failing: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    path, done = failing
    report = _report.read_report(path)
    first, example, rerun = done.stdout.splitlines()[:3]
    assert first.startswith("FIRST TO FIX: value differs at /tensors/*/shards/*/addr (Required, ")
    (tier, _, symptom, side), members = _render.groups(report.results)[0]
    assert (tier, symptom) == ("required", "value differs at /tensors/*/shards/*/addr")
    assert first.endswith(f"({tier.capitalize()}, {len(members)} failing; {side} at fault)")
    assert example == f"    e.g. {members[0].case}: {members[0].message}"
    command = shlex.split(rerun.removeprefix("    rerun it alone: "))
    assert command[:3] == ["refitwire", "conformance", "--testee"] and shlex.split(command[3]) == shlex.split(
        ROUNDS
    )
    assert command[command.index("--case") + 1] == members[0].case


def test_a_run_with_nothing_to_fix_says_so_first_and_names_what_to_improve() -> None:
    head = _report.Header(1, 1, (), (), "ran", {"focus": ["t"]})
    foot = _report.Footer(1.0, {}, 0, 1, 0, {})
    passed = Result("read:v-1", "required", Outcome.PASSED, None, "t", "")
    tolerated = Result("read:v-2#rule", "recommended", Outcome.FAILED, None, "t", "wrong rule",
                               symptom="wrong rule", fault="reader")  # fmt: skip
    clean = _render.first_lines(_report.Report(head, (passed,), foot))
    assert clean == ["NOTHING TO FIX: every case passed or failed as listed"]
    lines = _render.first_lines(_report.Report(head, (passed, tolerated), foot))
    assert lines[0].startswith("NOTHING TO FIX: no Required case failed")
    assert lines[1] == "FIRST TO IMPROVE: wrong rule (Recommended, 1 failing; t at fault)"
    enforced = _render.first_lines(_report.Report(head, (passed, tolerated), foot), enforce_recommended=True)
    assert enforced[0].startswith("FIRST TO FIX: wrong rule")
    assert _render.first_lines(_report.Report(head, (passed,), None))[0].startswith("INCOMPLETE")


# -- 7. counts that say what they count -------------------------------------------------------------


def test_a_cell_says_passed_of_never_a_bare_fraction() -> None:
    cell = collections.Counter({"required.passed": 108, "required.failed": 98, "recommended.passed": 1,
                                "recommended.xfailed": 55})  # fmt: skip
    assert _render.cell_text(cell) == "FAIL req 108 passed of 206; rec 1 passed of 56, 55 expected"
    assert "/" not in _render.cell_text(cell)


def test_the_page_data_carries_the_first_fix_and_its_cell(
    failing: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    path, _ = failing
    page = path.with_name("data.html")
    assert refitwire("report", str(path), "--html", str(page)).returncode == 0
    inline = page.read_text().split("<script id=report-data type=application/json>")[1].split("</script>")[0]
    data = json.loads(inline)
    fix = data["first_fix"]
    cell = data["cells"][fix["cell_index"]]
    assert [cell["w"], cell["r"]] == fix["cell"] and any(
        g["symptom"] == fix["symptom"] for g in cell["groups"]
    )
    assert (
        fix["rerun"].startswith("refitwire conformance --testee ") and f"--case {fix['case']}" in fix["rerun"]
    )
