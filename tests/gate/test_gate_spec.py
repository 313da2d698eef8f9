"""SPEC.md's rules are part of a released version: pull requests that change SPEC.md, in throwaway clones.

Each test is a clone of the released schemas *and* SPEC.md (one commit on ``main``), changed as
a contributor would change it, and judged by the gate in-process against that commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import SCHEMA, make_repo, write_text_locks
from refitwire import wire
from refitwire.gate import (
    EXIT_BREAKING,
    EXIT_COMPATIBLE,
    GateReport,
    Rule,
    new_version,
    release,
    render,
    run_gate,
)
from refitwire.wire import SpecError, parse_spec, spec_rules, spec_text

SPEC = SCHEMA / "SPEC.md"
LIMIT_ROW = "| blob size 64 MiB |"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone whose one commit holds the released schema files, the index and SPEC.md."""
    return make_repo(tmp_path)


def _edit(repo: Path, old: str, new: str, count: int = -1) -> None:
    path = repo / "schema" / "SPEC.md"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _gate(repo: Path, witnesses: bool = True) -> GateReport:
    return run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never", witnesses=witnesses)


def _text_change(finding: Any) -> bool:
    """A change of released text (SPEC_TEXT_CHANGED), or its lock not yet written beside it."""
    rule, where = finding.change.rule, finding.change.pointer
    return rule == Rule.SPEC_TEXT_CHANGED or (
        rule == Rule.RELEASE_ENTRY_MISMATCH and where.startswith("/spec_text/")
    )


def _failing(report: GateReport, text: bool = False) -> list[tuple[str, str | None]]:
    """The failing findings' (rule, version); ``text``: with the changes to released prose
    (SPEC_TEXT_CHANGED and its lock), which an edit of a number that prose repeats also makes."""
    return sorted(
        (f.change.rule, f.against) for f in report.findings if f.failing and (text or not _text_change(f))
    )


def _spec_findings(report: GateReport) -> list[Any]:
    """The findings about SPEC.md's rules, less a new version's own text (its row of section 3)."""
    return [
        f for f in report.findings if f.file == "schema/SPEC.md" and f.change.rule != Rule.SPEC_TEXT_ADDED
    ]


def _limit_row(value: str, since: str = "") -> str:
    reader = f"MUST read a blob of up to {value} within the per-request timeout; SHOULD reject a larger one"
    return f"| {since}blob size {value} | {reader} | `BLOB_SIZE` | at the limit: Required; one byte over: Recommended |\n"


def _add_limit_row(repo: Path, row: str) -> None:
    path = repo / "schema" / "SPEC.md"
    text = path.read_text(encoding="utf-8")
    end = text.index("\n", text.index(LIMIT_ROW)) + 1
    path.write_text(text[:end] + row + text[end:], encoding="utf-8")


# -- the parser: one source of truth, and it cannot skip a row ---------------------------------------


def test_every_rule_table_row_of_the_spec_is_read() -> None:
    text = SPEC.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `") and line.split("`")[1].isupper()]
    rule_rows = [r for r in rows if r.count(" | ") == 2]
    assert {r.id for r in spec_rules(wire.default_registry()).rules} == {r.split("`")[1] for r in rule_rows}
    assert (
        spec_rules(wire.default_registry()).rules_of("1.0.0").keys()
        < spec_rules(wire.default_registry()).rules_of("1.2.0").keys()
    )
    assert {r.id: r.since for r in spec_rules(wire.default_registry()).rules if r.since != "1.0.0"} == {
        "DIGEST_FORMAT": "1.1.0",
        "STEP_RANGE": "1.2.0",
    }


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("| `UTF8` | A blob MUST be UTF-8 without a byte order mark. | `\"\"` |", "| `UTF8` | A blob MUST be UTF-8. |",
         "a rule row must be"),
        ("| `OBJECT` |", "| OBJECT |", "a rule row must be"),
        (LIMIT_ROW, "| blob size 64 MiB | MUST read | `BLOB_SIZE` |", "more cells than its header"),
        (LIMIT_ROW, "| blob size 64 MiB | MUST read | `BLOB_SIZE` |\n", "a limit row must be"),
        ("| `JSON` | A blob", "| `JSON` | A `blob", "unclosed backtick"),
        ("| 1.1.0 | optional per-shard `digest` |", "| 1.1 | optional per-shard `digest` |", "a version row"),
        ("| `ADDR_RANGE` |", "| `UTF8` |", "stated twice"),
    ],
)  # fmt: skip
def test_a_row_the_parser_cannot_read_is_an_error_naming_its_line(old: str, new: str, says: str) -> None:
    text = SPEC.read_text(encoding="utf-8")
    assert old in text
    with pytest.raises(SpecError, match=says):
        parse_spec(text.replace(old, new, 1))


