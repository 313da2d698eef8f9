"""Facts about a blob's JSON text that its parsed value no longer shows: repeated member names.

A parser keeps one value per name, so whether a name is repeated (SPEC 2.1 ``DUPLICATE_KEYS``:
writers MUST NOT, a reader MAY reject) is read from the text, once, here: the reader side
accepts the ``DUPLICATE_KEYS`` rejection of any vector whose text repeats a name, the writer
side fails a written blob that repeats one.
"""

from __future__ import annotations

import json
from typing import Any

from refitwire.wire import pointer

__all__ = ["first_repeated_name"]


class _Pairs(list[tuple[str, Any]]):
    """An object's members as written, names repeated or not."""


def first_repeated_name(blob: bytes) -> str | None:
    """The pointer of the first repeated member name in document order (SPEC 2.7 step 1: where
    it first appears), or None when no object repeats one or the text is not JSON."""
    try:
        tree = json.loads(blob, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):  # not JSON (or deeper than Python parses): nothing to say
        return None
    return _first(tree, ())


def _first(node: Any, at: tuple[str | int, ...]) -> str | None:
    if isinstance(node, _Pairs):
        names = [name for name, _ in node]
        seen: set[str] = set()
        for name, value in node:
            if name in seen:
                continue
            seen.add(name)
            if names.count(name) > 1:  # its first occurrence precedes everything inside it
                return pointer(*at, name)
            found = _first(value, (*at, name))
            if found is not None:
                return found
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found = _first(item, (*at, i))
            if found is not None:
                return found
    return None
