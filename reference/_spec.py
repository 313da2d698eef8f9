"""Constants of the spec that code needs: versions, the wire id, limits and element sizes.

What the schema files say is read from them (through a ``refitwire.wire.Registry``), not
restated: the versions and the wire id from its ``index.json``, which member each version
added from the schemas' ``x-added-in`` annotations. The functions take the registry; the
upper-case names are their values for the default registry, kept for the code that reads
them. What stays here is what only SPEC.md says.
"""

from __future__ import annotations

import functools

from refitwire import wire
from refitwire._spec_rules import SpecError, SpecRules, parse_spec
from refitwire.wire import Registry, version_key

__all__ = [
    "ADDED_IN",
    "DOCUMENTS",
    "DTYPE_SIZES",
    "EMPTY_WHEN_ABSENT",
    "LATEST",
    "MAX_BLOB_BYTES",
    "MAX_NESTING_DEPTH",
    "SPEC_RULES",
    "SPEC_VERSIONS",
    "WIRE_SCHEMA_ID",
    "added_in",
    "check_version",
    "knows",
    "latest",
    "spec_rules",
    "version_key",
]


def latest(registry: Registry | None = None) -> str:
    """The newest released version: what writers emit by default."""
    registry = registry or wire.default_registry()
    newest = registry.released_versions()[-1]
    if registry.index["latest"] != newest:  # pragma: no cover - a broken index is a packaging error
        raise RuntimeError(f"schema/index.json names {registry.index['latest']} latest, but lists {newest}")
    return newest


def added_in(registry: Registry | None = None) -> dict[str, str]:
    """Which optional member each version added, from the schemas' ``x-added-in`` (SPEC.md, "Versions")."""
    registry = registry or wire.default_registry()
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


def spec_rules(registry: Registry | None = None) -> SpecRules:
    """SPEC.md of ``registry``'s folder, parsed: its rule tables, limits and dtype sizes (a
    :class:`SpecError` names a row it cannot read)."""
    registry = registry or wire.default_registry()
    try:
        return _parsed(registry.spec_text)
    except SpecError as exc:
        raise SpecError(f"{registry.folder}: {exc}") from None  # "<folder>: SPEC.md line N: ..."


@functools.cache
def _parsed(text: str) -> SpecRules:
    return parse_spec(text)  # a pure function of the text: one parse per distinct SPEC.md


_DEFAULT = wire.default_registry()

#: The on-wire schema id of the released line (of the default registry).
WIRE_SCHEMA_ID: str = _DEFAULT.index["wire_id"]

#: The documents the spec defines, by schema folder name.
DOCUMENTS: tuple[str, ...] = _DEFAULT.documents

#: Released spec versions in release order; the last is what writers emit by default.
SPEC_VERSIONS: tuple[str, ...] = _DEFAULT.released_versions()
LATEST: str = latest(_DEFAULT)

#: :func:`added_in` of the default registry.
ADDED_IN: dict[str, str] = added_in(_DEFAULT)

#: The top-level member a reader reports as "" when it is absent or null (SPEC.md section 1),
#: where every other absent optional member reads as null.
EMPTY_WHEN_ABSENT = "metadata_endpoint"

#: :func:`spec_rules` of the default registry.
SPEC_RULES: SpecRules = spec_rules(_DEFAULT)

#: Reader limits (SPEC.md, "Limits"), read from its table. Larger input is rejected, never partly read.
MAX_BLOB_BYTES: int = SPEC_RULES.limit("blob size", LATEST)
#: The parser's own bound (orjson refuses deeper input), so it is checked against SPEC.md's
#: "nesting depth" limit by tests/gate/test_gate_spec.py rather than read from it.
MAX_NESTING_DEPTH = 1024

#: Element sizes of the dtype labels the spec knows (SPEC.md section 4, ELSIZE_DTYPE), read
#: from it. Other labels are accepted as-is (``elsize`` is then authoritative), so a new dtype
#: is an additive change.
DTYPE_SIZES: dict[str, int] = dict(SPEC_RULES.dtype_sizes)


def knows(version: str, member: str, document: str = "rendezvous", registry: Registry | None = None) -> bool:
    """Whether a reader or writer of ``version`` declares ``member`` (at any level); for a
    version with no schema here (a later one), whether the newest schema added it by then."""
    registry = registry or wire.default_registry()
    if version in registry.known_versions(document):
        return any(m.name == member for m in registry.wire_model(document, version).members())
    key = version_key(version)
    return any(
        m.name == member and version_key(m.added_in) <= key for m in registry.newest_model(document).members()
    )


def check_version(version: str, document: str = "rendezvous", registry: Registry | None = None) -> str:
    """``version`` if it is released or a candidate in ``registry``; ValueError naming the known ones."""
    known = (registry or wire.default_registry()).known_versions(document)
    if version not in known:
        raise ValueError(f"unknown spec version {version!r} (known: {', '.join(known)})")
    return version