NEW_RULE = '`HIDDEN_RULE` | A blob MUST NOT be hidden. | `""`'
UTF8_ROW = "| `UTF8` |"


@pytest.mark.parametrize(
    "row",
    [f"| {NEW_RULE} |", f"   | {NEW_RULE} |", f"| {NEW_RULE}", NEW_RULE],
    ids=["plain", "indented", "no closing pipe", "no outer pipes"],
)
def test_a_row_is_read_as_github_renders_it(row: str) -> None:
    # a rule GitHub shows is a rule the gate checks, however its row is spelled
    text = SPEC.read_text(encoding="utf-8")
    line = next(n for n, x in enumerate(text.splitlines(), 1) if x.startswith(UTF8_ROW))
    parsed = parse_spec(text.replace(UTF8_ROW, f"{row}\n{UTF8_ROW}", 1))
    hidden = {r.id: r for r in parsed.rules}["HIDDEN_RULE"]
    assert (hidden.keywords, hidden.line, hidden.section) == (("MUST NOT",), line, "2.1 Encoding")


def test_a_table_in_a_code_block_is_not_a_rule() -> None:
    text = (
        SPEC.read_text(encoding="utf-8")
        + f"\n```\n| ID | rule | pointer |\n|---|---|---|\n| {NEW_RULE} |\n```\n"
    )
    assert "HIDDEN_RULE" not in {r.id for r in parse_spec(text).rules}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda t: t.replace("| ID | rule | pointer |", "| ID | rule | pointer (RFC 6901) |", 1),
         "a table of rules must have the header"),
        (lambda t: t.replace("| ID | rule | pointer |\n|---|---|---|\n", "| ID | rule | pointer |\n", 1),
         "a rule row outside a table"),
        (lambda t: t + "\n| a | b |\n|---|---|\n| `SNEAKY` | MUST |\n", "a table of rules must have the header"),
    ],
    ids=["another header", "delimiter row lost", "rule rows under another header"],
)  # fmt: skip
def test_rules_the_tables_do_not_hold_are_errors(change: Any, says: str) -> None:
    with pytest.raises(SpecError, match=f"line \\d+: {says}"):
        parse_spec(change(SPEC.read_text(encoding="utf-8")))


def test_every_paragraph_naming_elsize_dtype_lists_dtype_sizes() -> None:
    text = SPEC.read_text(encoding="utf-8")
    known = parse_spec(text).dtype_sizes
    reworded = parse_spec(
        text.replace("Known dtype sizes (`ELSIZE_DTYPE`):", "Sizes (rule `ELSIZE_DTYPE`):", 1)
    )
    assert reworded.dtype_sizes == known
    more = text.replace(
        "## 5. Limits", "Also listed (`ELSIZE_DTYPE`): 1 byte: `float4_e2m1fn_x2`.\n\n## 5. Limits", 1
    )
    assert parse_spec(more).dtype_sizes == {**known, "float4_e2m1fn_x2": 1}
    with pytest.raises(SpecError, match=r"line \d+: dtype 'bool' is given two sizes"):
        parse_spec(text.replace("## 5. Limits", "More (`ELSIZE_DTYPE`): 2 bytes: `bool`.\n\n## 5. Limits", 1))


