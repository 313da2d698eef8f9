"""The wire, described once: a model compiled from the schema files, and the small shared facts.

This is the kit's internal API (public, documented, used by every package): whatever needs
to know which members a level has, their order, types, bounds, rules or the version that
added them reads it here instead of restating it. ``refitwire.__all__`` remains the
library's user-facing API.

Where the schemas come from: a :class:`Registry`, one immutable record of a ``schema/``
folder's files and their compiled models, passed explicitly to whatever reads or writes at a
version; a candidate is the same registry with one more file (:meth:`Registry.with_resource`).
The module-level functions below read :func:`default_registry` (the package's ``schema/``
folder through its real path, so a file added to a checkout is seen without reinstalling, or
the folder ``$REFITWIRE_SCHEMA_DIR`` names when it is set) unless they are given a
``registry``. Nothing here is frozen at import: each call asks for the default registry again.
"""

from __future__ import annotations

import functools
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
    is_index,
    join,
    parse_version,
    path_of,
    pointer,
    resolve_refs,
    show_pointer,
    tokens,
    unescape,
    version_key,
)
from refitwire.wire._model import (
    EXACT_INTEGERS,
    JSON_TYPES,
    NO_CONST,
    Level,
    Member,
    WireModel,
    compile_model,
    integer_bounds,
    schema_types,
)
from refitwire.wire._registry import Registry, SchemaFolderError, unreleased_files

__all__ = [
    "ENV_VAR",
    "EXACT_INTEGERS",
    "JSON_TYPES",
    "Level",
    "Member",
    "NO_CONST",
    "RefError",
    "References",
    "Registry",
    "SEMVER",
    "SchemaFolderError",
    "WireModel",
    "candidate_versions",
    "compile_model",
    "default_registry",
    "escape",
    "general_pointer",
    "index",
    "is_index",
    "join",
    "known_versions",
    "load_schema",
    "newest_model",
    "package_root",
    "parse_version",
    "pointer",
    "registry_at",
    "released_versions",
    "resolve_refs",
    "schema_root",
    "integer_bounds",
    "schema_types",
    "show_pointer",
    "path_of",
    "tokens",
    "unescape",
    "unreleased_versions",
    "version_key",
    "wire_model",
]

#: Names another schema folder the default registry is built from (a copy of ``schema/``).
ENV_VAR = "REFITWIRE_SCHEMA_DIR"


@functools.cache
def package_root() -> Path:
    """The package's own ``schema/`` folder, where the kit's files live (the protocol, the report
    format, the golden vectors) whatever ``$REFITWIRE_SCHEMA_DIR`` says.

    Its real folder: an editable install links each file, and a file added after installing
    (a new version) would be missing from the links."""
    package = Path(str(resources.files("refitwire.schema")))
    return (package / "__init__.py").resolve().parent


def default_registry() -> Registry:
    """The registry of ``$REFITWIRE_SCHEMA_DIR`` when it is set now, else of the package's
    ``schema/`` folder: the variable is read on every call and is only a way to name the
    folder, so setting it names another registry, never a stale one."""
    override = os.environ.get(ENV_VAR)
    if not override:
        return registry_at(package_root())
    return _registry_named(override if os.path.isabs(override) else os.path.join(os.getcwd(), override))


@functools.lru_cache(maxsize=8)
def _registry_named(folder: str) -> Registry:
    # The variable's absolute value, resolved once: a realpath on every call cost about 19 us,
    # five times what the rest of a small blob's read costs.
    try:
        return registry_at(Path(folder).resolve())
    except SchemaFolderError as exc:
        raise SchemaFolderError(f"${ENV_VAR}: {exc}") from None


@functools.lru_cache(maxsize=8)
def registry_at(folder: Path) -> Registry:
    """:meth:`Registry.from_folder` of ``folder`` (a resolved path), built once per folder: a
    registry is immutable, and compiling one's models costs tenths of a second."""
    return Registry.from_folder(folder)


def _of(registry: Registry | None) -> Registry:
    return default_registry() if registry is None else registry


def schema_root(registry: Registry | None = None) -> Path:
    """The folder the wire's schemas and their index are read from."""
    return _of(registry).folder


def index(registry: Registry | None = None) -> dict[str, Any]:
    """``index.json``: the released schema files with their sha256 (shared: never change it)."""
    return _of(registry).index


def released_versions(registry: Registry | None = None) -> tuple[str, ...]:
    return _of(registry).released_versions()


def unreleased_versions(
    folder: Path, document: str = "rendezvous", registry: Registry | None = None
) -> tuple[str, ...]:
    """Versions of ``document`` that have a schema file in ``folder`` (a ``schema/`` folder) but
    are not released in ``registry``: the candidates, in version order."""
    return unreleased_files(folder, released_versions(registry), document)


def candidate_versions(document: str = "rendezvous", registry: Registry | None = None) -> tuple[str, ...]:
    """The candidate versions the registry holds (schema files its index does not list)."""
    return _of(registry).candidate_versions(document)


def known_versions(document: str = "rendezvous", registry: Registry | None = None) -> tuple[str, ...]:
    """Released versions, then candidates."""
    return _of(registry).known_versions(document)


def load_schema(document: str, version: str, registry: Registry | None = None) -> dict[str, Any]:
    """The schema of ``document`` at ``version`` as the file says (shared: never change it)."""
    return _of(registry).load_schema(document, version)


def wire_model(document: str, version: str, registry: Registry | None = None) -> WireModel:
    """The compiled model of ``document`` at ``version``."""
    return (default_registry() if registry is None else registry).wire_model(document, version)


def newest_model(document: str = "rendezvous", registry: Registry | None = None) -> WireModel:
    """The model of the newest known version (the library's models hold every member it has)."""
    return _of(registry).newest_model(document)
