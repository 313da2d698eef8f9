"""The wire's low layer: the schema folders, their compiled models, and the pointer, version
and ``$ref`` helpers; it imports nothing else of the package.

Private: the library's own modules (``refitwire._codec``, ``_validate`` ...) build on it, and
``refitwire.wire``, the kit's one internal API, re-exports what the kit may use of it beside
the library's rule engine and codec. It lies below both so that neither import goes round in
a circle: the API imports the library, and the library imports this, never the API.
"""

from __future__ import annotations

from refitwire._wire._basics import (
    References,
    general_pointer,
    is_index,
    join,
    parse_version,
    path_of,
    pointer,
    resolve_refs,
    show_pointer,
    tokens,
    version_key,
)
from refitwire._wire._default import (
    ENV_VAR,
    default_registry,
    package_root,
    registry_at,
    registry_or_default,
    released_versions,
    unreleased_versions,
)
from refitwire._wire._errors import RefError, SchemaFolderError
from refitwire._wire._model import (
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
from refitwire._wire._registry import Registry

__all__ = [
    "ENV_VAR", "EXACT_INTEGERS", "JSON_TYPES", "Level", "Member", "NO_CONST", "RefError", "References", "Registry",
    "SchemaFolderError", "WireModel", "compile_model", "default_registry", "general_pointer", "integer_bounds",
    "is_index", "join", "package_root", "parse_version", "path_of", "pointer", "registry_at", "registry_or_default",
    "released_versions", "resolve_refs", "schema_types", "show_pointer", "tokens", "unreleased_versions",
    "version_key",
]  # fmt: skip