def test_the_constants_that_restate_the_spec_are_the_spec() -> None:
    from refitwire import _spec

    assert (
        spec_rules(wire.default_registry()).limit("blob size", _spec.latest())
        == _spec.blob_limit(wire.default_registry())
        == 64 * 1024 * 1024
    )
    # the parser's own bound (orjson's), so checked rather than read
    assert (
        spec_rules(wire.default_registry()).limit("nesting depth", _spec.latest()) == _spec.MAX_NESTING_DEPTH
    )
    low, high = (
        f"-2^{(-n).bit_length() - 1}" if n < 0 else f"2^{n.bit_length() - 1}" for n in wire.EXACT_INTEGERS
    )
    assert f"an integer outside [{low}, {high})" in [
        limit.name for limit in spec_rules(wire.default_registry()).limits
    ]
    assert (
        spec_rules(wire.default_registry()).dtype_sizes == _spec.dtype_sizes(wire.default_registry())
        and _spec.dtype_sizes(wire.default_registry())["bfloat16"] == 2
    )
    # and reading them follows SPEC.md: a changed table gives changed numbers
    changed = parse_spec(SPEC.read_text(encoding="utf-8").replace("blob size 64 MiB", "blob size 32 MiB"))
    assert changed.limit("blob size", "1.2.0") == 32 * 1024 * 1024


def test_the_index_locks_the_rules_of_every_released_version() -> None:
    index = json.loads((SCHEMA / "index.json").read_text(encoding="utf-8"))
    locked = {e["version"]: e["sha256"] for e in index["spec_rules"]}
    registry = wire.default_registry()  # SPEC.md's versions table lists a candidate too (a clone's 1.3.0)
    assert set(locked) == set(spec_rules(registry).versions) - set(registry.candidate_versions())
    assert locked == {v: spec_rules(wire.default_registry()).lock(v) for v in locked}, (
        "SPEC.md's rules of a released version changed"
    )
    # the facts' lock ignores the wording (the text has a lock of its own, below); every fact is locked
    reworded = parse_spec(
        SPEC.read_text(encoding="utf-8").replace("Sizes are never negative.", "Never negative.")
    )
    assert reworded.lock("1.2.0") == locked["1.2.0"]
    retiered = parse_spec(
        SPEC.read_text(encoding="utf-8").replace("elsize` MUST be in", "elsize` SHOULD be in")
    )
    assert retiered.lock("1.2.0") != locked["1.2.0"]
    # and the text of each released version is locked beside its facts, block by block
    text = SPEC.read_text(encoding="utf-8")
    written = {e["version"]: e["sha256"] for e in index["spec_text"]}
    assert written == {v: spec_text(text, "1.0.0").lock(v) for v in locked}, "SPEC.md's released text changed"
    assert spec_text(text.replace("little-endian", "big-endian"), "1.0.0").lock("1.2.0") != written["1.2.0"]
    reflowed = text.replace("in\nrow-major order:", "in row-major\norder:")
    assert reflowed != text and spec_text(reflowed, "1.0.0").lock("1.2.0") == written["1.2.0"]


# -- pull requests that change SPEC.md only -------------------------------------------------------------


