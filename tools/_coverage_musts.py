"""Every MUST and MUST NOT sentence of SPEC.md and IMPLEMENTERS.md, with the cases that fail an
implementation that breaks it (tools/build_coverage.py writes them into docs/coverage.md).

Sentences are read from the text, not listed: a rule table's cell, a list item or a paragraph,
split at sentence ends, kept when it uses MUST (or MUST NOT) as a verb. Each gets a stable ID,
``DOC:PLACE:HASH`` (the rule of its table row or its section, and a hash of its words), so an
edit elsewhere never renames it. A sentence concerns the rule of its row and the rules it names;
a rule's cases are, on the read side, the vectors that expect it (a rejection naming it, or an
acceptance resting on it) and, on the write side, the refusals of it and the golden writer
payloads whose written blob is checked for it (every written blob is checked for every writer
rule: ``compat.runner._checks.written_problem``). A sentence with no case on either side is a gap.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _clone
from _vector_kit import TAG_RULES

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = {"SPEC": ROOT / "schema" / "SPEC.md", "IMPLEMENTERS": ROOT / "compat" / "IMPLEMENTERS.md"}
NORMATIVE = re.compile(r"(?<!says )\bMUST(?: NOT)? (?!and\b)[a-z]")
RULE_ID = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|UTF8|JSON|OBJECT|TYPE|REQUIRED)`")
#: Case families of the sections whose MUSTs name no rule (the digest; the reader limits).
TOPICS = {"4. Digest": "digest:*", "The size and scale cases": "size:*", "5. Limits": "size:*"}
#: Rules no testee case can break: they bind a receiver's use of what it read (the refit).
RECEIVERS = {"READ_DIGEST_ABSENT": "tests/refit/test_verdict.py::test_unchecked_needs_the_policy"}
#: The merge vectors (a receiver's merge of tables, protocol command ``merge``), by the rule each is of.
MERGES = ROOT / "schema" / "vectors" / "merge" / "merge.json"
#: Rules whose cases are built at run time, not committed (SPEC section 5).
BUILT = {"BLOB_SIZE": ["size:at-limit", "size:over-limit"]}


@dataclass(frozen=True)
class Sentence:
    id: str
    text: str
    rules: tuple[str, ...]
    topic: str | None


def _sentences(text: str) -> Iterator[str]:
    for part in re.split(r"(?<=[.;:])\s+(?=[A-Z`(*])", text):
        yield part.strip()


def sentences(rules: set[str], documents: dict[str, Path] = DOCUMENTS) -> list[Sentence]:
    """The MUST sentences of the documents (SPEC.md and IMPLEMENTERS.md), in document order."""
    found = []
    for doc, path in documents.items():
        heading = ""
        for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
            for line in block.splitlines():
                if line.startswith("#"):
                    heading = line.lstrip("#").strip()
            rows = [line for line in block.splitlines() if line.startswith("|")]
            units = [(row, row) for row in rows] or [(block, block)]
            for unit, context in units:
                row_rule = re.match(r"\| `([A-Z][A-Z0-9_]*)` \|", unit)
                cells = [c.strip() for c in unit.strip().strip("|").split(" | ")]
                words = cells[1] if row_rule and len(cells) > 1 else " ".join(cells if rows else [unit])
                for sentence in _sentences(" ".join(words.split())):
                    if not NORMATIVE.search(sentence):
                        continue
                    named = {r for r in RULE_ID.findall(sentence) if r in rules}
                    if row_rule:
                        named.add(row_rule.group(1))
                    elif rows:
                        named |= {r for r in RULE_ID.findall(context) if r in rules}
                    place = row_rule.group(1) if row_rule else re.sub(r"\W+", "-", heading).strip("-")[:24]
                    digest = hashlib.sha256(" ".join(sentence.split()).encode()).hexdigest()[:6]
                    topic = next((t for h, t in TOPICS.items() if heading.startswith(h)), None)
                    found.append(Sentence(f"{doc}:{place}:{digest}", sentence, tuple(sorted(named)), topic))
    return found


def read_cases(vectors: list[dict[str, Any]]) -> dict[str, list[str]]:
    """rule -> the read cases that expect it: a rejection naming it (at any version), an
    acceptance resting on it (the vector's ``spec`` and tags), a rejection it allows (``or_reject``);
    and the merge cases of each merge rule."""
    found: dict[str, list[str]] = {}
    for v in vectors:
        if v["document"] != "rendezvous":
            continue
        rules = {o["rule"] for o in v["expect"].values() if not o["valid"]}
        rules |= {o["or_reject"]["rule"] for o in v["expect"].values() if o.get("or_reject")}
        if any(not o["valid"] for o in v["expect"].values()):
            rules.add("READ_VALIDATE")  # every rejection is READ_VALIDATE's too
        rules.add(v["spec"]["rule"])
        rules |= {TAG_RULES[t] for t in v["tags"] if t in TAG_RULES}  # the reader rules its tags exercise
        for rule in rules:
            found.setdefault(rule, []).append(f"read:{v['id']}")
    for rule, ids in BUILT.items():
        found.setdefault(rule, []).extend(ids)
    for merge in json.loads(MERGES.read_text(encoding="utf-8"))["vectors"]:
        found.setdefault(merge["rule"], []).append(f"merge:{merge['id']}")
    return found


def write_cases() -> dict[str, list[str]]:
    """rule -> the write cases that fail a writer breaking it: the refusals of the rule, and the
    golden payloads (with and without unknown members) whose blob would show the breach."""
    from refitwire.compat.cases import _built_cases, _cases, _write_unknown

    found: dict[str, list[str]] = {}
    for version in _clone.registry().released_versions():
        for refusal in _built_cases.refusal_cases(version, _clone.registry()):
            for rule in (refusal.rule, "WRITE_VALID"):
                found.setdefault(rule, []).append(refusal.id)
        golden = [c for c in _cases.write_cases() if c.spec_version == version]
        for case in golden + list(_write_unknown.unknown_member_cases(version, _clone.registry())):
            for rule in _exercised(case.payload, case.may_refuse):
                found.setdefault(rule, []).append(case.id)
    return {rule: sorted(set(ids)) for rule, ids in found.items()}


def _exercised(payload: dict[str, Any], unknown: str | None) -> set[str]:
    """The writer rules a write of ``payload`` can break visibly in the blob."""
    text = json.dumps(payload)
    rules = {"WRITE_VALID", "DUPLICATE_KEYS", "READ_ORDER"}  # any blob: valid, no name repeated, in order
    if ": null" in text:
        rules.add("WRITE_OMIT_ABSENT")
    if payload.get("metadata_endpoint") in (None, ""):
        rules.add("WRITE_ENDPOINT")
    if payload.get("publisher_step") == 0:
        rules.add("READ_STEP_UNKNOWN")  # step 0 carried as 0
    if unknown is not None:
        rules.add(unknown)
    return rules


def must_rows(
    vectors: list[dict[str, Any]], rules: set[str], documents: dict[str, Path] = DOCUMENTS
) -> tuple[list[str], list[str]]:
    """The table lines, and the IDs of the sentences no case covers."""
    reads, writes = read_cases(vectors), write_cases()
    lines = ["| sentence | rules | read cases | write cases |", "|---|---|---|---|"]
    gaps = []
    for s in sentences(rules, documents):
        read = sorted({c for r in s.rules for c in reads.get(r, [])})
        write = sorted({c for r in s.rules for c in writes.get(r, [])})
        elsewhere = [RECEIVERS[r] for r in s.rules if r in RECEIVERS]
        if s.topic is not None:
            read.append(s.topic)
        if not read and not write and not elsewhere:
            gaps.append(s.id)
        words = s.text if len(s.text) <= 160 else s.text[:157] + "..."
        words = words.replace("|", "\\|")
        cell_read = (
            _cell(read)
            if read
            else ("**none**" if not elsewhere else "(receivers: " + ", ".join(elsewhere) + ")")
        )
        lines.append(
            f"| `{s.id}` {words} | {' '.join(s.rules) or '-'} | {cell_read} | {_cell(write) if write else '-'} |"
        )
    return lines, gaps


def _cell(ids: list[str], shown: int = 4) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)}: {' '.join(ids[:shown])}{more}"
