"""A testee that breaks the protocol costs errored cases, never the run.

Each hostile testee (``hostile_testees.py``) goes through ``refitwire conformance`` with a
1 s request timeout. The run must finish (well inside an overall limit), exit 1, and write
a complete report whose errored results and footer keep the evidence: the testee's own
stderr lines and the runner's reason for each restart.

The runs are independent and mostly wait on timeouts, so they all go in parallel; the
slowest is ``mute``, which waits out the handshake timeout (``--startup-timeout``, 10 s for it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

HOSTILE = Path(__file__).with_name("hostile_testees.py")
MODES = [
    "endless-line", "invalid-json", "too-deep", "repeated-seq", "silence", "mute",
    "exit-after-handshake", "stderr-only", "flood",
]  # fmt: skip
# The modes that take longest (a line past the reply limit, a 10 s handshake wait, a flood) run in the slow
# tier; the fixture runs only the modes of the tests selected.
SLOW_MODES = ("endless-line", "mute", "flood")
OVERALL_S = 90  # one run; a healthy one takes well under half of it
# The reply timeout of each run. The endless line must reach the reply line limit (reply_limit) before the
# timeout ends the wait: on a loaded two-core machine, with seven other runs beside it, 1 s
# can be too short to read that much, and the run then (rightly) says "no reply within 1 s".
TIMEOUT_S = {"endless-line": 10}
# The handshake timeout of each run. It applies to every participant, the kit's own references
# too: with every mode's run side by side on two loaded cores, a reference can take more than
# 10 s to import and answer (then its handshake is errored, charged to the reference, not the
# testee). Only `mute`, which never answers, needs a short one; the others keep the default.
STARTUP_S = {"mute": 10}
# What the runner must say about each mode (in a result message or the footer's stderr).
REASONS = {
    "endless-line": "line limit",
    "invalid-json": "not JSON",
    "too-deep": "nested too deep",
    "repeated-seq": "seq",
    "silence": "no reply within",
    "mute": "no reply within",
    "exit-after-handshake": "exited",
    "stderr-only": "no reply within",
    "flood": "seq",
}


def conformance(mode: str, folder: Path) -> dict[str, Any]:
    report = folder / f"{mode}.jsonl"
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "refitwire", "conformance", "--testee", f"{sys.executable} {HOSTILE} {mode}",
             "--seed", "3", "--examples", "5", "--timeout", str(TIMEOUT_S.get(mode, 1)), "--startup-timeout", str(STARTUP_S.get(mode, 120)), "--no-upstream", "--no-size-limit", "--output", str(report)],
            capture_output=True, text=True, timeout=OVERALL_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"mode": mode, "hung": True}
    lines = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    return {"mode": mode, "hung": False, "code": done.returncode, "lines": lines, "out": done.stdout,
            "err": done.stderr[-2000:], "seconds": time.perf_counter() - t0}  # fmt: skip


def tiered(modes: list[str]) -> list[Any]:
    return [pytest.param(m, marks=pytest.mark.slow) if m in SLOW_MODES else m for m in modes]


@pytest.fixture(scope="module")
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    mine = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    selected = {item.callspec.params["mode"] for item in mine}  # every test here is parametrized by mode
    folder = tmp_path_factory.mktemp("hostile")
    with ThreadPoolExecutor(max_workers=len(selected)) as pool:
        runs = {r["mode"]: r for r in pool.map(lambda m: conformance(m, folder), sorted(selected))}
    print({m: round(r.get("seconds", -1), 1) for m, r in runs.items()})
    return runs


@pytest.mark.parametrize("mode", tiered(MODES))
def test_the_run_finishes_and_fails(runs: dict[str, dict[str, Any]], mode: str) -> None:
    run = runs[mode]
    assert not run["hung"], f"conformance against {mode} did not finish within {OVERALL_S} s"
    assert run["code"] == 1, run["out"][-2000:] + run["err"]
    lines = run["lines"]
    assert lines and lines[0]["type"] == "header" and lines[-1]["type"] == "footer", run["err"]
    assert all(line["type"] == "result" for line in lines[1:-1])


@pytest.mark.parametrize("mode", tiered(MODES))
def test_the_cases_are_errored_and_the_evidence_kept(runs: dict[str, dict[str, Any]], mode: str) -> None:
    run = runs[mode]
    if run["hung"] or not run["lines"]:
        pytest.fail(f"no report for {mode}")
    results, footer = [r for r in run["lines"] if r["type"] == "result"], run["lines"][-1]
    errored = [r for r in results if r["outcome"] == "errored"]
    assert errored, [r["outcome"] for r in results]
    # Only a stale reply's victim errs: the first request after each restart is answered right.
    allowed = {"errored", "skipped", "passed"} if mode == "repeated-seq" else {"errored", "skipped"}
    assert {r["outcome"] for r in results} <= allowed
    assert footer["required_failed"] >= 1
    assert all("testee:" in (r.get("writer", "") + r.get("reader", "")) for r in errored)
    kept = "\n".join(r.get("message", "") for r in errored) + "\n" + json.dumps(footer.get("stderr", {}))
    assert f"hostile: {mode}" in kept, "the testee's stderr is lost"
    assert REASONS[mode] in kept, f"the runner does not say why ({REASONS[mode]!r})"
    assert "[refitwire] restart" in kept or mode == "mute", "the restarts are not recorded"


# The headline of the unknown-command probe says what came back, not only that nothing useful did.
PROBE_HEADLINES = {
    "invalid-json": "answered an unknown command with a reply line that is not JSON",
    "silence": "no answer to an unknown command: no reply in time",
}


@pytest.mark.parametrize("mode", tiered(list(PROBE_HEADLINES)))
def test_the_unknown_command_headline_says_what_came_back(runs: dict[str, dict[str, Any]], mode: str) -> None:
    results = [
        r for r in runs[mode]["lines"] if r["type"] == "result" and r["case"] == "protocol:unknown-command"
    ]
    assert results and all(PROBE_HEADLINES[mode] in r.get("symptom", "") for r in results), results