@pytest.mark.slow
def test_a_limit_lowered_for_released_versions_fails_with_a_blob_an_old_writer_wrote(repo: Path) -> None:
    _edit(repo, "64 MiB", "32 MiB")
    report = _gate(repo)
    assert report.exit_code == EXIT_BREAKING and report.verdict == "breaking"
    assert _failing(report) == [(Rule.SPEC_LIMIT_TIGHTENED, v) for v in ("1.0.0", "1.1.0", "1.2.0")]
    finding = next(
        f for f in report.findings if f.against == "1.2.0" and f.change.rule == Rule.SPEC_LIMIT_TIGHTENED
    )
    assert finding.file == "schema/SPEC.md" and finding.change.pointer == "/limits/blob size/value"
    assert finding.change.directions == ("BACKWARD",)
    [witness] = finding.witnesses
    blob = json.dumps(witness.blob).encode()
    assert 32 * 1024 * 1024 < len(blob) <= 64 * 1024 * 1024 and "BLOB_SIZE" in witness.rejection
    from refitwire import unwrap_rendezvous_blob

    unwrap_rendezvous_blob(blob, spec_version="1.2.0")  # a released reader reads what an old writer wrote
    text = render(report, "text")
    assert "BREAKING SPEC_LIMIT_TIGHTENED" in text and "new readers on old blobs (BACKWARD)" in text
    assert len(text) < 100_000, "the witness is shown cut, not as 32 MiB of text"


def test_a_rule_removed_from_released_versions_fails_with_a_blob_old_readers_reject(repo: Path) -> None:
    path = repo / "schema" / "SPEC.md"
    path.write_text(
        "".join(line for line in path.read_text().splitlines(True) if not line.startswith("| `ADDR_SPAN`"))
    )
    report = _gate(repo)
    assert report.exit_code == EXIT_BREAKING
    assert _failing(report) == [(Rule.SPEC_RULE_REMOVED, v) for v in ("1.0.0", "1.1.0", "1.2.0")]
    finding = next(f for f in report.findings if f.against == "1.0.0")
    assert finding.change.pointer == "/rules/ADDR_SPAN" and finding.change.directions == ("FORWARD",)
    [witness] = finding.witnesses
    assert witness.rejection.startswith("ADDR_SPAN at")
    assert witness.blob["tensors"][0]["shards"][0]["addr"] > 2**63


def test_a_rule_re_tiered_is_a_finding_in_the_direction_it_moves(repo: Path) -> None:
    _edit(
        repo,
        "`addr + prod(shape) * elsize` MUST NOT exceed",
        "`addr + prod(shape) * elsize` SHOULD NOT exceed",
    )
    _edit(repo, "A writer SHOULD produce the bytes", "A writer MUST produce the bytes")
    report = _gate(repo)
    assert report.exit_code == EXIT_BREAKING
    rules = {(f.change.rule, f.change.pointer) for f in report.findings if f.failing and not _text_change(f)}
    assert rules == {(Rule.SPEC_RULE_WEAKENED, "/rules/ADDR_SPAN/keywords"),
                     (Rule.SPEC_RULE_STRENGTHENED, "/rules/WRITE_FORMAT/keywords")}  # fmt: skip
    weakened = next(f for f in report.findings if f.change.rule == Rule.SPEC_RULE_WEAKENED)
    assert weakened.change.directions == ("FORWARD",) and weakened.witnesses  # a blob the old reader rejects
    stronger = next(f for f in report.findings if f.change.rule == Rule.SPEC_RULE_STRENGTHENED)
    assert stronger.change.directions == ("BACKWARD",) and stronger.unproven  # no blob shows a writer's bytes


def test_a_limit_raised_for_a_released_version_fails(repo: Path) -> None:
    _edit(repo, "64 MiB", "128 MiB")
    report = _gate(repo, witnesses=False)
    assert _failing(report) == [(Rule.SPEC_LIMIT_LOOSENED, v) for v in ("1.0.0", "1.1.0", "1.2.0")]


