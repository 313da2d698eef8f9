"""SPEC.md's text, block by block: what a released version's prose says, locked like its facts.

The rule tables hold the facts the gate can order (``_spec_rules``), but a conforming
implementation is judged by every normative sentence: the digest's steps (section 4), the
order of section 2.7, the decoded form (section 6), the tiers (section 7), the members table.
So the text of a released version is locked too: :func:`spec_text` reads SPEC.md as GitHub
renders it (markdown-it-py, as the tables are read) into blocks (a paragraph, a list item's
paragraph, a table row, a code block, a heading), each in its numbered section, with the
version it applies from:

* a block whose text (a row: one of its cells) starts with a version in parentheses,
  ``(1.3.0) ...``, applies from that version on, as a rule or limit row does;
* a row of a table with a ``version`` or ``since`` column applies from that cell's version
  (the versions table, the members table);
* every block under a heading that starts with a version (``### 2.9 (1.3.0) Ranks``) likewise;
* every other block applies to every version.

A version's text is every block that applies to it, whitespace collapsed inside each block
(a paragraph reflowed is the same text; a word changed, a step reordered, a row changed is
not). :meth:`SpecText.lock` is its sha256, which ``schema/index.json`` records per release
(``spec_text``), beside the lock of its facts (``spec_rules``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token
from refitwire._spec_rules import _LIMIT_HEADER, _RULE_HEADER
from refitwire._wire import parse_version, version_key

__all__ = ["SpecText", "TextBlock", "section_key", "spec_text"]

_MARKDOWN = MarkdownIt("commonmark").enable("table")
#: Leaf blocks, each one locked unit of text (a list item is locked through its paragraphs,
#: whose first line carries the item's marker, so a renumbered or reordered step shows).
_LEAVES = frozenset({"paragraph_open", "tr_open", "fence", "code_block", "html_block", "heading_open", "hr"})
_STAMP = re.compile(r"^\((\d+\.\d+\.\d+)\)")
_SINCE_COLUMNS = ("version", "since")
_KEYWORD = re.compile(r"\b(MUST|SHOULD|MAY)\b")
#: The tables whose rows are facts the gate orders (``_spec_rules``): rules and limits.
_FACT_HEADERS = frozenset({_RULE_HEADER, _LIMIT_HEADER})


@dataclass(frozen=True)
class TextBlock:
    section: str  # the heading it sits under, as written ("4. Digest"); "" before the first
    since: str  # the version it applies from; "" for every version
    raw: str  # its lines as written
    line: int  # its first line (from 1)
    kind: str  # "paragraph", "row", "code", "heading", "rule" (a horizontal rule), "html"
    #: the row of a table of facts the tables' parser reads (rules, limits): judged as facts
    fact_row: bool = False

    @property
    def text(self) -> str:
        """The block with its whitespace collapsed: what is locked."""
        return " ".join(self.raw.split())

    @property
    def normative(self) -> bool:
        """Whether it states an RFC 2119 keyword."""
        return bool(_KEYWORD.search(self.text))


@dataclass(frozen=True)
class SpecText:
    """Every block of one SPEC.md, in document order."""

    blocks: tuple[TextBlock, ...]
    first: str  # the first version (a block without a version applies from it)

    def of(self, version: str) -> tuple[TextBlock, ...]:
        """The blocks that apply to ``version``."""
        key = version_key(version)
        return tuple(b for b in self.blocks if version_key(b.since or self.first) <= key)

    def sections(self, version: str) -> dict[str, tuple[TextBlock, ...]]:
        """``version``'s blocks by section key (:func:`section_key`), in document order."""
        out: dict[str, list[TextBlock]] = {}
        for block in self.of(version):
            out.setdefault(section_key(block.section), []).append(block)
        return {k: tuple(v) for k, v in out.items()}

    def lock(self, version: str) -> str:
        """sha256 of ``version``'s text (each block's, in order, by section) as canonical JSON."""
        record = {k: [b.text for b in v] for k, v in self.sections(version).items()}
        canonical = json.dumps(record, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def section_key(heading: str) -> str:
    """A section's number (``"2.7 Which violation is reported"`` -> ``"2.7"``, ``"4. Digest"`` ->
    ``"4"``), else its heading: a retitled section keeps its text's place."""
    first = heading.split(" ", 1)[0].rstrip(".")
    return first if first[:1].isdigit() else heading


def spec_text(text: str, first: str) -> SpecText:
    """The blocks of SPEC.md ``text``; ``first``: the first version (what an unstamped block
    applies from)."""
    tokens = _MARKDOWN.parse(text)
    lines = text.splitlines()
    blocks: list[TextBlock] = []
    section, section_since = "", ""
    header: tuple[str, ...] = ()
    for i, token in enumerate(tokens):
        if token.type == "thead_open":
            header = _cells(tokens, i)
        if token.type not in _LEAVES or token.map is None:
            continue
        raw = "\n".join(lines[token.map[0] : token.map[1]])
        content = tokens[i + 1].content.strip() if tokens[i + 1 : i + 2] else ""
        if token.type == "heading_open":
            section = content
            stamp = _STAMP.match(section.split(" ", 1)[-1] if section[:1].isdigit() else section)
            section_since = stamp.group(1) if stamp else ""
            blocks.append(TextBlock(section, section_since, raw, token.map[0] + 1, "heading"))
            continue
        since, kind, fact = section_since, _KIND.get(token.type, "paragraph"), False
        if token.type == "tr_open":
            cells = _cells(tokens, i)
            if cells == header:  # the header row belongs to every version of the table
                blocks.append(TextBlock(section, section_since, raw, token.map[0] + 1, kind))
                continue
            since = _row_since(header, cells) or since
            fact = header in _FACT_HEADERS
        else:
            stamp = _STAMP.match(content)
            since = stamp.group(1) if stamp else since
        blocks.append(TextBlock(section, since, raw, token.map[0] + 1, kind, fact))
    return SpecText(tuple(blocks), first)


_KIND = {"tr_open": "row", "fence": "code", "code_block": "code", "html_block": "html", "hr": "rule"}


def _cells(tokens: list[Token], start: int) -> tuple[str, ...]:
    """The cells of the first row at or after ``tokens[start]``."""
    out: list[str] = []
    for token in tokens[start:]:
        if token.type == "inline":
            out.append(token.content.strip())
        elif token.type == "tr_close":
            break
    return tuple(out)


def _row_since(header: tuple[str, ...], cells: tuple[str, ...]) -> str:
    """The version a table row applies from: a stamp at the start of a cell (a limit's first, a
    rule's text), or its cell in a ``version``/``since`` column."""
    for cell in cells:
        stamp = _STAMP.match(cell)
        if stamp:
            return stamp.group(1)
    for name in _SINCE_COLUMNS:
        if name in header and header.index(name) < len(cells):
            cell = cells[header.index(name)].strip("`")
            if parse_version(cell) is not None:
                return cell
    return ""
