"""Making and releasing a version (``refitwire schema new|release``) and candidate implementations."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from _gate_helpers import commit, make_repo, refitwire
from refitwire import wire
from refitwire.gate import (
    EXIT_BREAKING,
    EXIT_COMPATIBLE,
    EXIT_ERROR,
    GateError,
    Rule,
    new_version,
    release,
    run_gate,
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def test_new_then_release_passes_the_gate_at_each_step(repo: Path) -> None:
    new_version(repo / "schema", "1.3.0")
    for kind in ("rendezvous", "shard-table"):
        schema = json.loads((repo / f"schema/{kind}/1.3.0.json").read_text())
        assert (schema["x-spec-version"], schema["$id"]) == ("1.3.0", f"urn:refitwire:schema:{kind}:1.3.0")
    assert "| 1.3.0 | (fill in: what 1.3.0 adds) |" in (repo / "schema/SPEC.md").read_text()
    assert (
        run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never").exit_code == EXIT_COMPATIBLE
    )
    commit(repo, "1.3.0")

    release(repo / "schema", "1.3.0")
    index = json.loads((repo / "schema/index.json").read_text())
    [entry] = [e for e in index["documents"]["rendezvous"] if e["version"] == "1.3.0"]
    data = (repo / "schema/rendezvous/1.3.0.json").read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and index["latest"] == "1.3.0"
    assert (
        run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never").exit_code == EXIT_COMPATIBLE
    )

    entry["sha256"] = "f" * 64
    (repo / "schema/index.json").write_text(json.dumps(index, indent=2) + "\n")
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")
    assert report.exit_code == EXIT_BREAKING
    assert [f.change.rule for f in report.findings if f.failing] == [Rule.RELEASE_ENTRY_MISMATCH]


def test_a_new_major_gets_a_new_wire_id(repo: Path) -> None:
    new_version(repo / "schema", "2.0.0")
    schema = json.loads((repo / "schema/rendezvous/2.0.0.json").read_text())
    assert schema["x-wire-id"] == schema["properties"]["schema"]["const"] == "mx.reshard.shard_table.v2"
    assert (
        run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never").exit_code == EXIT_COMPATIBLE
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [(("new", "1.2.0"), "not newer"), (("new", "1.3"), "not a version"), (("release", "1.4.0"), "no such file"),
     (("release", "1.2.0"), "already released")],
)  # fmt: skip
def test_bad_requests_are_refused_with_the_reason(repo: Path, args: tuple[str, ...], says: str) -> None:
    action, version = args
    with pytest.raises(GateError, match=says):
        (new_version if action == "new" else release)(repo / "schema", version)


def test_a_bad_request_is_one_line_and_exit_1_on_the_command_line(repo: Path) -> None:
    for args, says in ((("new", "1.2.0"), "not newer"), (("release", "1.2.0"), "already released")):
        done = refitwire(repo, "schema", *args)
        assert done.returncode == EXIT_ERROR and says in done.stderr and len(done.stderr.splitlines()) == 1
    done = refitwire(repo, "schema", "new", "1.3.0")  # and the paths written, then what to do next
    assert done.returncode == 0 and "wrote " in done.stdout and "next: edit the 1.3.0 files" in done.stdout


def test_gate_passes_testees_to_the_matrix(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "matrix.py"
    script.write_text(
        "import json, sys\n"
        "assert sys.argv[sys.argv.index('--testee') + 1] == 'python my_testee.py', sys.argv\n"
        "header = {'type': 'header', 'seed': 1, 'examples': 1, 'participants': [], 'unavailable': []}\n"
        "footer = {'type': 'footer', 'seconds': 0.1, 'counts': {}, 'required_failed': 0, "
        "'recommended_failed': 0, 'xpassed': 0}\n"
        "open(sys.argv[sys.argv.index('--output') + 1], 'w').write(json.dumps(header) + '\\n' + json.dumps(footer))\n"
    )
    report = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix_command=[sys.executable, str(script)], testees=["python my_testee.py"],
                      allow_missing=True)  # fmt: skip
    assert report.matrix.status == "passed", report.matrix


def test_a_testee_declaring_an_unknown_version_is_told_so(tmp_path: Path) -> None:
    testee = tmp_path / "odd.py"
    testee.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line).get('cmd') == 'start':\n"
        "        print(json.dumps({'implementation': {'name': 'odd', 'version': '0', 'language': 'python'},"
        " 'spec_version': '1.9.0', 'roles': ['reader', 'writer']}), flush=True)\n"
        "    else:\n"
        "        break\n"
    )
    # Only the testee's cells: the handshake is the subject, and the reference's own cells (a minute
    # on a loaded machine) would judge nothing here.
    done = refitwire(
        tmp_path, "matrix", "--testee", f"{sys.executable} {testee}", "--no-upstream", "--examples", "2",
        "--only-under-test",
    )  # fmt: skip
    assert "declares spec version '1.9.0', which this kit does not know" in done.stdout
    assert "nesting too deep" not in done.stdout