def test_a_limit_raised_for_a_new_version_breaks_old_readers(repo: Path) -> None:
    # FULL: a 1.2.0 reader must read what a 1.3.0 writer writes, and it may reject past 64 MiB
    new_version(repo / "schema", "1.3.0")
    _add_limit_row(repo, _limit_row("128 MiB", "(1.3.0) "))
    report = _gate(repo)
    assert report.exit_code == EXIT_BREAKING, render(report, "text")
    [raised] = _spec_findings(report)
    assert (raised.change.rule, raised.against, raised.change.new) == (
        Rule.SPEC_LIMIT_LOOSENED,
        "1.2.0",
        128 << 20,
    )
    [witness] = raised.witnesses
    assert witness.direction == "FORWARD" and len(json.dumps(witness.blob)) == (64 << 20) + 1
    assert witness.rejection.startswith("BLOB_SIZE") and witness.reader_version == "1.2.0"
    # the released versions keep their limit
    assert parse_spec((repo / "schema" / "SPEC.md").read_text()).limit("blob size", "1.2.0") == 64 << 20


def test_a_limit_lowered_for_a_new_version_is_judged_like_a_schema_tightening(repo: Path) -> None:
    new_version(repo / "schema", "1.3.0")
    _add_limit_row(repo, _limit_row("16 MiB", "(1.3.0) "))
    report = _gate(repo)
    assert _failing(report) == [(Rule.SPEC_LIMIT_TIGHTENED, "1.2.0")]
    [witness] = next(f for f in report.findings if f.failing).witnesses
    assert witness.reader_version == "1.3.0" and len(json.dumps(witness.blob)) == 16 * 1024 * 1024 + 1


def test_a_rule_for_a_member_a_new_version_adds_is_additive_and_one_for_old_members_is_not(
    repo: Path,
) -> None:
    new_version(repo / "schema", "1.3.0")
    rank = "| `RANK_RANGE` | (1.3.0) `publisher_rank`, when present, MUST be in [0, 2^16). | `/publisher_rank` |\n"
    name = "| `AGENT_NAME_LENGTH` | (1.3.0) `agent_name` MUST be at most 256 bytes. | `/agent_name` |\n"
    both = "| `ADDR_ALIGN` | (1.3.0) `addr` MUST be a multiple of 4096; `publisher_rank` MUST be below 2^16. | `/a` |\n"
    _edit(repo, "| `STEP_RANGE` |", rank + name + both + "| `STEP_RANGE` |", 1)
    schema = repo / "schema" / "rendezvous" / "1.3.0.json"
    document = json.loads(schema.read_text())
    document["properties"]["publisher_rank"] = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0"}
    schema.write_text(json.dumps(document, indent=2))
    report = _gate(repo, witnesses=False)
    spec = {f.change.pointer: f.change.rule for f in _spec_findings(report)}
    assert spec == {
        "/rules/RANK_RANGE": Rule.SPEC_RULE_ADDED_WITH_MEMBER,
        "/rules/AGENT_NAME_LENGTH": Rule.SPEC_RULE_ADDED,
        "/rules/ADDR_ALIGN": Rule.SPEC_RULE_ADDED,  # a new member named too: addr still fires on old blobs
    }
    assert _failing(report) == [(Rule.SPEC_RULE_ADDED, "1.2.0")] * 2


#: New 1.3.0 rows of SPEC.md's tables: whom each binds is its pointer cell (section 2.4's rows
#: bind the writer alone: no reader rejects a blob for them), how strongly its keyword.
WRITER_SHOULD = "| `WRITE_TENSORS_SORTED` | (1.3.0) A writer SHOULD write the tensors sorted by `name`. | none: a rule of the writer |\n"
WRITER_MUST = "| `WRITE_TENSORS_ONCE` | (1.3.0) A writer MUST NOT write two tensors of one `name`. | none: a rule of the writer |\n"
READER_SHOULD = "| `READ_LOG_REJECTED` | (1.3.0) A reader SHOULD log the rule of each blob it rejects. | none: not a rule of the blob |\n"
#: A 1.3.0 paragraph: whom it binds is the side of the rules it names, read from their rows.
WRITER_NOTE = "(1.3.0) A writer SHOULD keep its tensors in one order across steps (`WRITE_FORMAT`).\n\n"
READER_NOTE = "(1.3.0) A reader SHOULD log each blob it rejects (`READ_VALIDATE`).\n\n"


