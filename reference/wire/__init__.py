"""The wire, described once: a model compiled from the schema files, and the small shared facts.

This is the kit's internal API (public, documented, used by every package): whatever needs
to know which members a level has, their order, types, bounds, rules or the version that
added them reads it here instead of restating it. ``refitwire.__all__`` remains the
library's user-facing API.

Where the schemas come from: the package's ``schema/`` folder (through its real path, so a
file added to a checkout is seen without reinstalling), or ``$REFITWIRE_SCHEMA_DIR`` when
set (a copy of ``schema/`` holding a candidate version). Released versions are the ones its
``index.json`` lists; a schema file of a later version that the index does not list is a
*candidate*: known (it can be read and written at), never the default.
"""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from refitwire.wire._basics import (
    SEMVER,
    References,
    RefError,
    escape,
    general_pointer,
    join,
    parse_version,
    pointer,
    resolve_refs,
    show_pointer,
    tokens,
    unescape,
    version_key,
)
from refitwire.wire._model import NO_CONST, Level, Member, WireModel, compile_model

__all__ = [
    "ENV_VAR",
    "NO_CONST",
    "SEMVER",
    "Level",
    "Member",
    "RefError",
    "References",
    "WireModel",
    "candidate_versions",
    "compile_model",
    "escape",
    "general_pointer",
    "index",
    "join",
    "known_versions",
    "load_schema",
    "newest_model",
    "package_root",
    "parse_version",
    "pointer",
    "released_versions",
    "resolve_refs",
    "schema_root",
    "show_pointer",
    "tokens",
    "unescape",
    "unreleased_versions",
    "version_key",
    "wire_model",
]

#: Points the library at another schema folder (a copy of ``schema/`` with a candidate in it).
ENV_VAR = "REFITWIRE_SCHEMA_DIR"


@functools.cache
def package_root() -> Path:
    """The package's own ``schema/`` folder, where the kit's files live (the protocol, the report
    format, the golden vectors) whatever ``$REFITWIRE_SCHEMA_DIR`` says.

    Its real folder: an editable install links each file, and a file added after installing
    (a new version) would be missing from the links."""
    package = Path(str(resources.files("refitwire.schema")))
    return (package / "__init__.py").resolve().parent


@functools.cache
def schema_root() -> Path:
    """The folder the wire's schemas and their index are read from."""
    override = os.environ.get(ENV_VAR)
    return Path(override).resolve() if override else package_root()


@functools.cache
def index() -> dict[str, Any]:
    """``index.json``: the released schema files with their sha256."""
    loaded: dict[str, Any] = json.loads((schema_root() / "index.json").read_bytes())
    return loaded


@functools.cache
def released_versions() -> tuple[str, ...]:
    found = {entry["version"] for entries in index()["documents"].values() for entry in entries}
    return tuple(sorted(found, key=version_key))


def unreleased_versions(folder: Path, document: str = "rendezvous") -> tuple[str, ...]:
    """Versions of ``document`` that have a schema file in ``folder`` (a ``schema/`` folder) but
    are not released here: the candidates, in version order."""
    released = released_versions()
    found = [
        p.stem for p in (folder / document).glob("*.json") if parse_version(p.stem) and p.stem not in released
    ]
    return tuple(sorted(found, key=version_key))


@functools.cache
def candidate_versions(document: str = "rendezvous") -> tuple[str, ...]:
    """The candidates of the folder the schemas are read from (:func:`unreleased_versions`)."""
    return unreleased_versions(schema_root(), document)


def known_versions(document: str = "rendezvous") -> tuple[str, ...]:
    """Released versions, then candidates."""
    return (*released_versions(), *candidate_versions(document))


@functools.cache
def load_schema(document: str, version: str) -> dict[str, Any]:
    """The schema of ``document`` at ``version`` as the file says (shared: never change it)."""
    if document not in index()["documents"]:
        raise ValueError(f"unknown document {document!r} (known: {', '.join(index()['documents'])})")
    if version not in known_versions(document):
        raise ValueError(f"unknown spec version {version!r} (known: {', '.join(known_versions(document))})")
    loaded: dict[str, Any] = json.loads((schema_root() / document / f"{version}.json").read_bytes())
    return loaded


@functools.cache
def wire_model(document: str, version: str) -> WireModel:
    """The compiled model of ``document`` at ``version``."""
    return compile_model(load_schema(document, version), document, released_versions()[0])


def newest_model(document: str = "rendezvous") -> WireModel:
    """The model of the newest known version (the library's models hold every member it has)."""
    return wire_model(document, known_versions(document)[-1])
