"""SPEC.md's rule tables, read deterministically: the one source of the rules, their limits and dtype sizes.

SPEC.md stays the one place a rule is written; this module reads its tables (never a copy):

* the rule tables of section 2 (``| `ID` | rule | pointer |``): each rule's ID, section,
  the version it applies from (a leading ``(1.1.0)`` in its text, else the first version),
  its RFC 2119 keywords, its pointer, the `` `terms` `` it names and the numbers it states;
* the limits table of section 5 (``| limit | a reader | rule past it | tier of the cases |``):
  a limit with a number (``blob size 64 MiB``, ``nesting depth 1024``) is a value, and a
  row may start with ``(1.3.0)`` to set the limit from that version on;
* the dtype sizes of section 4 (``Known dtype sizes (`ELSIZE_DTYPE`): 1 byte: `bool`, ...``);
* the versions table of section 3.

A row of one of these tables that does not have its table's shape is a :class:`SpecError`
naming the line, never skipped: a rule the parser cannot read would be a rule nobody checks.

What a released version is locked by (``schema/index.json`` ``spec_rules``) is
:meth:`SpecRules.facts` of that version: everything above except the wording, so a typo
fixed in a rule's prose changes no lock while a changed keyword, number, term or pointer does.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from refitwire.wire import SchemaFolderError, parse_version, version_key

__all__ = ["LEVELS", "SpecError", "SpecLimit", "SpecRule", "SpecRules", "parse_spec"]

#: RFC 2119 keywords, weakest first; NOT forms count as their positive keyword's strength.
LEVELS = ("MAY", "SHOULD", "MUST")
_KEYWORD = re.compile(r"\b(MUST NOT|MUST|SHOULD NOT|SHOULD|MAY)\b")
_SINCE = re.compile(r"^\((\d+\.\d+\.\d+)\)\s*")
_TERM = re.compile(r"`([^`]+)`")
_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "byte": 1, "bytes": 1}
_NUMBER = re.compile(r"(?<![\w.])(\d+)\^(\d+)|(?<![\w.^])(\d+(?:\.\d+)*)(?:\s+(KiB|MiB|GiB|bytes?)\b)?")
_LIMIT = re.compile(r"^(?P<name>[a-z][a-z ]*?) (?P<number>\d+)(?: (?P<unit>KiB|MiB|GiB|bytes?))?\b")
_DTYPES = re.compile(r"Known dtype sizes \(`ELSIZE_DTYPE`\):(?P<body>.*?)(?:\n\n|$)", re.S)
_DTYPE_GROUP = re.compile(r"(\d+)(?: bytes?)?: ((?:`[a-z0-9_]+`(?:,\s*)?)+)")
_RULE_HEADER = ("ID", "rule", "pointer")
_LIMIT_HEADER = ("limit", "a reader", "rule past it", "tier of the cases")
_VERSION_HEADER = ("version", "adds")


class SpecError(SchemaFolderError):
    """SPEC.md has a table row (or a dtype list) this parser cannot read; the message names the line."""


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

    @property
    def level(self) -> int:
        return strength(self.keywords)

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
    dtype_sizes: dict[str, int] = field(default_factory=dict)

    def rules_of(self, version: str) -> dict[str, SpecRule]:
        """The rules that apply to ``version`` by ID (a rule applies from its ``since`` on)."""
        key = version_key(version)
        return {r.id: r for r in self.rules if version_key(r.since) <= key}

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

    def facts(self, version: str) -> dict[str, Any]:
        """What ``version``'s lock covers: every rule, limit and dtype size that applies, without prose."""
        return {
            "rules": {i: r.facts() for i, r in sorted(self.rules_of(version).items())},
            "limits": {n: x.facts() for n, x in sorted(self.limits_of(version).items())},
            "dtype_sizes": dict(sorted(self.dtype_sizes.items())),
        }

    def lock(self, version: str) -> str:
        """sha256 of :meth:`facts` as canonical JSON: what ``schema/index.json`` records per release."""
        canonical = json.dumps(self.facts(version), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_spec(text: str) -> SpecRules:
    """The tables of a SPEC.md; SpecError (with the line number) for a row that has not its table's shape."""
    lines = text.splitlines()
    rules: list[SpecRule] = []
    limits: list[SpecLimit] = []
    versions: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        if not _is_row(line):
            i += 1
            continue
        header = tuple(_cells(line, i + 1))
        start = i + 2  # after the |---| line
        end = start
        while end < len(lines) and _is_row(lines[end]):
            end += 1
        rows = [(n + 1, lines[n]) for n in range(start, end)]
        if header == _RULE_HEADER:
            rules += [_rule(n, row, section) for n, row in rows]
        elif header == _LIMIT_HEADER:
            limits += [_limit(n, row) for n, row in rows]
        elif header == _VERSION_HEADER:
            versions += [_version(n, row) for n, row in rows]
        i = end
    first = versions[0] if versions else "1.0.0"
    rules = [r if r.since else _restamp(r, first) for r in rules]
    limits = [x if x.since else _restamp(x, first) for x in limits]
    _unique([r.id for r in rules], "rule ID")
    _unique([(x.name, x.since) for x in limits], "limit")
    return SpecRules(tuple(versions), tuple(rules), tuple(limits), _dtype_sizes(text))


def _restamp(item: Any, version: str) -> Any:
    from dataclasses import replace

    return replace(item, since=version)


def _unique(keys: list[Any], what: str) -> None:
    seen: set[Any] = set()
    for key in keys:
        if key in seen:
            raise SpecError(f"SPEC.md: the {what} {key!r} is stated twice")
        seen.add(key)


def _is_row(line: str) -> bool:
    return line.startswith("|") and line.rstrip().endswith("|")


def _cells(line: str, number: int) -> list[str]:
    """The cells of a table row; a ``|`` inside backticks or escaped as ``\\|`` stays in its cell."""
    cells, current, in_code, escaped = [], "", False, False
    for ch in line.strip()[1:]:
        if escaped:
            current, escaped = current + ch, False
        elif ch == "\\":
            current, escaped = current + ch, True
        elif ch == "`":
            current, in_code = current + ch, not in_code
        elif ch == "|" and not in_code:
            cells.append(current.strip())
            current = ""
        else:
            current += ch
    if in_code or current.strip():
        raise SpecError(f"SPEC.md line {number}: a table row with an unclosed backtick or no closing '|'")
    return cells


def _rule(number: int, line: str, section: str) -> SpecRule:
    cells = _cells(line, number)
    match = re.fullmatch(r"`([A-Z][A-Z0-9_]*)`", cells[0]) if len(cells) == 3 else None
    if match is None or not cells[1]:
        raise SpecError(
            f"SPEC.md line {number}: a rule row must be | `RULE_ID` | rule | pointer | (got {line.strip()[:80]!r})"
        )
    since, text = _since(cells[1], number)
    return SpecRule(match.group(1), section, since, _keywords(text), cells[2], _terms(text), _numbers(text),
                    text, number)  # fmt: skip


def _limit(number: int, line: str) -> SpecLimit:
    cells = _cells(line, number)
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


def _version(number: int, line: str) -> str:
    cells = _cells(line, number)
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


def _dtype_sizes(text: str) -> dict[str, int]:
    match = _DTYPES.search(text)
    if match is None:
        return {}
    body = " ".join(match.group("body").split())
    sizes: dict[str, int] = {}
    groups = _DTYPE_GROUP.findall(body)
    if not groups:
        raise SpecError("SPEC.md: the dtype sizes (`ELSIZE_DTYPE`) are not 'N bytes: `label`, ...' groups")
    for size, labels in groups:
        for label in _TERM.findall(labels):
            if sizes.setdefault(label, int(size)) != int(size):
                raise SpecError(f"SPEC.md: dtype {label!r} is given two sizes")
    return sizes