def test_a_new_versions_should_for_its_writers_alone_breaks_nothing_and_a_readers_rule_still_flags(
    repo: Path,
) -> None:
    """A 1.3.0 row or paragraph that only tells 1.3.0's writers what they SHOULD do binds no reader:
    no blob is rejected for it, so no released reader or writer breaks (info, named); a 1.3.0
    MUST of the writer, a reader's SHOULD and a paragraph about readers still flag."""
    new_version(repo / "schema", "1.3.0")
    _edit(repo, "| `WRITE_FORMAT` |", WRITER_SHOULD + "| `WRITE_FORMAT` |", 1)
    _edit(repo, "### 2.5 Readers", WRITER_NOTE + "### 2.5 Readers", 1)
    report = _gate(repo, witnesses=False)
    assert report.exit_code == EXIT_COMPATIBLE, render(report, "text")
    named = [f for f in report.findings if f.change.rule == Rule.SPEC_RULE_ADDED_FOR_WRITERS]
    assert [(f.change.pointer.split("/")[1], f.against, f.failing) for f in named] == [
        ("text", "1.2.0", False), ("rules", "1.2.0", False)]  # fmt: skip
    assert "binds only 1.3.0's writers, as a SHOULD" in named[1].change.detail
    assert "SPEC_RULE_ADDED_FOR_WRITERS" in render(report, "text")
    # the same kit judging rules that bind more: each is still a new rule that may break
    _edit(repo, WRITER_SHOULD, WRITER_SHOULD + WRITER_MUST + READER_SHOULD)
    _edit(repo, WRITER_NOTE, WRITER_NOTE + READER_NOTE)
    report = _gate(repo, witnesses=False)
    assert report.exit_code == EXIT_BREAKING
    flagged = {f.change.pointer: f.change.rule for f in report.findings if f.failing}
    assert (
        flagged.pop("/rules/WRITE_TENSORS_ONCE")
        == flagged.pop("/rules/READ_LOG_REJECTED")
        == Rule.SPEC_RULE_ADDED
    )
    assert list(flagged.values()) == [Rule.SPEC_RULE_ADDED]  # the reader's paragraph
    still = [f.change.pointer for f in report.findings if f.change.rule == Rule.SPEC_RULE_ADDED_FOR_WRITERS]
    assert still[0].startswith("/text/2.4/") and still[1:] == ["/rules/WRITE_TENSORS_SORTED"], still


def test_a_rule_moved_to_another_section_is_a_change(repo: Path) -> None:
    # from the geometry readers check (2.3) to the writers' table (2.4): who must check it changed
    path = repo / "schema" / "SPEC.md"
    lines = path.read_text(encoding="utf-8").splitlines(True)
    [row] = [line for line in lines if line.startswith("| `ADDR_SPAN` |")]
    lines.remove(row)
    at = next(n for n, line in enumerate(lines) if line.startswith("| `WRITE_FORMAT` |"))
    path.write_text("".join(lines[: at + 1] + [row] + lines[at + 1 :]), encoding="utf-8")
    report = _gate(repo, witnesses=False)
    assert report.exit_code == EXIT_BREAKING
    moved = [f for f in report.findings if f.change.pointer == "/rules/ADDR_SPAN/section"]
    assert [(f.change.rule, f.against) for f in moved] == [
        (Rule.SPEC_RULE_CHANGED, v) for v in ("1.0.0", "1.1.0", "1.2.0")
    ]
    assert moved[0].change.directions == ("BACKWARD", "FORWARD") and "2.4 Writers" in moved[0].change.detail


def test_an_interval_opened_or_closed_is_a_change(repo: Path) -> None:
    # "[1, 64]" -> "[1, 64)": the same numbers, one value fewer
    _edit(repo, "[1, 64]", "[1, 64)")
    report = _gate(repo, witnesses=False)
    assert _failing(report) == [(Rule.SPEC_RULE_CHANGED, v) for v in ("1.0.0", "1.1.0", "1.2.0")]
    assert {f.change.pointer for f in report.findings if not _text_change(f)} == {"/rules/ELSIZE_RANGE/ends"}


