"""What the spec says that code needs: versions, the wire id, limits and element sizes.

Each is a function of a ``refitwire.wire.Registry``, read from that registry's files, never restated and never frozen at
import: the versions and the wire id from its ``index.json``, which member each version added
from the schemas' ``x-added-in`` annotations, the limits and dtype sizes from its SPEC.md. So
a candidate registry's SPEC.md is what its readers and writers follow. Only the two public
entry points (``latest``, ``wire_schema_id``) build the default registry when given none;
everything else is handed one. The two upper-case names are facts of this code, not of a registry.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from refitwire import _wire
from refitwire._errors import SpecError
from refitwire._spec_rules import SpecRules, parse_spec
from refitwire._wire import Registry, version_key

__all__ = [
    "EMPTY_WHEN_ABSENT",
    "MAX_NESTING_DEPTH",
    "added_in",
    "blob_limit",
    "check_version",
    "dtype_sizes",
    "knows",
    "latest",
    "resolved",
    "spec_rules",
    "version_key",
    "wire_schema_id",
]


def latest(registry: Registry | None = None) -> str:
    """The newest released version: what writers emit by default."""
    registry = _wire.registry_or_default(registry)
    newest = registry.released_versions()[-1]
    if registry.index["latest"] != newest:  # pragma: no cover - a broken index is a packaging error
        raise RuntimeError(f"schema/index.json names {registry.index['latest']} latest, but lists {newest}")
    return newest


def added_in(registry: Registry) -> dict[str, str]:
    """Which optional member each version added, from the schemas' ``x-added-in`` (SPEC.md, "Versions")."""
    first = registry.released_versions()[0]
    added: dict[str, str] = {}
    for document in registry.documents:
        for member in registry.newest_model(document).members():
            if member.added_in == first:
                continue
            if added.setdefault(member.name, member.added_in) != member.added_in:  # pragma: no cover
                raise RuntimeError(
                    f"{document}: {member.name!r} is added in both {added[member.name]} and {member.added_in}"
                )
    return dict(sorted(added.items(), key=lambda item: (version_key(item[1]), item[0])))


def spec_rules(registry: Registry) -> SpecRules:
    """SPEC.md of ``registry``'s folder, parsed: its rule tables, limits and dtype sizes (a
    :class:`SpecError` names a row it cannot read)."""
    try:
        return _parsed(registry.spec_text)
    except SpecError as exc:
        raise SpecError(f"{registry.folder}: {exc}") from None  # "<folder>: SPEC.md line N: ..."


@functools.cache
def _parsed(text: str) -> SpecRules:
    return parse_spec(text)  # a pure function of the text: one parse per distinct SPEC.md


def blob_limit(registry: Registry, version: str | None = None) -> int:
    """The largest blob a reader of ``version`` (default: the newest released) reads, from
    ``registry``'s SPEC.md ("Limits"): larger input is rejected, never partly read."""
    return _blob_limit(registry, version)


@functools.lru_cache(maxsize=64)
def _blob_limit(registry: Registry, version: str | None) -> int:
    # asked on every read: kept per registry (immutable) and version (a typed wrapper above,
    # so that a checker sees the signature)
    return spec_rules(registry).limit("blob size", version or latest(registry))


def dtype_sizes(registry: Registry, version: str | None = None) -> Mapping[str, int]:
    """Element sizes of the dtype labels ``registry``'s SPEC.md knows (section 4, ELSIZE_DTYPE):
    those a reader of ``version`` checks (a later version may list more, in a paragraph of its
    own), or with no version every label any version lists (what an element is, wherever a
    label's size is needed). Other labels are accepted as they are (``elsize`` is then
    authoritative)."""
    rules = spec_rules(registry)
    return MappingProxyType(rules.dtype_sizes if version is None else rules.dtype_sizes_of(version))


def wire_schema_id(registry: Registry | None = None) -> str:
    """The on-wire schema id of the released line, from ``registry``'s ``index.json``."""
    wire_id: str = _wire.registry_or_default(registry).index["wire_id"]
    return wire_id


#: The top-level member a reader reports as "" when it is absent or null (SPEC.md section 1),
#: where every other absent optional member reads as null.
EMPTY_WHEN_ABSENT = "metadata_endpoint"

#: The parser's own bound (orjson refuses deeper input), so it is checked against SPEC.md's
#: "nesting depth" limit by tests/gate/test_gate_spec.py rather than read from it.
MAX_NESTING_DEPTH = 1024


def knows(registry: Registry, version: str, member: str, document: str = "rendezvous") -> bool:
    """Whether a reader or writer of ``version`` declares ``member`` (at any level); for a
    version with no schema here (a later one), whether the newest schema added it by then."""
    if version in registry.known_versions(document):
        return any(m.name == member for m in registry.wire_model(document, version).members())
    key = version_key(version)
    return any(
        m.name == member and version_key(m.added_in) <= key for m in registry.newest_model(document).members()
    )


def resolved(version: str | None, registry: Registry | None) -> tuple[str, Registry]:
    """``version`` checked in ``registry`` (:func:`check_version`), and the registry itself: the
    one place a public entry point of the codec, given no registry, builds the default one
    (once per call, handed to every helper below it)."""
    registry = _wire.registry_or_default(registry)
    return check_version(registry, version), registry


def check_version(registry: Registry, version: str | None, document: str = "rendezvous") -> str:
    """``version`` if it is released or a candidate in ``registry`` (``None``: its newest
    released); ValueError naming the known ones."""
    if version is None:
        return latest(registry)
    known = registry.known_versions(document)
    if version not in known:
        raise ValueError(f"unknown spec version {version!r} (known: {', '.join(known)})")
    return version
