"""The kit's one internal API: what the spec says, the wire's model, and the reference's rule
engine and codec building blocks, for the kit's own packages (compat, gate, cli, bench, refit),
its tools and tests.

Public and documented, unlike the ``_`` modules it reads from, so the reference's private
layout can change without touching its users. ``refitwire.__all__`` is the library's API for
users; a name it holds (``InvalidBlob``, ``latest``, ``released_versions`` ...) is taken from
there and not repeated here, so each thing has one public name.

Whatever needs to know which members a level has, their order, types, bounds, rules or the
version that added them reads it here instead of restating it. Where the schemas come from: a
:class:`Registry`, one immutable record of a ``schema/`` folder's files and their compiled
models, passed explicitly to whatever reads or writes at a version; a candidate is the same
registry with one more file (:meth:`Registry.with_resource`). :func:`default_registry` is its
one factory, called by the entry points alone (the names of ``refitwire.__all__``, the CLI,
the kit's runs): every function below them is handed the registry they built.

The wire's low layer (the schema folders, the compiled models, the pointer, version and
``$ref`` helpers) is the private ``refitwire._wire``, which the library's modules build on;
this module sits above both, so importing it never goes round in a circle.
"""

from __future__ import annotations

from refitwire._codec import rendezvous_document
from refitwire._decoded import decoded_members
from refitwire._digest import ROW_BYTES, THREADED_MIN_BYTES, RowDigest, slice_digests
from refitwire._errors import LinesError, NoReply, ProcessExited, ReplyTooLong, SpecError, as_json_value
from refitwire._lines import REPLY_FD, LineProcess
from refitwire._models import classes_of
from refitwire._registry import (
    PROTOCOL_MESSAGES,
    fast_validator,
    protocol_schema,
    protocol_validator,
    released,
    schema_bytes,
)
from refitwire._spec import EMPTY_WHEN_ABSENT, blob_limit, check_version, dtype_sizes, knows, spec_rules
from refitwire._spec_rules import LEVELS, SpecRules, parse_spec
from refitwire._spec_text import SpecText, TextBlock, spec_text
from refitwire._typed import typed_read
from refitwire._validate import check, no_gc, parse, semantic_violations, writer_violations
from refitwire._wire import (
    ENV_VAR,
    EXACT_INTEGERS,
    JSON_TYPES,
    NO_CONST,
    Level,
    Member,
    References,
    RefError,
    Registry,
    SchemaFolderError,
    WireModel,
    compile_model,
    default_registry,
    general_pointer,
    integer_bounds,
    is_index,
    join,
    package_root,
    parse_version,
    path_of,
    pointer,
    registry_at,
    resolve_refs,
    schema_types,
    show_pointer,
    tokens,
    unreleased_versions,
    version_key,
)
from refitwire._wire._vocabulary import (
    KEYWORDS,
    Keyword,
    asserting,
    asserts_nothing,
    length_pairs,
    unmodelled_reason,
)

__all__ = [
    # the schema registry: where the schemas come from, and the documents read from it
    "ENV_VAR", "Registry", "SchemaFolderError", "default_registry", "package_root", "registry_at",
    "unreleased_versions", "PROTOCOL_MESSAGES", "fast_validator", "protocol_schema", "protocol_validator", "released",
    "schema_bytes",
    # the wire's model, compiled from a schema file
    "EXACT_INTEGERS", "JSON_TYPES", "Level", "Member", "NO_CONST", "WireModel", "compile_model", "integer_bounds",
    "schema_types",
    # JSON pointers, versions and $ref, each written once
    "RefError", "References", "general_pointer", "is_index", "join", "parse_version", "path_of", "pointer",
    "resolve_refs", "show_pointer", "tokens", "version_key",
    # what the spec says, per registry (every one takes the registry it reads)
    "EMPTY_WHEN_ABSENT", "blob_limit", "check_version", "dtype_sizes", "knows", "spec_rules",
    # SPEC.md's rule tables and its text, block by block (a released version's prose is locked too)
    "LEVELS", "SpecError", "SpecRules", "parse_spec", "SpecText", "TextBlock", "spec_text",
    # the rule engine
    "as_json_value", "check", "parse", "semantic_violations", "writer_violations",
    # the codec's building blocks
    "ROW_BYTES", "THREADED_MIN_BYTES", "RowDigest", "slice_digests", "classes_of", "decoded_members", "no_gc",
    "rendezvous_document", "typed_read",
    # the one driver of a JSON-lines child process
    "REPLY_FD", "LineProcess", "LinesError", "NoReply", "ProcessExited", "ReplyTooLong",
    # the keywords a schema may hold, described once
    "KEYWORDS", "Keyword", "asserting", "asserts_nothing", "length_pairs", "unmodelled_reason",
]  # fmt: skip