def test_a_rule_applied_from_an_earlier_version_names_the_fact_each_later_lock_lost(repo: Path) -> None:
    _edit(repo, "| `DIGEST_FORMAT` | (1.1.0)", "| `DIGEST_FORMAT` | (1.0.0)")
    report = _gate(repo, witnesses=False)
    assert (Rule.SPEC_RULE_ADDED, "1.0.0") in _failing(report)
    modified = [
        f
        for f in report.findings
        if f.change.rule == Rule.RELEASED_FILE_MODIFIED and f.file == "schema/SPEC.md"
    ]
    assert {f.change.pointer for f in modified} == {"/rules/DIGEST_FORMAT/since"}
    assert all(
        "1.1.0 -> " not in f.change.detail and "/rules/DIGEST_FORMAT/since" in f.change.detail
        for f in modified
    )


def test_a_spec_that_cannot_be_read_is_one_line_naming_the_file_and_line(repo: Path) -> None:
    from refitwire.gate import GateError

    _edit(repo, "| `ADDR_RANGE` |", "| `UTF8` |", 1)
    with pytest.raises(GateError) as caught:
        _gate(repo)
    assert str(caught.value).startswith("schema/SPEC.md: line ") and "SPEC.md: SPEC.md" not in str(
        caught.value
    )
    assert "is stated twice (first on line" in str(caught.value)


def test_a_section_retitled_moves_no_rule(repo: Path) -> None:
    _edit(repo, "### 2.3 Geometry (not expressible in JSON Schema)", "### 2.3 Geometry")
    report = _gate(repo, witnesses=False)
    # the heading is released text (SPEC_TEXT_CHANGED), but no rule moved to another section
    assert {(f.change.rule, f.change.pointer) for f in report.findings if f.file == "schema/SPEC.md"} == {
        (Rule.SPEC_TEXT_CHANGED, "/text/2.3")
    }


@pytest.mark.parametrize(
    ("old", "new"),
    [("| MUST read a blob of up to 64 MiB", "| MAY read a blob of up to 64 MiB"),
     ("at the limit: Required", "at the limit: Recommended")],
    ids=["a reader's duty weakened", "a tier lowered"],
)  # fmt: skip
def test_a_limit_whose_duties_change_breaks_both_ways_until_reviewed(repo: Path, old: str, new: str) -> None:
    # the reader column says both "MUST read up to" and "SHOULD reject past": no direction is sure
    _edit(repo, old, new)
    report = _gate(repo, witnesses=False)
    assert _failing(report) == [(Rule.SPEC_RULE_CHANGED, v) for v in ("1.0.0", "1.1.0", "1.2.0")]
    assert {f.change.directions for f in report.findings if f.failing and not _text_change(f)} == {
        ("BACKWARD", "FORWARD")
    }


def test_editorial_changes_pass_only_when_acknowledged(repo: Path) -> None:
    from refitwire.gate import load_baseline

    _edit(repo, "Sizes are never negative.", "Sizes are never negativ.")
    _edit(repo, "publishes before a weight refit", "publishes before a weigth refit")  # prose, not a table
    report = _gate(repo)
    assert report.exit_code == EXIT_BREAKING
    assert {(f.change.rule, f.change.pointer) for f in report.findings if f.failing} == {
        (Rule.SPEC_RULE_REWORDED, "/rules/SIZE_RANGE"),
        (Rule.SPEC_TEXT_CHANGED, "/text/1"),
        *((Rule.RELEASE_ENTRY_MISMATCH, f"/spec_text/{i}") for i in range(3)),  # the text's new locks
    }
    write_text_locks(repo)
    entries = {json.dumps({**f.baseline_entry(), "reason": "typo", "link": "issue-45", "expires": "2099-01-01"},
                          sort_keys=True) for f in report.findings if f.failing and f.file == "schema/SPEC.md"}  # fmt: skip
    baseline = repo / "baseline.json"
    baseline.write_text(json.dumps({"accepted": [json.loads(e) for e in sorted(entries)]}))
    accepted = run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never",
                        baseline=load_baseline(baseline))  # fmt: skip
    assert accepted.exit_code == EXIT_COMPATIBLE
    assert "ACCEPTED SPEC_TEXT_CHANGED" in render(accepted, "text")


