"""Why a case failed, as a grouping key: the rule IDs a message names, the cause of differing bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from refitwire.compat._results import dumps_short
from refitwire.compat.cases import _cases
from refitwire.wire import Registry, join, spec_rules


def named_rules(message: str, registry: Registry) -> list[str]:
    """The SPEC rule IDs a message names, in order (``registry``'s SPEC.md rule tables)."""
    known = {rule.id for rule in spec_rules(registry).rules}
    return [word for word in re.findall(r"[A-Z][A-Z0-9_]+", message) if word in known]


def byte_cause(blob: bytes, expected: bytes) -> str:
    """Why two blobs differ, as a grouping key: one cause at many offsets is one group."""
    if blob.startswith(expected):
        return f"trailing bytes after the blob ({dumps_short(blob[len(expected) : len(expected) + 8])})"
    try:
        got, want = json.loads(blob), json.loads(expected)
    except ValueError:
        return "not the same JSON (the blob does not parse as the reference's does)"
    diff = _cases.first_difference(want, got)
    if diff is not None:
        return f"other values: {diff[0]}"
    if list(_keys(got)) != list(_keys(want)):
        return "members in another order"
    strings = re.compile(rb'"(?:[^"\\]|\\.)*"')
    if strings.sub(b'""', blob) == strings.sub(b'""', expected):
        return "other string escaping (SPEC.md section 2.8)"
    return "other whitespace or separators"


def _keys(value: Any, at: str = "") -> Iterator[str]:
    """Every member's pointer, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield join(at, key)
            yield from _keys(item, join(at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _keys(item, join(at, i))
