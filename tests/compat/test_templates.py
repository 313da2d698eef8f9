"""The testee templates (compat/testees/templates/<language>), each built from a copy of its folder
with what Debian packages, then run unchanged as its README says: ``refitwire conformance --testee
CMD --no-upstream``. Judged on the JSON-lines report, not on the exit status alone: the handshake
named the template as it names itself, the protocol's promises passed, and every case its stubbed
reader and writer meet is skipped, never failed or errored.

A template whose toolchain is missing is skipped, naming the Debian package that gives it.
``.ci/run`` installs every one and sets ``REFITWIRE_TEMPLATES=all``, which makes such a skip a
failure: CI cannot pass with a template left untried.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from refitwire.compat import Outcome, read_report

TEMPLATES = Path(__file__).resolve().parents[2] / "compat" / "testees" / "templates"
GSON = Path(os.environ.get("REFITWIRE_GSON_JAR", "/usr/share/java/gson.jar"))
CARGO_REGISTRY = Path("/usr/share/cargo/registry")  # Debian's librust-*-dev sources
#: Required cases the kit fails today for any testee whose reader answers ``read`` with
#: ``skipped`` (the probes and the growth read wait for a decoded blob): the template's stub
#: does, as the protocol allows. Strict, as an expected-failure list: once the kit skips them,
#: the test fails here and the entry goes.


def _missing(*programs: str) -> str | None:
    absent = [p for p in programs if shutil.which(p.split(" ")[0]) is None]
    return f"needs {', '.join(absent)} on PATH" if absent else None


def _cpp_needs() -> str | None:
    if shutil.which("g++") is None:
        return "needs g++ (Debian's g++)"
    probe = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-"], input="#include <nlohmann/json.hpp>\n",
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    return "needs nlohmann/json.hpp (Debian's nlohmann-json3-dev)" if probe.returncode else None


def _java_needs() -> str | None:
    missing = _missing("javac (Debian's openjdk-17-jdk-headless)", "java")
    return missing or (None if GSON.is_file() else f"needs {GSON} (Debian's libgoogle-gson-java)")


def _rust_needs() -> str | None:
    crates = ("serde_json-1.", "base64-0.13")
    found = [c for c in crates if any(CARGO_REGISTRY.glob(f"{c}*/Cargo.toml"))]
    if len(found) < len(crates):
        return f"needs {CARGO_REGISTRY} with serde_json and base64 (Debian's librust-serde-json-dev, librust-base64-dev)"
    return _missing("cargo (Debian's cargo)")


@dataclass(frozen=True)
class Template:
    folder: str
    language: str  # what its handshake names
    needs: Callable[[], str | None]  # why it cannot be built here, or None
    build: tuple[str, ...]  # command lines run in the copy ({out}: the build folder)
    testee: str  # the --testee command ({src}: the copy, {out}: the build folder)


TEMPLATE_LIST = [
    Template("python", "python", lambda: None, (), f"{shlex.quote(sys.executable)} {{src}}/testee.py"),
    Template("javascript", "javascript", lambda: _missing("node (Debian's nodejs)"), (), "node {src}/testee.js"),
    Template("go", "go", lambda: _missing("go (Debian's golang-go)"), ("go build -o {out}/testee .",), "{out}/testee"),
    Template("cpp", "c++", _cpp_needs, ("g++ -std=c++17 -O2 -o {out}/testee testee.cpp",), "{out}/testee"),
    Template("java", "java", _java_needs, (f"javac -cp {GSON} -d {{out}} Testee.java",), f"java -cp {{out}}:{GSON} Testee"),
    Template("rust", "rust", _rust_needs,
             ("cargo build --release --offline --config debian-registry.toml --target-dir {out}",),
             "{out}/release/refitwire-testee"),
]  # fmt: skip


def test_every_template_folder_is_tested() -> None:
    assert sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir()) == sorted(
        t.folder for t in TEMPLATE_LIST
    )
    assert all((TEMPLATES / t.folder / "README.md").is_file() for t in TEMPLATE_LIST)


@pytest.mark.slow
@pytest.mark.parametrize("template", TEMPLATE_LIST, ids=[t.folder for t in TEMPLATE_LIST])
def test_the_template_runs_unchanged(template: Template, tmp_path: Path) -> None:
    why = template.needs()
    if why is not None:
        if os.environ.get("REFITWIRE_TEMPLATES") == "all":
            pytest.fail(f"{template.folder}: {why} (REFITWIRE_TEMPLATES=all: CI has every toolchain)")
        pytest.skip(f"{template.folder} template: {why}")
    src, out, work = tmp_path / "src", tmp_path / "out", tmp_path / "cwd"
    shutil.copytree(TEMPLATES / template.folder, src)  # a build writes nothing into the tree (Cargo.lock)
    out.mkdir()
    work.mkdir()
    env = {**os.environ, "NO_COLOR": "1", "GOPROXY": "off"}
    for line in template.build:
        argv = [w.format(out=out, src=src) for w in shlex.split(line)]
        built = subprocess.run(argv, cwd=src, capture_output=True, text=True, timeout=600, env=env)
        assert built.returncode == 0, f"{line}:\n{built.stdout[-3000:]}{built.stderr[-3000:]}"
    report_path = tmp_path / "report.jsonl"
    testee = template.testee.format(out=shlex.quote(str(out)), src=shlex.quote(str(src)))
    done = subprocess.run(
        [sys.executable, "-m", "refitwire", "conformance", "--testee", testee, "--no-upstream",
         "--seed", "47", "--output", str(report_path)],
        cwd=work, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    tail = f"\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = read_report(report_path)
    assert report.footer is not None, f"the run did not finish{tail}"
    handshakes = [f"{r.symptom}: {r.message}" for r in report.results if r.case == "handshake"]
    assert not handshakes, f"{handshakes}{tail}"
    (me,) = [p for p in report.header.participants if p["kind"] == "third-party"]
    assert (me["name"], me["language"], me["spec_version"], me["roles"]) == (
        "my-implementation",
        template.language,
        "1.2.0",
        ["reader", "writer"],
    ), me
    mine = [r for r in report.results if me["label"] in (r.reader, r.writer)]
    outcomes = {r.case: r.outcome for r in mine if r.case.startswith("protocol:")}
    assert outcomes.get("protocol:unknown-command") is Outcome.PASSED, tail
    bad = {r.case: f"{r.symptom}: {r.message}" for r in mine if r.outcome.bad}
    assert not bad, f"{bad}{tail}"  # a reader and writer that skip everything fail nothing
    assert {r.outcome for r in mine} == {Outcome.PASSED, Outcome.SKIPPED}
    skipped = {r.case.split(":")[0] for r in mine if r.outcome is Outcome.SKIPPED}
    assert {"read", "write", "refuse", "digest", "count", "merge", "size"} <= skipped, skipped
    # the probes a skipping reader cannot answer are skipped, not failed
    assert {"protocol:unknown-member", "protocol:long-request"} <= {
        r.case for r in mine if r.outcome is Outcome.SKIPPED
    }
    assert report.footer.required_failed == 0 and report.footer.recommended_failed == 0
    assert done.returncode == 0 and list(work.iterdir()) == [], tail
