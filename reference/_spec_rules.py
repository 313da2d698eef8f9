"""SPEC.md's rule tables, read deterministically: the one source of the rules, their limits and dtype sizes.

SPEC.md stays the one place a rule is written; this module reads its tables (never a copy):

* the rule tables of section 2 (``| `ID` | rule | pointer |``): each rule's ID, section,
  the version it applies from (a leading ``(1.1.0)`` in its text, else the first version; a
  second row of an ID stated from a later version changes the rule from there on),
  its RFC 2119 keywords, its pointer, the `` `terms` `` it names and the numbers it states;
* the limits table of section 5 (``| limit | a reader | rule past it | tier of the cases |``):
  a limit with a number (``blob size 64 MiB``, ``nesting depth 1024``) is a value, and a
  row may start with ``(1.3.0)`` to set the limit from that version on;
* the dtype sizes of section 4: the ``N bytes: `label`, ...`` groups of every paragraph that
  names `` `ELSIZE_DTYPE` `` (``Known dtype sizes (`ELSIZE_DTYPE`): 1 byte: `bool`, ...``); a
  paragraph starting with ``(1.3.0)`` lists its labels from that version on;
* the versions table of section 3.

The tables are read as GitHub renders them (GFM, through markdown-it-py), so what a reviewer
sees is what is checked: a row without outer pipes or indented is a row, a table inside a
code block is none. A row of one of these tables that does not have its table's shape, a
row with more cells than its header, a table of rule rows under another header, and a rule
row outside any table are each a :class:`SpecError` naming the line, never skipped: a rule
the parser cannot read would be a rule nobody checks.

What a released version is locked by (``schema/index.json`` ``spec_rules``) is
:meth:`SpecRules.facts` of that version: everything above except the wording, so a typo
fixed in a rule's prose changes no lock while a changed keyword, number, term or pointer does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from refitwire._errors import SpecError
from refitwire._wire import parse_version, version_key

__all__ = ["LEVELS", "SpecError", "SpecLimit", "SpecRule", "SpecRules", "parse_spec"]

#: RFC 2119 keywords, weakest first; NOT forms count as their positive keyword's strength.
LEVELS = ("MAY", "SHOULD", "MUST")
_KEYWORD = re.compile(r"\b(MUST NOT|MUST|SHOULD NOT|SHOULD|MAY)\b")
_SINCE = re.compile(r"^\((\d+\.\d+\.\d+)\)\s*")
_TERM = re.compile(r"`([^`]+)`")
_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "byte": 1, "bytes": 1}
_NUMBER = re.compile(r"(?<![\w.])(\d+)\^(\d+)|(?<![\w.^])(\d+(?:\.\d+)*)(?:\s+(KiB|MiB|GiB|bytes?)\b)?")
_INTERVAL = re.compile(r"([\[(])\s*-?\d[\d^.]*\s*,\s*-?\d[\d^.]*\s*([\])])")
_LIMIT = re.compile(r"^(?P<name>[a-z][a-z ]*?) (?P<number>\d+)(?: (?P<unit>KiB|MiB|GiB|bytes?))?\b")
_DTYPE_RULE = "`ELSIZE_DTYPE`"
_DTYPE_GROUP = re.compile(r"(\d+)(?: bytes?)?: ((?:`[a-z0-9_]+`(?:,\s*)?)+)")
_RULE_HEADER = ("ID", "rule", "pointer")
_RULE_CELL = re.compile(r"`([A-Z][A-Z0-9_]*)`")
_RULE_LINE = re.compile(r"\s*\|?\s*`[A-Z][A-Z0-9_]*`\s*\|")  # a rule row's start, in a paragraph
_MARKDOWN = MarkdownIt("commonmark").enable("table")
_LIMIT_HEADER = ("limit", "a reader", "rule past it", "tier of the cases")
_VERSION_HEADER = ("version", "adds")
#: The pointer cell of a rule that binds the writer alone (section 2.4): it names no place in a
#: blob, so no reader rejects a blob for it.
_WRITER_ALONE = "none: a rule of the writer"


def strength(keywords: tuple[str, ...]) -> int:
    """The strongest keyword's strength (index in LEVELS), -1 for none."""
    return max((LEVELS.index(k.split()[0]) for k in keywords), default=-1)


