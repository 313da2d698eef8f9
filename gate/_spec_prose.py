"""SPEC.md's text of every released version, locked: each change to it is a finding with its diff.

The rule tables' facts are ordered by ``gate/_spec.py``; this module holds the rest of what a
released version says, the prose a conforming implementation is judged by just as much (the
digest's steps, the order of section 2.7, the decoded form, the tiers, the members table),
read block by block by ``refitwire.wire.spec_text``:

* **released text never changes.** For every released version, each section whose text
  (its blocks that apply to that version, whitespace collapsed) differs between the ref's
  SPEC.md and the working tree's is ``SPEC_TEXT_CHANGED``, with the blocks and words that
  changed (a rule's or a limit's row is left to ``gate/_spec.py``, which orders its facts and
  names a change of its wording ``SPEC_RULE_REWORDED``). It fails like a modified released
  file; an editorial change (a typo) passes only through a baseline entry, which the report
  then names (``ACCEPTED``). The ``change`` hash is of the changed words, not of the version,
  so one entry without ``against`` accepts the same edit for every version it touches.
* **a new version's own text** (a block stamped ``(1.3.0)``, a section headed so, a row whose
  ``since`` is 1.3.0) changes no released version. It is judged as that version's rule
  rows are, against the newest release of its line: a block with an RFC 2119 keyword is a new
  normative statement (``SPEC_RULE_ADDED``, BACKWARD until the runtime step or a person shows
  otherwise); one without (a member's row, an explanation) is ``SPEC_TEXT_ADDED`` (info). Rule and
  limit rows are left to ``gate/_spec.py``, which orders their facts.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Sequence

from refitwire.gate._change import Change
from refitwire.gate._document import Document
from refitwire.gate._rules import Direction, Rule
from refitwire.gate._witness import Witness, find_witness
from refitwire.wire import Registry, SpecRules, SpecText, TextBlock, pointer, version_key

#: Words of context around a changed span, and how many lines of diff a finding shows.
_CONTEXT, _SHOWN = 6, 40


def released_text(
    base: SpecText, work: SpecText, released: Sequence[str], witnesses_from: Registry | None
) -> list[tuple[Change, str, tuple[Witness, ...]]]:
    """``(change, version, witnesses)`` for each section of each released version whose text
    changed; witnesses (:func:`members_witnesses`) built from ``witnesses_from`` where one can be
    (None: no search)."""
    out = []
    for version in released:
        old, new = base.sections(version), work.sections(version)
        for key in [*new, *(k for k in old if k not in new)]:
            # a rule's or a limit's row is judged by gate/_spec.py: its facts ordered, its wording locked
            a = tuple(x for x in old.get(key, ()) if not x.fact_row)
            b = tuple(x for x in new.get(key, ()) if not x.fact_row)
            if [x.text for x in a] == [x.text for x in b]:
                continue
            removed, added, shown = diff(a, b)
            heading = (b or a)[0].section or "(before the first section)"
            lines = "\n".join(shown[:_SHOWN]) + (
                f"\n... {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
            )
            detail = (
                f"section {key} ({heading}) of released {version} changed: released text never changes "
                f"(an editorial change passes through a baseline entry)\n{lines}"
            )
            change = Change(Rule.SPEC_TEXT_CHANGED, pointer("text", key), "", detail, removed, added)
            witnesses = members_witnesses(a, b, version, witnesses_from) if witnesses_from is not None else ()
            out.append((change, version, witnesses))
    return out


def candidate_text(
    work: SpecText, candidates: Sequence[str], released: Sequence[str], rules: SpecRules
) -> list[tuple[Change, str]]:
    """``(change, newest release of its line)`` for each block a candidate version adds of its own;
    ``rules``: the working tree's tables, which say whom a rule binds (a paragraph that only
    advises writers, by the rules it names, breaks no released reader or writer)."""
    out = []
    for version in sorted(set(candidates) - set(released), key=version_key):
        key = version_key(version)
        line = [v for v in released if version_key(v)[:1] == key[:1] and version_key(v) < key]
        if not line:
            continue
        against = max(line, key=version_key)
        for section, blocks in work.sections(version).items():
            for n, block in enumerate(blocks):
                if block.since != version or block.fact_row:
                    continue
                rule = Rule.SPEC_RULE_ADDED if block.normative else Rule.SPEC_TEXT_ADDED
                detail = f"{version}'s own text in section {section} (line {block.line}): {block.text[:200]}"
                if block.normative and rules.advises_writers(block.text, version):
                    rule = Rule.SPEC_RULE_ADDED_FOR_WRITERS
                    detail += " (it names only rules of the writer, as a SHOULD or MAY)"
                out.append((Change(rule, pointer("text", section, n), "", detail, None, block.text), against))
    return out


def diff(old: Sequence[TextBlock], new: Sequence[TextBlock]) -> tuple[list[str], list[str], list[str]]:
    """The changed blocks' texts (removed, added) and the lines that show them: a replaced block
    by the words that changed, with context; a block added or removed whole."""
    a, b = [x.text for x in old], [x.text for x in new]
    removed, added, shown = [], [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        removed += a[i1:i2]
        added += b[j1:j2]
        pairs = list(zip(old[i1:i2], new[j1:j2])) if op == "replace" else []
        for x, y in pairs:
            shown.append(f"  line {x.line} -> {y.line}:")
            shown += words(x.text, y.text)
        shown += [f"- line {x.line}: {_cut(x.text)}" for x in old[i1 + len(pairs) : i2]]
        shown += [f"+ line {y.line}: {_cut(y.text)}" for y in new[j1 + len(pairs) : j2]]
    return removed, added, shown


def words(a: str, b: str) -> list[str]:
    """The spans of words that differ between ``a`` and ``b``, each with a few words around it."""
    x, y = a.split(" "), b.split(" ")
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, x, y, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        before = " ".join(x[max(0, i1 - _CONTEXT) : i1])
        out.append(f"    - ...{before} [{' '.join(x[i1:i2])}] {' '.join(x[i2 : i2 + _CONTEXT])}...")
        out.append(f"    + ...{before} [{' '.join(y[j1:j2])}] {' '.join(y[j2 : j2 + _CONTEXT])}...")
    return out


def _cut(text: str, shown: int = 300) -> str:
    return text if len(text) <= shown else text[:shown] + "..."


# -- a witness where the text says what a schema says: the members table ------------------------

#: The members table of section 1 (tools/build_spec_members.py writes it from the schemas).
MEMBERS_HEADER = "| member | type | presence | since | meaning |"


def members_witnesses(old: Sequence[TextBlock], new: Sequence[TextBlock], version: str,
                      registry: Registry) -> tuple[Witness, ...]:  # fmt: skip
    """Witnesses of a member's presence changed in the members table of released ``version``:
    its reader, read as the changed table says (the released schema with the member required,
    or no longer required), against the released schema's writer, through the gate's own witness
    search (every witness checked by ``refuted``). None where the table changed nothing else
    the schema says, or ``version`` has no released rendezvous schema here."""
    if version not in registry.released_versions():
        return ()
    before, after = _presence(old), _presence(new)
    released = registry.load_schema("rendezvous", version)
    found = []
    for name in sorted(set(before) & set(after)):
        made = (before[name] == "required", after[name] == "required")
        if made[0] == made[1] or name not in released.get("properties", {}):
            continue
        variant = copy.deepcopy(released)
        required = [m for m in variant.get("required", []) if m != name] + ([name] if made[1] else [])
        variant["required"] = required
        rule = Rule.REQUIRED_ADDED if made[1] else Rule.REQUIRED_REMOVED
        direction: Direction = "BACKWARD" if made[1] else "FORWARD"
        change = Change(rule, "/required", pointer(name), f"the table says {name!r} is {after[name]}")
        schema_doc = Document(f"schema/rendezvous/{version}.json", released)
        table_doc = Document(f"SPEC.md's members table as changed, at {version}", variant)
        witness = find_witness(change, schema_doc, table_doc, direction, registry)
        if witness is not None:
            found.append(witness)
    return tuple(found)


def _presence(blocks: Sequence[TextBlock]) -> dict[str, str]:
    """Member -> presence, from the rows under the members table's header."""
    out: dict[str, str] = {}
    within = False
    for block in blocks:
        if block.kind != "row":
            within = False
        elif block.text == MEMBERS_HEADER:
            within = True
        elif within:
            cells = [c.strip() for c in block.text.strip("|").split("|")]
            if len(cells) == 5 and cells[0].startswith("`"):
                out[cells[0].strip("`")] = cells[2]
    return out
