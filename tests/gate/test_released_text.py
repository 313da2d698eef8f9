"""Released text is locked, and every witness is checked before it is shown: pull requests in
throwaway clones, judged by the documented commands only (``refitwire schema new``, ``refitwire
gate``, ``python tools/build_spec_members.py --check``).

Each clone holds the released schemas, the index and SPEC.md in one commit on ``main``; a
contributor's edit is judged by ``refitwire gate --against HEAD --matrix never`` in its own
process, as CI runs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import ROOT, make_repo, refitwire, write
from refitwire.gate import Rule

#: An edit of each kind of released prose: (what, old text, new text, rule, pointer, the words shown).
PROSE = [
    ("the digest's byte order (section 4)", "as 8\n   little-endian bytes of its value",
     "as 8\n   big-endian bytes of its value", Rule.SPEC_TEXT_CHANGED, "/text/4", ("little-endian", "big-endian")),
    ("the order of section 2.7", "the same pointer: `REQUIRED`, then `TYPE`, then",
     "the same pointer: `TYPE`, then `REQUIRED`, then", Rule.SPEC_TEXT_CHANGED, "/text/2.7", ("`REQUIRED`,", "`TYPE`,")),
    ("the decoded form (section 6)", "with `null` for an absent optional member",
     "with `0` for an absent optional member", Rule.SPEC_TEXT_CHANGED, "/text/6", ("`null`", "`0`")),
    ("a tier stated in prose (section 7)", "A Required failure fails the run.",
     "A Required failure is reported and does not fail the run.", Rule.SPEC_TEXT_CHANGED, "/text/7",
     ("fails", "is reported and does not fail")),
    ("the members table (a member made required)", "| `publisher_step` | integer | optional | 1.2.0 |",
     "| `publisher_step` | integer | required | 1.2.0 |", Rule.SPEC_TEXT_CHANGED, "/text/1", ("optional", "required")),
    ("lowercase made uppercase (a rule's wording)", "MUST be 32 lowercase hexadecimal",
     "MUST be 32 uppercase hexadecimal", Rule.SPEC_RULE_REWORDED, "/rules/DIGEST_FORMAT", ("lowercase", "uppercase")),
]  # fmt: skip


def _edit(repo: Path, old: str, new: str) -> None:
    path = repo / "schema" / "SPEC.md"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _gate(repo: Path, *more: str) -> tuple[int, list[dict[str, Any]], str]:
    """``refitwire gate --against HEAD --matrix never`` in its own process: exit code, the JSON
    lines, and the text report of the same run (``--also text=FILE``)."""
    text = repo / "gate.txt"
    done = refitwire(repo, "gate", "--against", "HEAD", "--matrix", "never", "--format", "json",
                     "--also", f"text={text}", *more)  # fmt: skip
    assert done.returncode in (0, 100), done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], text.read_text()


def _findings(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "finding"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.mark.parametrize(
    ("old", "new", "rule", "pointer", "words"), [p[1:] for p in PROSE], ids=[p[0] for p in PROSE]
)
def test_an_edit_of_released_prose_is_a_finding_with_its_diff(
    repo: Path, old: str, new: str, rule: str, pointer: str, words: tuple[str, str]
) -> None:
    _edit(repo, old, new)
    code, records, text = _gate(repo)
    assert code == 100
    failing = [f for f in _findings(records) if f["failing"]]
    locks = [
        f
        for f in failing
        if f["rule"] == Rule.RELEASE_ENTRY_MISMATCH and f["pointer"].startswith("/spec_text/")
    ]
    assert locks, "the text's lock not written beside it is named"
    failing = [f for f in failing if f not in locks]
    assert {(f["rule"], f["pointer"]) for f in failing} == {(rule, pointer)}
    # one finding for each released version the text belongs to: DIGEST_FORMAT's row is 1.1.0's on,
    # publisher_step's row 1.2.0's (its since)
    since = {"/rules/DIGEST_FORMAT": "1.1.0", "/text/1": "1.2.0"}.get(pointer, "1.0.0")
    versions = ["1.0.0", "1.1.0", "1.2.0"]
    assert sorted(f["against"] for f in failing) == versions[versions.index(since) :]
    finding = failing[-1]
    section = pointer.rsplit("/", 1)[-1] if rule == Rule.SPEC_TEXT_CHANGED else "2.2 Structure"
    assert f"section {section}" in finding["detail"]
    removed, added = words
    diff = finding["detail"].splitlines()
    assert any(line.lstrip().startswith("- ") and removed in line for line in diff), finding["detail"]
    assert any(line.lstrip().startswith("+ ") and added in line for line in diff), finding["detail"]
    assert f"BREAKING {rule}" in text and removed in text and added in text
    if pointer == "/text/1":  # where the text says what a schema says, a blob shows it
        [witness] = finding["witnesses"]
        assert "publisher_step" not in witness["blob"] and witness["rejection"].startswith("REQUIRED at")
        assert witness["accepted_by"].startswith("1.2.0 (schema/rendezvous/1.2.0.json)")


def test_a_member_made_required_in_the_table_alone_is_a_stale_table(tmp_path: Path) -> None:
    # the table is generated from the schemas: in a clone of the project, an edit of it alone
    # fails the table's check (which regenerate --check runs), and the table as generated passes
    clone = tmp_path / "clone"
    # the working tree's files git does not ignore: a contributor's new schema files (untracked
    # until committed) go with the SPEC.md table generated from them
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout  # fmt: skip
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "tools/build_spec_members.py", "--check"], cwd=clone,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    assert check().returncode == 0
    _edit(clone, *PROSE[4][1:3])
    done = check()
    assert done.returncode == 1 and "members table (section 1) is stale" in done.stdout, (
        done.stdout + done.stderr
    )


def test_an_editorial_edit_passes_once_acknowledged_and_is_named(repo: Path) -> None:
    _edit(repo, "publishes before a weight refit", "publishes before a weigth refit")
    code, records, _ = _gate(repo)
    assert code == 100
    failing = [f for f in _findings(records) if f["failing"]]
    assert {f["rule"] for f in failing} == {Rule.SPEC_TEXT_CHANGED, Rule.RELEASE_ENTRY_MISMATCH}
    entries = [f["baseline_entry"] for f in failing if f["rule"] == Rule.SPEC_TEXT_CHANGED]
    assert len({e["change"] for e in entries}) == 1
    # one entry (without "against") acknowledges the same edit in every released version
    entry = {**entries[0], "reason": "typo, no meaning changed", "link": "issue-45", "expires": "2099-12-31"}
    (repo / "schema" / "gate-baseline.json").write_text(json.dumps({"accepted": [entry]}, indent=2))
    # acknowledged, the text still needs its lock: the gate names the one to write per version
    code, records, text = _gate(repo)
    assert code == 100, text
    stale = [f for f in _findings(records) if f["failing"]]
    assert {f["rule"] for f in stale} == {Rule.RELEASE_ENTRY_MISMATCH} and len(stale) == 3, text
    index_path = repo / "schema" / "index.json"
    index = json.loads(index_path.read_text())
    for lock, finding in zip(index["spec_text"], stale, strict=True):
        assert f"spec_text {lock['version']}: " in finding["detail"]
        lock["sha256"] = finding["detail"].rsplit(": ", 1)[1].rstrip(")")
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    code, records, text = _gate(repo)
    assert code == 0, text
    accepted = [f for f in _findings(records) if f["accepted"]]
    assert [f["against"] for f in accepted] == ["1.0.0", "1.1.0", "1.2.0"]
    assert "ACCEPTED SPEC_TEXT_CHANGED" in text and "typo, no meaning changed (issue-45)" in text
    assert "weigth" in text  # the change itself is shown beside the acknowledgement
    # merged, with its acknowledgement gone: the next change's ref agrees with its own locks
    (repo / "schema" / "gate-baseline.json").unlink()
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "typo"], cwd=repo,
                   check=True)  # fmt: skip
    code, records, text = _gate(repo)
    assert code == 0 and not [f for f in _findings(records) if f["failing"]], text


def test_an_untouched_clone_passes(repo: Path) -> None:
    code, records, text = _gate(repo)
    assert code == 0, text
    assert not [f for f in _findings(records) if f["failing"]]


def _candidate(repo: Path, edit: Any) -> None:
    """``refitwire schema new 1.3.0``, then ``edit`` of its rendezvous schema."""
    done = refitwire(repo, "schema", "new", "1.3.0")
    assert done.returncode == 0, done.stderr
    path = repo / "schema" / "rendezvous" / "1.3.0.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    edit(schema)
    write(path, schema)


def _tensor(schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema["$defs"]["tensor"]["properties"]
    return props


def test_a_type_widened_to_a_union_has_a_witness_of_the_new_type(repo: Path) -> None:
    _candidate(repo, lambda s: _tensor(s)["elsize"].__setitem__("type", ["integer", "string"]))
    code, records, _ = _gate(repo)
    assert code == 100
    widened = [f for f in _findings(records) if f["rule"] == Rule.TYPE_WIDENED]
    assert widened and all(f["pointer"] == "/$defs/tensor/properties/elsize/type" for f in widened)
    for finding in widened:
        [witness] = finding["witnesses"]
        tensors = witness["blob"]["tensors"]
        # a string elsize only the new version allows, not "elsize": 1 on a bfloat16 tensor, which
        # ELSIZE_DTYPE rejects at every version (no writer writes it)
        assert any(isinstance(t["elsize"], str) for t in tensors), witness
        assert witness["rejection"].startswith("TYPE at /tensors/"), witness


@pytest.mark.slow  # a witness search over hypothesis draws / three gate runs
def test_a_witness_no_writer_could_write_leaves_the_finding_unproven(repo: Path) -> None:
    # name retyped (so the library cannot read the geometry rules at 1.3.0) and shard_offset's bound
    # raised past full_shape's: every blob it lets through breaks BOX_IN_BOUNDS, which 1.3.0 keeps
    def edit(schema: dict[str, Any]) -> None:
        _tensor(schema)["name"]["type"] = ["string", "integer"]
        schema["$defs"]["shard"]["properties"]["shard_offset"]["items"]["maximum"] = 2**64 - 1

    _candidate(repo, edit)
    code, records, text = _gate(repo)
    loosened = [f for f in _findings(records) if f["rule"] == Rule.NUMERIC_BOUND_LOOSENED]
    assert loosened and all(f["unproven"] and not f["witnesses"] for f in loosened), text
    assert code == 100 and "UNPROVEN NUMERIC_BOUND_LOOSENED" in text


def test_every_finders_witness_is_checked_again_before_it_is_shown() -> None:
    # a finder that offers what the gate once showed for elsize widened to integer-or-string:
    # "elsize": 1 on a bfloat16 tensor, which every version's ELSIZE_DTYPE rejects
    from _gate_helpers import candidate, real
    from refitwire import wire
    from refitwire.gate import Document, Witness, diff, evidence

    old = Document("1.2.0", real("rendezvous", "1.2.0"))
    new = Document(
        "1.3.0", candidate("1.3.0", lambda s: _tensor(s)["elsize"].__setitem__("type", ["integer", "string"]))
    )
    [change] = [c for c in diff(old, new) if c.rule == Rule.TYPE_WIDENED]
    blob = json.loads(
        json.loads((ROOT / "schema" / "vectors" / "writer-output.json").read_text())["vectors"][0]["blob"]
    )
    blob["tensors"] = [{**blob["tensors"][0], "dtype": "torch.bfloat16", "elsize": 1}]
    offered = Witness("FORWARD", "1.3.0", "1.2.0", blob, "ELSIZE_DTYPE", "1.3.0", "1.2.0")
    found, missing = evidence(change, old, new, wire.default_registry(), finder=lambda *_: offered)
    assert (found, missing) == ((), ("FORWARD",))
    # and the finder's own search, held to the same check, shows a string elsize
    found, missing = evidence(change, old, new, wire.default_registry())
    assert missing == () and isinstance(found[0].blob["tensors"][0]["elsize"], str)


@pytest.mark.slow  # a witness search over hypothesis draws / three gate runs
def test_text_a_new_version_adds_of_its_own_is_judged_against_the_newest_release(repo: Path) -> None:
    # stamped for 1.3.0 (a candidate): no released version's text changes
    note = "(1.3.0) A digest is computed once per refit and kept with the table.\n\n"
    _candidate(repo, lambda s: None)
    _edit(repo, "The digest depends on the bytes alone", note + "The digest depends on the bytes alone")
    code, records, text = _gate(repo)
    assert code == 0, text
    added = [(f["rule"], f["against"]) for f in _findings(records) if f["pointer"].startswith("/text/4/")]
    assert added == [(Rule.SPEC_TEXT_ADDED, "1.2.0")]
    # a normative one (an RFC 2119 keyword) is a new rule for 1.3.0: unproven until shown otherwise
    _edit(repo, "is computed once per refit", "MUST be computed once per refit")
    code, records, text = _gate(repo)
    [rule] = [f for f in _findings(records) if f["pointer"].startswith("/text/4/")]
    assert (rule["rule"], rule["against"], rule["unproven"]) == (Rule.SPEC_RULE_ADDED, "1.2.0", True)
    assert code == 100 and not [f for f in _findings(records) if f["rule"] == Rule.SPEC_TEXT_CHANGED]
    # unstamped, the same sentence is a change to every released version's text
    _edit(repo, "(1.3.0) A digest MUST", "A digest MUST")
    code, records, _ = _gate(repo)
    changed = [f["against"] for f in _findings(records) if f["rule"] == Rule.SPEC_TEXT_CHANGED]
    assert code == 100 and changed == ["1.0.0", "1.1.0", "1.2.0"]
