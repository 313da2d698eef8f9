"""Strings a pattern matches: the simplest (Hypothesis, kept in the kit's cache), one of a given
length, and one that takes every optional part, read from the pattern's own syntax tree.

The simplest string a pattern matches (:func:`simplest_match`) leaves out every optional part, so a
value built from it never shows the part: ``^(torch\\.)?[a-z]+$`` gives ``a``, and no case could
tell a literal ``\\.`` from an unescaped ``.`` that also takes ``torch-``. Here each repeat is
taken at least once, each group entered and each branch's first alternative followed, through
Python's parser of the pattern (``re._parser``: the standard library's, not a copy; a pattern
it does not read, ECMA-262's ``\\p{L}`` say, has no such string). The string is checked
against the pattern as JSON Schema reads it (ECMA-262, jsonschema-rs) before it is used.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from pathlib import Path
from re import _constants as c
from re import _parser
from typing import Any

import hypothesis
import jsonschema_rs
from refitwire.compat import _hypothesis
from refitwire.compat._cache import cache_home, content_key, write_whole
from refitwire.compat._hypothesis import deterministic, kit_draws
from refitwire.compat.keywords._context import UnhandledKeyword

__all__ = ["pattern_string", "simplest_match", "taking_every_part"]

#: Characters a string is grown by.
_ALPHABET = "a0zZ9_-.!é"
#: Characters tried for a negated class; each category's stand-in and its own syntax.
_TRIED = "aA0_- ."
_CATEGORIES = {c.CATEGORY_DIGIT: ("0", r"\d"), c.CATEGORY_NOT_DIGIT: ("a", r"\D"), c.CATEGORY_WORD: ("a", r"\w"),
               c.CATEGORY_NOT_WORD: ("-", r"\W"), c.CATEGORY_SPACE: (" ", r"\s"), c.CATEGORY_NOT_SPACE: ("a", r"\S")}  # fmt: skip


class _Unread(Exception):
    """A construct this reading does not follow (a back reference, a conditional group)."""


@functools.cache
def taking_every_part(pattern: str) -> str | None:
    """A string ``pattern`` matches that takes each optional part once, or None."""
    try:
        found = _string(_parser.parse(pattern))
    except (re.error, _Unread, RecursionError):
        return None
    matches = jsonschema_rs.validator_for({"type": "string", "pattern": pattern}).is_valid
    return found if matches(found) else None


def _string(items: Any) -> str:
    out = []
    for op, arg in items:
        if op is c.LITERAL:
            out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            out.append(next(ch for ch in _TRIED if ord(ch) != arg))
        elif op is c.ANY:
            out.append("a")
        elif op is c.IN:
            out.append(_in(arg))
        elif op is c.BRANCH:
            out.append(_string(arg[1][0]))
        elif op is c.SUBPATTERN:
            out.append(_string(arg[-1]))
        elif op is c.ATOMIC_GROUP:
            out.append(_string(arg))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, _high, inner = arg
            out.append(_string(inner) * max(low, 1))
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # anchors and lookarounds consume nothing; the final check judges them
        else:
            raise _Unread(op)
    return "".join(out)


def _in(items: Any) -> str:
    """A character of a class: its first member, or for a negated one the first tried it leaves out."""
    if items and items[0][0] is c.NEGATE:
        return next((ch for ch in _TRIED if not any(_holds(item, ch) for item in items[1:])), "a")
    op, arg = items[0]
    if op is c.LITERAL:
        return chr(arg)
    if op is c.RANGE:
        return chr(arg[0])
    if op is c.CATEGORY and arg in _CATEGORIES:
        return _CATEGORIES[arg][0]
    raise _Unread(op)


def _holds(item: Any, ch: str) -> bool:
    op, arg = item
    if op is c.LITERAL:
        return bool(ord(ch) == arg)
    if op is c.RANGE:
        return bool(arg[0] <= ord(ch) <= arg[1])
    if op is c.CATEGORY and arg in _CATEGORIES:
        return re.fullmatch(_CATEGORIES[arg][1], ch) is not None
    raise _Unread(op)


@functools.cache
def pattern_string(pattern: str | None, length: int, longest: int | None) -> str | None:
    """A string of ``length`` characters ``pattern`` allows (or the nearest longer one, up to
    ``longest``): the simplest match, grown by repeating one character in one place."""
    if pattern is None:
        return (_ALPHABET[:1] * length) if length else ""
    check = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    seed = simplest_match(pattern)
    if len(seed) == length or (len(seed) > length and check.is_valid(seed[:length]) and length == 0):
        return seed
    if len(seed) > length:
        return seed if longest is None or len(seed) <= longest else None
    for at in range(len(seed), -1, -1):  # grow by repeating one character in one place
        for char in dict.fromkeys(seed + _ALPHABET):
            grown = seed[:at] + char * (length - len(seed)) + seed[at:]
            if check.is_valid(grown):
                return grown
    return None


@functools.cache
def simplest_match(pattern: str) -> str:
    """The simplest string matching ``pattern`` (Hypothesis, deterministic). Shrinking to it
    takes about half a second a pattern, in every process that needs one, so each is kept in
    the kit's cache folder, keyed by the pattern, the Hypothesis version and the code that
    searches (this module and the kit's settings): a changed search finds it again."""
    key = content_key(hypothesis.__version__, pattern, code=[Path(__file__), _hypothesis])
    kept = cache_home() / "patterns" / f"{key}.json"
    check = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    try:
        found = json.loads(kept.read_bytes())
        if isinstance(found, str) and check.is_valid(found):
            return found
    except (OSError, ValueError):
        pass
    # no explain phase: it takes seconds a pattern
    quick = hypothesis.settings(deterministic(), phases=(hypothesis.Phase.generate, hypothesis.Phase.shrink))
    try:
        re.compile(pattern)
    except re.error:  # ECMA-262 that Python's re does not read (\p{L}): short strings, tried in turn
        found = _search(check)
    else:
        with kit_draws():
            strings = hypothesis.strategies.from_regex(pattern)
            found = hypothesis.find(strings, check.is_valid, settings=quick)
    write_whole(kept, json.dumps(found).encode())
    return found


def _search(check: Any) -> str:
    """The first string of up to three characters ``check`` accepts, from letters, digits and
    marks of several scripts; UnhandledKeyword (``pattern``) when none is."""
    chars = "a0zZ9_-.!é日Ωж "
    for length in range(4):
        for candidate in map("".join, itertools.product(chars, repeat=length)):
            if check.is_valid(candidate):
                return candidate
    raise UnhandledKeyword("pattern", "no short string matches it, and Python's re cannot read it")