@dataclass(frozen=True)
class SpecRule:
    id: str
    section: str
    since: str
    keywords: tuple[str, ...]  # in the order written, repeats kept
    pointer: str
    terms: tuple[str, ...]  # the backticked terms, in order
    numbers: tuple[str, ...]  # numbers outside backticks, normalized (64 MiB -> 67108864, 2^64 -> its value)
    text: str
    line: int
    #: each interval's brackets in order (``[0, 2^63)`` -> ``"[)"``); compared by the gate, not
    #: part of the lock, whose facts were fixed before it was read
    ends: tuple[str, ...] = ()

    @property
    def level(self) -> int:
        return strength(self.keywords)

    @property
    def advises_writers(self) -> bool:
        """Whether the rule only tells writers what they SHOULD (or MAY) do: its row binds the
        writer alone (its pointer cell: no reader rejects a blob for it) and states no MUST, so
        its cases are Recommended (section 7), never a reason to reject a blob."""
        return self.pointer == _WRITER_ALONE and self.level < LEVELS.index("MUST")

    def facts(self) -> dict[str, Any]:
        return {"since": self.since, "keywords": list(self.keywords), "pointer": self.pointer,
                "terms": list(self.terms), "numbers": list(self.numbers)}  # fmt: skip


@dataclass(frozen=True)
class SpecLimit:
    name: str  # "blob size"; a limit without a number is named by its whole cell
    since: str
    value: int | None  # in the unit's base (bytes for KiB/MiB/GiB), None when the limit states no number
    stated: str  # the value as written: "64 MiB"
    rule: str  # the rule past it, as written
    keywords: tuple[str, ...]  # of the reader column
    tiers: tuple[str, ...]  # "Required"/"Recommended" as the tier column names them, in order
    text: str
    line: int

    @property
    def level(self) -> int:
        return strength(self.keywords)

    def facts(self) -> dict[str, Any]:
        return {"since": self.since, "value": self.value, "rule": self.rule,
                "keywords": list(self.keywords), "tiers": list(self.tiers)}  # fmt: skip


