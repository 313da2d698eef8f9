"""The reference's internal API for the kit's own packages (compat, gate, cli, bench, refit).

Public and documented, unlike the ``_`` modules it reads from: what the spec says
(per registry), the schema registry, the rule engine and the codec's building blocks. ``refitwire.__all__`` is
the library's API for users; this module is what the rest of the kit may build on, so the
reference's private layout can change without touching them. ``refitwire.wire`` holds the
model of the wire and the shared pointer, version and ``$ref`` helpers.
"""

from __future__ import annotations

from refitwire._codec import rendezvous_document
from refitwire._decoded import decoded_members
from refitwire._digest import ROW_BYTES, THREADED_MIN_BYTES, RowDigest, slice_digests
from refitwire._errors import InvalidBlob, Violation, as_json_value
from refitwire._lines import REPLY_FD, LineProcess, LinesError, NoReply, ProcessExited, ReplyTooLong
from refitwire._models import TableClasses, classes_of
from refitwire._registry import (
    PROTOCOL_MESSAGES,
    fast_validator,
    protocol_schema,
    protocol_validator,
    released,
    schema,
    schema_bytes,
)
from refitwire._spec import (
    EMPTY_WHEN_ABSENT,
    added_in,
    blob_limit,
    check_version,
    dtype_sizes,
    knows,
    latest,
    spec_rules,
    version_key,
    wire_schema_id,
)
from refitwire._spec_rules import LEVELS, SpecError, SpecLimit, SpecRule, SpecRules, parse_spec
from refitwire._spec_text import SpecText, TextBlock, section_key, spec_text
from refitwire._typed import typed_read
from refitwire._validate import (
    check,
    no_gc,
    parse,
    schema_errors,
    semantic_violations,
    violations,
    writer_violations,
)

__all__ = [
    # what the spec says, per registry (every one takes the registry it reads)
    "EMPTY_WHEN_ABSENT", "added_in", "blob_limit", "check_version", "dtype_sizes", "knows", "latest", "version_key",
    "wire_schema_id",
    # SPEC.md's rule tables, read from it
    "LEVELS", "SpecError", "spec_rules", "SpecLimit", "SpecRule", "SpecRules", "parse_spec",
    # SPEC.md's text, block by block (a released version's prose is locked too)
    "SpecText", "TextBlock", "section_key", "spec_text",
    # the schema registry
    "fast_validator", "PROTOCOL_MESSAGES", "protocol_schema", "protocol_validator", "released", "schema",
    "schema_bytes",
    # the rule engine
    "InvalidBlob", "Violation", "as_json_value", "check", "parse", "schema_errors", "semantic_violations",
    "violations", "writer_violations",
    # the codec's building blocks
    "ROW_BYTES", "THREADED_MIN_BYTES", "RowDigest", "slice_digests", "decoded_members", "no_gc", "rendezvous_document",
    "typed_read", "TableClasses", "classes_of",
    # the one driver of a JSON-lines child process
    "REPLY_FD", "LineProcess", "LinesError", "NoReply", "ProcessExited", "ReplyTooLong",
]  # fmt: skip
