"""`refitwire gate --testee CMD` in an implementation's repository judges only what a pull request
adds to its testee, against the base (the merge base with main), as an implementer runs it.

The repository holds a testee made from the Python template (compat/testees/templates/python),
its reader and writer the reference's, committed on ``main``, with a bug of long standing (its
reader reads an absent step as 0: Required failures at the base), which a pull request that does
not touch it must not be charged with. Each pull request is a clone with one patch committed on a
branch, so the three share one base commit (its report is made once, then read from the kit's cache).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

pytestmark = [pytest.mark.upstream, pytest.mark.slow, pytest.mark.xdist_group("gate-testee-base")]

SEED, EXAMPLES = "5", "10"
TESTEE = f"{sys.executable} testee.py"

#: The implementation's code between the template's YOUR CODE lines: the reference answers.
YOUR_CODE = """from refitwire import wire
from refitwire.compat.testees.reference import answer as _reference

_REGISTRY = wire.default_registry()


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    return _reference({"seq": 0, **request}, SPEC_VERSION, _REGISTRY)


def read_blob(blob: bytes) -> dict[str, Any]:
    reply = _ask({"cmd": "read", "blob_b64": base64.b64encode(blob).decode("ascii")})
    if reply.get("rejected"):
        raise Rejected(reply["rule"], reply["pointer"], reply["message"])
    payload = reply["payload"]
    if payload.get("publisher_step") is None:  # this implementation's old bug: no step reads as 0
        payload["publisher_step"] = 0
    return payload


def write_blob(payload: dict[str, Any]) -> bytes:
    reply = _ask({"cmd": "write", "payload": payload})
    if reply.get("errored"):
        raise Rejected(reply.get("rule") or "DECODED_FORM", "", reply["message"])
    return base64.b64decode(reply["blob_b64"])


"""

#: A pull request that writes the step as a string: every released reader refuses its blobs (TYPE).
STRING_STEP = (
    '    return base64.b64decode(reply["blob_b64"])\n',
    '    doc = json.loads(base64.b64decode(reply["blob_b64"]))\n'
    '    if doc.get("publisher_step") is not None:\n'
    '        doc["publisher_step"] = str(doc["publisher_step"])\n'
    '    return json.dumps(doc, separators=(",", ":")).encode()\n',
)
#: A pull request that changes nothing on the wire: a helper renamed.
REFACTOR = ("_ask(", "_ask_the_reference(")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)  # fmt: skip


def _testee_source() -> str:
    template = resources.files("refitwire.compat.testees") / "templates" / "python" / "testee.py"
    text = template.read_text(encoding="utf-8")
    start = text.index("def read_blob(")
    end = text.index("# ==== end of YOUR CODE")
    return text[:start] + YOUR_CODE + text[end:]


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("implementation") / "origin"
    repo.mkdir()
    (repo / "testee.py").write_text(_testee_source(), encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a correct testee")
    return repo


def _pull_request(origin: Path, where: Path, patch: tuple[str, str] | None) -> Path:
    repo = where / "pull-request"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    _git(repo, "checkout", "-q", "-b", "pull-request")
    if patch is not None:
        old, new = patch
        target = repo / "testee.py"
        text = target.read_text(encoding="utf-8")
        assert old in text, "the testee no longer has the patched text"
        target.write_text(text.replace(old, new), encoding="utf-8")
        _git(repo, "commit", "-q", "-am", "the pull request")
    return repo


def _refitwire(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *argv], cwd=repo, capture_output=True,
                          text=True, timeout=1200, stdin=subprocess.DEVNULL)  # fmt: skip


def _gate(repo: Path) -> subprocess.CompletedProcess[str]:
    return _refitwire(repo, "gate", "--testee", TESTEE, "--seed", SEED, "--examples", EXAMPLES)


@pytest.mark.parametrize("patch", [None, REFACTOR], ids=["untouched", "refactor"])
def test_an_untouched_testee_and_a_refactor_are_compatible(
    origin: Path, tmp_path: Path, patch: tuple[str, str] | None
) -> None:
    repo = _pull_request(origin, tmp_path, patch)
    done = _gate(repo)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "judged against the base merge-base(HEAD, origin/main)" in done.stdout, said
    assert "the change adds no Required failure" in done.stdout, said


def test_a_step_written_as_a_string_is_breaking_named_and_rerunnable(origin: Path, tmp_path: Path) -> None:
    repo = _pull_request(origin, tmp_path, STRING_STEP)
    done = _gate(repo)
    said = done.stdout + done.stderr
    assert done.returncode == 100, said
    assert "BREAKING MATRIX_DISAGREES" in done.stdout and f"--testee {TESTEE}" in done.stdout, said
    [line] = [x for x in done.stdout.splitlines() if x.strip().startswith("NEW required") and "(TYPE)" in x]
    assert "(the change)" in line, line
    # the case to rerun, with the command that reruns it alone: it fails the same way by itself
    rerun = line[line.rindex(": refitwire matrix ") + 2 :]
    assert rerun.startswith(f"refitwire matrix --only-under-test --seed {SEED} --examples {EXAMPLES}"), line
    again = _refitwire(repo, *shlex.split(rerun)[1:])
    assert again.returncode != 0 and "TYPE" in again.stdout, again.stdout[-3000:] + again.stderr[-3000:]
