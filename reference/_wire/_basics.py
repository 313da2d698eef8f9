"""The small facts every part of the kit shares: JSON pointers, spec versions and ``$ref``.

Each has one home here. Pointers follow RFC 6901 (``~0``/``~1`` escaping; the whole
document is ``""``); versions are ``MAJOR.MINOR.PATCH`` and compare as tuples; references
are resolved by ``referencing`` (the resolver jsonschema uses), so how a schema file is
laid out (which ``$defs``, inlined or not) never matters to a caller.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012
from refitwire._wire._errors import RefError
from refitwire._wire._vocabulary import KEYWORDS, asserts_nothing

__all__ = [
    "SEMVER",
    "RefError",
    "References",
    "escape",
    "general_pointer",
    "is_index",
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


def is_index(token: str) -> bool:
    """Whether a pointer token can name an array item (RFC 6901's ``0`` or ``[1-9][0-9]*``, ASCII):
    ``"01"`` and ``"²"`` are member names only (``str.isdigit`` takes both, and ``int("²")`` fails)."""
    return token.isascii() and token.isdigit() and (token == "0" or token[0] != "0")


def general_pointer(at: str) -> str:
    """``at`` with every array index written ``*``: one place of the wire, whatever the indices
    (``/tensors/3/shards/0/addr`` -> ``/tensors/*/shards/*/addr``)."""
    return pointer(*("*" if is_index(t) else t for t in tokens(at)))


def show_pointer(at: str | None) -> str:
    """A pointer as text for people: the root is shown as ``""`` (``/`` is the member named "")."""
    return at or '""'


def tokens(at: str) -> list[str]:
    """The unescaped tokens of a pointer (``""`` has none)."""
    return [unescape(t) for t in at.split("/")[1:]] if at else []


def path_of(at: str) -> tuple[str | int, ...]:
    """A pointer as a path into a document: its tokens, the digit ones as array indices."""
    return tuple(int(t) if is_index(t) else t for t in tokens(at))


# -- spec versions ------------------------------------------------------------------------------

#: MAJOR.MINOR.PATCH with no leading zeros: the only form a spec version has (``\Z``, not ``$``,
#: which also matches before a final newline: "1.2.0\n" is not a version).
SEMVER = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\Z")


def parse_version(version: Any) -> tuple[int, int, int] | None:
    """``"1.10.0"`` -> ``(1, 10, 0)``; None for anything that is not a spec version."""
    match = SEMVER.match(version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@functools.lru_cache(maxsize=256)  # asked per case and reader of a run: a few versions, many times
def version_key(version: str) -> tuple[int, int, int]:
    """The sort key of a spec version (versions compare as tuples, never as strings); ValueError if none."""
    key = parse_version(version)
    if key is None:
        raise ValueError(f"not a spec version: {version!r}")
    return key


# -- $ref -----------------------------------------------------------------------------------------


class References:
    """The ``$ref`` of one schema document, resolved by ``referencing`` against the document.

    Every reader of a schema goes through it: :func:`resolve_refs` inlines a whole document,
    :meth:`deref` one node (a member's own references stay, so a recursive schema can be
    walked), and :meth:`follow` a chain of references keeping *where* it ends, the
    document's pointer of the target (the gate reports schema locations).
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        declared = schema.get("$id")
        base = declared if isinstance(declared, str) else "urn:refitwire:schema:anonymous"
        resource = referencing.Resource.from_contents(schema, default_specification=DRAFT202012)
        self.schema = schema
        self._resolver = referencing.Registry().with_resource(base, resource).resolver(base_uri=base)

    def lookup(self, ref: str) -> tuple[str, Any]:
        """``(pointer, node)``: what ``ref`` names and its pointer in the document."""
        try:
            target = self._resolver.lookup(ref).contents
        except referencing.exceptions.Unresolvable:
            raise RefError(f"{ref!r} does not resolve") from None
        fragment = ref.partition("#")[2]
        if ref.startswith("#") and (not fragment or fragment.startswith("/")):
            return urllib.parse.unquote(fragment), target
        return _place_of(target, self.schema, "") or "", target  # an anchor: where its node is

    def follow(
        self, node: Any, at: str, until: Callable[[Mapping[str, Any]], bool] | None = None
    ) -> tuple[Any, str]:
        """``node`` (found at ``at``) followed through its chain of references: the first node
        without a ``$ref`` (or one ``until`` stops at), and its pointer. RefError on a cycle."""
        seen: list[str] = []
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and not (until and until(node)):
            if node["$ref"] in seen:
                raise RefError(f"reference cycle through {node['$ref']!r} at {show_pointer(at)}")
            seen.append(node["$ref"])
            at, node = self.lookup(node["$ref"])
        return node, at

    def deref(self, node: Any) -> Any:
        """``node`` with its chain of references replaced by what they name, the keywords beside
        each ``$ref`` applied with the target (:func:`resolve_refs` says how); one level only."""
        seen: list[str] = []
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            if node["$ref"] in seen:
                raise RefError(f"reference cycle through {node['$ref']!r}")
            seen.append(node["$ref"])
            target = self.lookup(node["$ref"])[1]
            beside = {key: value for key, value in node.items() if key != "$ref"}
            node = _merged(target, beside) if isinstance(target, (Mapping, bool)) else target
        return node

    def inline(self, node: Any) -> Any:
        """``node`` (a part of the document) with every ``$ref`` in it replaced, recursively."""
        return _inline(node, self, ())


def resolve_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` replaced by what it names, recursively.

    Sibling keywords beside a ``$ref`` apply together with the target (JSON Schema
    2020-12; see :func:`_merged`). ``$defs`` is dropped from the result (everything it held is
    inlined where used). A cycle raises RefError: the wire has no recursive members.
    """
    inlined: dict[str, Any] = References(schema).inline(schema)
    inlined.pop("$defs", None)
    return inlined


def _inline(node: Any, references: References, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, references, seen) for item in node]
    if not isinstance(node, Mapping):
        return node
    out = {
        key: _inline(value, references, seen) for key, value in node.items() if key not in ("$ref", "$defs")
    }
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return out
    if ref in seen:
        raise RefError(f"reference cycle through {ref!r}")
    return _merged(_inline(references.lookup(ref)[1], references, (*seen, ref)), out)


#: Keywords of which the tighter of two applies: the larger lower bound, the smaller upper one.
_LOWER = frozenset(name for name, keyword in KEYWORDS.items() if keyword.bound == "lower")
_UPPER = frozenset(name for name, keyword in KEYWORDS.items() if keyword.bound == "upper")


def _merged(target: Any, beside: Mapping[str, Any]) -> dict[str, Any]:
    """A ``$ref``'s target with the keywords beside the ``$ref`` applied together with it: a bound
    given twice is the tighter one, an annotation the referring schema's, and any other keyword
    both schemas give differently applies as well (``allOf``), never in place of the target's.
    A boolean target is the schema it stands for (``true``: ``{}``, ``false``: ``{"not": {}}``)."""
    merged = dict({} if target is True else {"not": {}} if target is False else target)
    merged.pop("$defs", None)
    for key, value in beside.items():
        if key not in merged or merged[key] == value or asserts_nothing(key):
            merged[key] = value
        elif key in _LOWER:
            merged[key] = max(merged[key], value)
        elif key in _UPPER:
            merged[key] = min(merged[key], value)
        else:
            merged["allOf"] = [*merged.get("allOf", ()), {key: value}]
    return merged


def _place_of(node: Any, within: Any, at: str) -> str | None:
    """The pointer of ``node`` (that very object) inside ``within``, or None."""
    if node is within:
        return at
    children = (
        within.items()
        if isinstance(within, Mapping)
        else enumerate(within)
        if isinstance(within, list)
        else ()
    )
    for key, child in children:
        if isinstance(child, (Mapping, list)):
            found = _place_of(node, child, join(at, key))
            if found is not None:
                return found
    return None
