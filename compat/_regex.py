"""A string that takes every optional part of a pattern, read from the pattern's own syntax tree.

The simplest string a pattern matches (``_values._match``) leaves out every optional part, so a
value built from it never shows the part: ``^(torch\\.)?[a-z]+$`` gives ``a``, and no case could
tell a literal ``\\.`` from an unescaped ``.`` that also takes ``torch-``. Here each repeat is
taken at least once, each group entered and each branch's first alternative followed, through
Python's parser of the pattern (``re._parser``: the standard library's, not a copy; a pattern
it does not read, ECMA-262's ``\\p{L}`` say, has no such string). The string is checked
against the pattern as JSON Schema reads it (ECMA-262, jsonschema-rs) before it is used.
"""

from __future__ import annotations

import functools
import re
from re import _constants as c
from re import _parser
from typing import Any

import jsonschema_rs

__all__ = ["taking_every_part"]

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