@dataclass(frozen=True)
class SpecRules:
    """Everything the tables of one SPEC.md say, for every version."""

    versions: tuple[str, ...]
    rules: tuple[SpecRule, ...]
    limits: tuple[SpecLimit, ...]
    #: every label any version lists, with its size (a label is never given two sizes)
    dtype_sizes: dict[str, int] = field(default_factory=dict)
    #: the version each label is listed from (its paragraph's ``(1.3.0)``, else the first version)
    dtype_since: dict[str, str] = field(default_factory=dict)

    def rules_of(self, version: str) -> dict[str, SpecRule]:
        """The rules that apply to ``version`` by ID: each rule's row with the latest ``since``
        not after it (a rule applies from its ``since`` on, and a later row of the same ID,
        ``(1.3.0) ...``, states it anew from that version, leaving the earlier versions' row as
        released)."""
        key = version_key(version)
        ordered = sorted(self.rules, key=lambda r: version_key(r.since))
        return {r.id: r for r in ordered if version_key(r.since) <= key}

    def advises_writers(self, text: str, version: str) -> bool:
        """Whether ``text`` (a paragraph of ``version``) only tells writers what they SHOULD or MAY
        do: it states no MUST, and every rule it names (one at least) only advises writers
        (:attr:`SpecRule.advises_writers`, read from that rule's row). A paragraph naming no rule
        says nothing here about whom it binds."""
        rules = self.rules_of(version)
        named = [rules[term] for term in _terms(text) if term in rules]
        return (
            bool(named)
            and strength(_keywords(text)) < LEVELS.index("MUST")
            and all(rule.pointer == _WRITER_ALONE for rule in named)
        )

    def limits_of(self, version: str) -> dict[str, SpecLimit]:
        """Each limit's row for ``version``: the one with the latest ``since`` not after it."""
        key, out = version_key(version), {}
        for limit in sorted(self.limits, key=lambda x: version_key(x.since)):
            if version_key(limit.since) <= key:
                out[limit.name] = limit
        return out

    def limit(self, name: str, version: str) -> int:
        """The number of limit ``name`` for ``version``; KeyError when SPEC states none."""
        value = self.limits_of(version)[name].value
        if value is None:
            raise KeyError(f"SPEC.md's limit {name!r} states no number")
        return value

    def dtype_sizes_of(self, version: str) -> dict[str, int]:
        """The dtype sizes a reader of ``version`` holds ``elsize`` to: the labels listed from
        ``version`` or before (a later version lists a new dtype in a paragraph of its own)."""
        key = version_key(version)
        return {
            label: size
            for label, size in self.dtype_sizes.items()
            if version_key(self.dtype_since.get(label) or "0.0.0") <= key
        }

    def facts(self, version: str) -> dict[str, Any]:
        """What ``version``'s lock covers: every rule, limit and dtype size that applies, without prose."""
        return {
            "rules": {i: r.facts() for i, r in sorted(self.rules_of(version).items())},
            "limits": {n: x.facts() for n, x in sorted(self.limits_of(version).items())},
            "dtype_sizes": dict(sorted(self.dtype_sizes_of(version).items())),
        }

    def lock(self, version: str) -> str:
        """sha256 of :meth:`facts` as canonical JSON: what ``schema/index.json`` records per release."""
        canonical = json.dumps(self.facts(version), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_spec(text: str) -> SpecRules:
    """The tables of a SPEC.md; SpecError (with the line number) for a row that has not its table's shape."""
    rules: list[SpecRule] = []
    limits: list[SpecLimit] = []
    versions: list[str] = []
    tokens = _MARKDOWN.parse(text)
    for table in _tables(tokens, text.splitlines()):
        if table.header == _RULE_HEADER:
            rules += [_rule(n, cells, table.section) for n, cells in table.rows]
        elif table.header == _LIMIT_HEADER:
            limits += [_limit(n, cells) for n, cells in table.rows]
        elif table.header == _VERSION_HEADER:
            versions += [_version(n, cells) for n, cells in table.rows]
        elif table.header[:1] == _RULE_HEADER[:1] or any(_RULE_CELL.fullmatch(c[0]) for _, c in table.rows):
            raise SpecError(
                f"SPEC.md line {table.line}: a table of rules must have the header "
                f"| {' | '.join(_RULE_HEADER)} | (got | {' | '.join(table.header)} |)"
            )
    first = versions[0] if versions else "1.0.0"
    rules = [r if r.since else _restamp(r, first) for r in rules]
    limits = [x if x.since else _restamp(x, first) for x in limits]
    _unique([((r.id, r.since), r.line) for r in rules], "rule")
    _unique([((x.name, x.since), x.line) for x in limits], "limit")
    sizes, since = _dtype_sizes(tokens)
    since = {label: stamp or first for label, stamp in since.items()}
    return SpecRules(tuple(versions), tuple(rules), tuple(limits), sizes, since)


@dataclass(frozen=True)
class _Table:
    section: str  # the heading above it
    line: int  # of its header row
    header: tuple[str, ...]
    rows: list[tuple[int, list[str]]]  # (line, cells)


def _tables(tokens: list[Token], lines: list[str]) -> Iterator[_Table]:
    """Every table of a SPEC.md (its markdown-it ``tokens`` and ``lines``) exactly as GitHub
    renders it (GFM, read by markdown-it-py rather than by hand: a row without outer pipes,
    indented, or missing its closing pipe is still a row, and nothing in a code block is one),
    with the section heading above each. A line shaped like a rule row outside any table (a
    table whose delimiter row was lost) is a SpecError."""
    section = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            section = tokens[i + 1].content.strip()
        elif token.type == "inline" and token.map and tokens[i - 1].type == "paragraph_open":
            for n, text in enumerate(token.content.splitlines(), token.map[0] + 1):
                if _RULE_LINE.match(text):
                    raise SpecError(
                        f"SPEC.md line {n}: a rule row outside a table (no | --- | line above it?)"
                    )
        elif token.type == "table_open":
            (top, header), *rows = _rows(tokens, i)
            for number, _ in rows:
                _whole(lines[number - 1], len(header), number)
            yield _Table(section, top, tuple(header), rows)


def _rows(tokens: list[Token], start: int) -> list[tuple[int, list[str]]]:
    """The (line, cells) of each row of the table opened at ``tokens[start]``, its header first."""
    rows: list[tuple[int, list[str]]] = []
    for token in tokens[start:]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append(((token.map or [0])[0] + 1, []))
        elif token.type == "inline":
            if token.content.count("`") % 2:
                raise SpecError(f"SPEC.md line {rows[-1][0]}: a table cell with an unclosed backtick")
            rows[-1][1].append(token.content.strip())
    return rows


def _whole(line: str, width: int, number: int) -> None:
    """A row with more cells than its header: GFM drops the rest unseen, so it is an error here."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    if len(re.split(r"(?<!\\)\|", body)) > width:
        raise SpecError(f"SPEC.md line {number}: a table row with more cells than its header")


def _restamp(item: Any, version: str) -> Any:
    from dataclasses import replace

    return replace(item, since=version)


def _unique(keys: list[tuple[Any, int]], what: str) -> None:
    seen: dict[Any, int] = {}
    for key, line in keys:
        if key in seen:
            raise SpecError(
                f"SPEC.md line {line}: the {what} {key!r} is stated twice (first on line {seen[key]})"
            )
        seen[key] = line


def _rule(number: int, cells: list[str], section: str) -> SpecRule:
    match = _RULE_CELL.fullmatch(cells[0]) if len(cells) == 3 else None
    if match is None or not all(cells):
        raise SpecError(
            f"SPEC.md line {number}: a rule row must be | `RULE_ID` | rule | pointer | (got {' | '.join(cells)[:80]!r})"
        )
    since, text = _since(cells[1], number)
    return SpecRule(match.group(1), section, since, _keywords(text), cells[2], _terms(text), _numbers(text),
                    text, number, _ends(text))  # fmt: skip


def _limit(number: int, cells: list[str]) -> SpecLimit:
    if len(cells) != 4 or not all(cells):
        raise SpecError(
            f"SPEC.md line {number}: a limit row must be | limit | a reader | rule past it | tier of the cases |"
        )
    since, text = _since(cells[0], number)
    match = _LIMIT.match(text)
    if match:
        name, unit = match.group("name"), match.group("unit") or ""
        value = int(match.group("number")) * _UNITS.get(unit, 1)
        stated = f"{match.group('number')} {unit}".strip()
    else:
        name, value, stated = text, None, ""
    tiers = tuple(re.findall(r"\b(Required|Recommended)\b", cells[3]))
    return SpecLimit(name, since, value, stated, cells[2], _keywords(cells[1]), tiers,
                     " | ".join(cells), number)  # fmt: skip


def _version(number: int, cells: list[str]) -> str:
    if len(cells) != 2 or parse_version(cells[0]) is None:
        raise SpecError(f"SPEC.md line {number}: a version row must be | MAJOR.MINOR.PATCH | what it adds |")
    return cells[0]


def _since(text: str, number: int) -> tuple[str, str]:
    match = _SINCE.match(text)
    if match is None:
        return "", text
    if parse_version(match.group(1)) is None:  # pragma: no cover - the pattern only takes N.N.N
        raise SpecError(f"SPEC.md line {number}: {match.group(1)!r} is not a version")
    return match.group(1), text[match.end() :]


def _keywords(text: str) -> tuple[str, ...]:
    return tuple(_KEYWORD.findall(_TERM.sub(" ", text)))


def _terms(text: str) -> tuple[str, ...]:
    return tuple(_TERM.findall(text))


def _numbers(text: str) -> tuple[str, ...]:
    out = []
    for power_base, power, plain, unit in _NUMBER.findall(_TERM.sub(" ", text)):
        if power_base:
            out.append(str(int(power_base) ** int(power)))
        elif unit:
            out.append(str(int(plain) * _UNITS[unit]))
        else:
            out.append(plain)
    return tuple(out)


def _ends(text: str) -> tuple[str, ...]:
    """The brackets of each interval a rule states (``[1, 64]``, ``[0, 2^63)``), in order."""
    return tuple(o + c for o, c in _INTERVAL.findall(_TERM.sub(" ", text)))


def _dtype_sizes(tokens: list[Token]) -> tuple[dict[str, int], dict[str, str]]:
    """The dtype sizes: every ``N bytes: `label`, ...`` group of every paragraph that names
    `` `ELSIZE_DTYPE` ``, however it is worded (a second paragraph lists more), and the version
    each label is listed from: a paragraph that starts ``(1.3.0)`` lists its labels from that
    version on, as a rule or limit row does ("" for the first version)."""
    sizes: dict[str, int] = {}
    since: dict[str, str] = {}
    for i, token in enumerate(tokens):
        if (
            token.type != "inline"
            or tokens[i - 1].type != "paragraph_open"
            or _DTYPE_RULE not in token.content
        ):
            continue
        line = token.map[0] + 1 if token.map else 0
        stamp, text = _since(" ".join(token.content.split()), line)
        for size, labels in _DTYPE_GROUP.findall(text):
            for label in _TERM.findall(labels):
                if sizes.setdefault(label, int(size)) != int(size):
                    raise SpecError(f"SPEC.md line {line}: dtype {label!r} is given two sizes")
                if since.setdefault(label, stamp) != stamp:
                    raise SpecError(f"SPEC.md line {line}: dtype {label!r} is listed twice")
    return sizes, since
