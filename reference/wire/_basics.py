"""The small facts every part of the kit shares: JSON pointers, spec versions and ``$ref``.

Each has one home here. Pointers follow RFC 6901 (``~0``/``~1`` escaping; the whole
document is ``""``); versions are ``MAJOR.MINOR.PATCH`` and compare as tuples; references
are resolved by ``referencing`` (the resolver jsonschema uses), so how a schema file is
laid out (which ``$defs``, inlined or not) never matters to a caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

__all__ = [
    "SEMVER",
    "RefError",
    "escape",
    "general_pointer",
    "join",
    "parse_version",
    "pointer",
    "resolve_refs",
    "show_pointer",
    "tokens",
    "unescape",
    "version_key",
]

# -- JSON pointers (RFC 6901) -----------------------------------------------------------------


def escape(token: str | int) -> str:
    """One reference token of a JSON pointer."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def pointer(*parts: str | int) -> str:
    """The pointer of a path; ``pointer()`` is the whole document, ``""``."""
    return "".join("/" + escape(p) for p in parts)


def join(at: str, *more: str | int) -> str:
    """``at`` extended by more tokens."""
    return at + pointer(*more)


def general_pointer(at: str) -> str:
    """``at`` with every array index written ``*``: one place of the wire, whatever the indices
    (``/tensors/3/shards/0/addr`` -> ``/tensors/*/shards/*/addr``)."""
    return pointer(*("*" if t.isdigit() else t for t in tokens(at)))


def show_pointer(at: str | None) -> str:
    """A pointer as text for people: the root is shown as ``""`` (``/`` is the member named "")."""
    return at or '""'


def tokens(at: str) -> list[str]:
    """The unescaped tokens of a pointer (``""`` has none)."""
    return [unescape(t) for t in at.split("/")[1:]] if at else []


# -- spec versions ------------------------------------------------------------------------------

#: MAJOR.MINOR.PATCH with no leading zeros: the only form a spec version has.
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def parse_version(version: Any) -> tuple[int, int, int] | None:
    """``"1.10.0"`` -> ``(1, 10, 0)``; None for anything that is not a spec version."""
    match = SEMVER.match(version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def version_key(version: str) -> tuple[int, int, int]:
    """The sort key of a spec version (versions compare as tuples, never as strings); ValueError if none."""
    key = parse_version(version)
    if key is None:
        raise ValueError(f"not a spec version: {version!r}")
    return key


# -- $ref -----------------------------------------------------------------------------------------


class RefError(ValueError):
    """A ``$ref`` that does not resolve, or a reference cycle."""


def resolve_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` replaced by what it names, recursively.

    Sibling keywords beside a ``$ref`` apply together with the target (JSON Schema
    2020-12): annotations of the referring schema win, and ``minimum``/``maximum`` take
    the tighter bound. ``$defs`` is dropped from the result (everything it held is
    inlined where used). A cycle raises RefError: the wire has no recursive members.
    """
    declared = schema.get("$id")
    base = declared if isinstance(declared, str) else "urn:refitwire:schema:anonymous"
    resource = referencing.Resource.from_contents(dict(schema), default_specification=DRAFT202012)
    resolver = referencing.Registry().with_resource(base, resource).resolver(base_uri=base)
    inlined: dict[str, Any] = _inline(schema, resolver, ())
    inlined.pop("$defs", None)
    return inlined


def _inline(node: Any, resolver: Any, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, resolver, seen) for item in node]
    if not isinstance(node, Mapping):
        return node
    out = {key: _inline(value, resolver, seen) for key, value in node.items() if key not in ("$ref", "$defs")}
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return out
    if ref in seen:
        raise RefError(f"reference cycle through {ref!r}")
    try:
        target = resolver.lookup(ref).contents
    except referencing.exceptions.Unresolvable:
        raise RefError(f"{ref!r} does not resolve") from None
    merged = dict(_inline(target, resolver, (*seen, ref)))
    merged.pop("$defs", None)
    for key, value in out.items():
        if key == "minimum" and "minimum" in merged:
            merged[key] = max(merged[key], value)
        elif key == "maximum" and "maximum" in merged:
            merged[key] = min(merged[key], value)
        else:
            merged[key] = value
    return merged