def test_a_text_lock_left_behind_says_to_write_it_not_to_accept_it(repo: Path) -> None:
    """An edit of released text whose lock was not written: the lock's finding says to write it
    (accepting it in the baseline would leave the next change's ref disagreeing with its lock),
    while the edit itself is still offered the baseline as an editorial change."""
    _edit(repo, "publishes before a weight refit", "publishes before a weigth refit")
    report = _gate(repo, witnesses=False)
    text = render(report, "text").split("\n")
    starts = [n for n, line in enumerate(text) if line.startswith(("BREAKING ", "UNPROVEN ", "ok "))]
    blocks = {
        text[n].split()[1] + " " + text[n + 1]: text[n:end]
        for n, end in zip(starts, [*starts[1:], len(text)])
    }
    locks = [b for key, b in blocks.items() if key.startswith("RELEASE_ENTRY_MISMATCH")]
    assert len(locks) == 3, "\n".join(text)
    for lines in locks:
        assert any(line.startswith("  to fix it, write the entry the finding names into schema/index.json")
                   for line in lines), lines  # fmt: skip
        assert not any("baseline" in line and "accept" in line for line in lines), lines
    [changed] = [b for key, b in blocks.items() if key.startswith("SPEC_TEXT_CHANGED")]
    assert "  to accept it, add to the baseline:" in changed
    records = [json.loads(line) for line in render(report, "json").splitlines()]
    found = [r for r in records if r.get("rule") == Rule.RELEASE_ENTRY_MISMATCH]
    assert found and all(r["baseline_entry"] is None and r["remedy"] == Rule.RELEASE_ENTRY_MISMATCH.remedy
                         for r in found)  # fmt: skip


def test_the_lock_of_a_released_version_never_changes(repo: Path) -> None:
    index = repo / "schema" / "index.json"
    data = json.loads(index.read_text())
    data["spec_rules"][1]["sha256"] = "0" * 64
    index.write_text(json.dumps(data, indent=2))
    report = _gate(repo)
    assert [(f.change.rule, f.change.pointer) for f in report.findings if f.failing] == [
        (Rule.RELEASED_FILE_MODIFIED, "/spec_rules/1")
    ]


def test_a_release_locks_its_rules_and_the_gate_checks_the_lock(repo: Path) -> None:
    new_version(repo / "schema", "1.3.0")
    release(repo / "schema", "1.3.0")
    index = json.loads((repo / "schema" / "index.json").read_text())
    work = parse_spec((repo / "schema" / "SPEC.md").read_text())
    assert index["spec_rules"][-1] == {"version": "1.3.0", "sha256": work.lock("1.3.0")}
    assert _gate(repo, witnesses=False).exit_code == EXIT_COMPATIBLE
    index["spec_rules"][-1]["sha256"] = "f" * 64
    (repo / "schema" / "index.json").write_text(json.dumps(index, indent=2))
    assert _failing(_gate(repo, witnesses=False)) == [(Rule.RELEASE_ENTRY_MISMATCH, None)]


def test_an_unreadable_rule_row_is_a_one_line_error(repo: Path) -> None:
    from refitwire.gate import GateError

    _edit(repo, "| `OBJECT` |", "| OBJECT |")
    with pytest.raises(GateError, match=r"schema/SPEC.md: line \d+: a rule row must be"):
        _gate(repo)
