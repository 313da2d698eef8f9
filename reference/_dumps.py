"""A blob's bytes exactly as ``json.dumps`` with Python's defaults writes them, the table through
orjson where that is sure to give the same bytes (a table at the limit is ~10^6 values)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import orjson
from refitwire._models import table_levels
from refitwire._wire import NO_CONST, Registry, WireModel

try:  # the regex parser, to read which characters a pattern allows (sre_parse before Python 3.11)
    from re import _parser as re_parser
except ImportError:  # pragma: no cover
    import sre_parse as re_parser

__all__ = ["dumps"]


def dumps(document: dict[str, Any], registry: Registry) -> bytes:
    # Python's defaults on purpose: ", " and ": " separators, ASCII escapes, insertion order.
    tensors = document.get("tensors")
    table = (
        _compact_table(tensors, _free_text(registry.newest_model())) if isinstance(tensors, list) else None
    )
    if table is None:
        return json.dumps(document).encode("ascii")
    # The envelope through json.dumps, the table through orjson, spliced at "tensors".
    keys = list(document)
    at = keys.index("tensors")
    head = json.dumps({k: document[k] for k in keys[:at]})[:-1]
    tail = json.dumps({k: document[k] for k in keys[at + 1 :]})[1:]
    return b"".join((
        head.encode("ascii"), b', "tensors": ' if at else b'"tensors": ', table,
        b", " + tail.encode("ascii") if len(tail) > 1 else b"}",
    ))  # fmt: skip


_UNSAFE = (",", ":", '"', "\\")


@functools.cache
def _free_text(model: WireModel) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """Per table level (a tensor, a shard): the string members whose characters the schema
    does not pin to safe ones (:func:`_pinned_safe`), and the members that may hold strings
    deeper (arrays of strings, objects, levels of their own: a later schema's, say); in a
    registry's newest model (every member its models have), kept per model."""
    tensor_level, shard_level = table_levels(model)
    found = []
    for level in (model.level(*tensor_level), model.level(*shard_level)):
        scalars, deep = [], []
        for m in level.members:
            if m.child == shard_level or m.const is not NO_CONST:
                continue
            if m.types == ("string",):
                if not _pinned_safe(m.pattern):
                    scalars.append(m.name)
            elif not set(m.types) <= _NO_TEXT or (m.items is not None and not set(m.items.types) <= _NO_TEXT):
                deep.append(m.name)
        found.append((tuple(scalars), tuple(deep)))
    return tuple(found)


_NO_TEXT = {"integer", "number", "boolean", "array"}  # an array's items are looked at apart


def _pinned_safe(pattern: str | None) -> bool:
    """Whether every string matching ``pattern`` is printable ASCII without ``_UNSAFE``: an
    anchored pattern built only of literals, ranges and repeats of them (``^[0-9a-f]{32}$``).
    Anything else (no anchors, ``.``, a negated class, ``\\w``, an alternative outside the
    anchors) counts as free text, whose values are checked: slower, never wrong."""
    if pattern is None:
        return False
    try:
        parsed = list(re_parser.parse(pattern))
    except re.error:
        return False
    edges = parsed[:1] + parsed[-1:]
    if [(op, arg) for op, arg in edges] != [
        (re_parser.AT, re_parser.AT_BEGINNING),
        (re_parser.AT, re_parser.AT_END),
    ]:
        return False
    return _only_safe(parsed[1:-1])


def _only_safe(items: Any) -> bool:
    for op, arg in items:
        if op is re_parser.LITERAL:
            if not _safe_char(arg):
                return False
        elif op is re_parser.IN:
            for kind, value in arg:
                if kind is re_parser.LITERAL and _safe_char(value):
                    continue
                if kind is re_parser.RANGE and all(_safe_char(c) for c in range(value[0], value[1] + 1)):
                    continue
                return False  # a negated class, a category (\\w, \\d: Unicode), anything else
        elif op in (re_parser.MAX_REPEAT, re_parser.MIN_REPEAT):
            if not _only_safe(arg[2]):
                return False
        elif op is re_parser.SUBPATTERN:
            if not _only_safe(arg[3]):
                return False
        elif op is re_parser.BRANCH:  # inside the anchors (one around the whole fails their test)
            if not all(map(_only_safe, arg[1])):
                return False
        else:
            return False  # ANY, anchors inside, back-references, ...
    return True


def _safe_char(code: int) -> bool:
    return 0x20 <= code < 0x7F and chr(code) not in _UNSAFE


def _strings_in(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (names of members included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for name, inner in value.items():
            yield name
            yield from _strings_in(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _strings_in(inner)


def _compact_table(
    entries: list[Any], free_text: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
) -> bytes | None:
    """The ``tensors`` array in exactly ``json.dumps``'s bytes, or None when that is not sure.

    orjson writes compact JSON (",", ":") in insertion order with the same integer text.
    Widening every "," and ":" gives ``json.dumps``'s default separators exactly when no
    string holds a "," or ":", and the escaping agrees when every string is printable
    ASCII without '"' or a backslash. That is checked on every string the schema does not
    pin to safe characters (:func:`_free_text`: tensor and agent names; ``dtype`` and
    ``digest`` are pinned by their patterns, which the writer has already checked). Anything
    else takes the plain ``json.dumps`` path.
    """
    try:
        (tensor_text, tensor_deep), (shard_text, shard_deep) = free_text
        joined_texts = [
            *("".join([entry.get(m) or "" for entry in entries]) for m in tensor_text),
            *(
                "".join({shard.get(m) or "" for entry in entries for shard in entry["shards"]})
                for m in shard_text
            ),
        ]
        if tensor_deep or shard_deep:
            joined_texts.append("".join(_strings_in(
                [[entry.get(m) for m in tensor_deep] for entry in entries]
                + [[shard.get(m) for m in shard_deep] for entry in entries for shard in entry["shards"]]
            )))  # fmt: skip
        for joined in joined_texts:
            if not (joined.isascii() and joined.isprintable()) or any(c in joined for c in _UNSAFE):
                return None
        compact = orjson.dumps(entries)
    except (KeyError, TypeError, orjson.JSONEncodeError):
        return None
    return compact.replace(b",", b", ").replace(b":", b": ")
