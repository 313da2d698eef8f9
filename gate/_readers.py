"""The full reader of a schema document's version: its schema and the rules JSON Schema cannot say.

A witness must be a blob an old writer could really produce, so both sides of it are
judged by a whole reader, not by the schema alone:

* a released version the installed kit knows, with the released schema: the reference
  itself (``refitwire.violations``);
* any other version of a known document (a candidate, or a release newer than the installed
  kit): its own schema, then that document's semantic rules at the newest released version
  below it;
* anything else (a document of no known kind): its schema alone.
"""

from __future__ import annotations

import functools
import json
import traceback
from collections.abc import Callable
from typing import Any

import jsonschema_rs
import refitwire
from refitwire.compat import Candidate
from refitwire.gate._document import Document
from refitwire.wire import Registry, pointer, show_pointer

#: A reader: the first complaint about a blob, or None when it reads it.
Reader = Callable[[Any], "str | None"]


class ReaderCrash(RuntimeError):
    """A reader raised instead of answering: a bug in the kit, never "rejected" or "no witness"."""


def reader(document: Document, registry: Registry) -> Reader:
    """The full reader of ``document``'s version (the released one of ``registry`` when the file is
    its, else the library's reader of it as a candidate of ``registry``); one that raises raises
    ReaderCrash with the traceback."""
    schema_json = json.dumps(document.schema, sort_keys=True)
    read = _reader(document.kind or "", document.version or "", schema_json, registry)

    def guarded(blob: Any) -> str | None:
        try:
            return read(blob)
        except Exception as exc:
            trace = "".join(traceback.format_exception(exc))
            raise ReaderCrash(
                f"the reader of {document.source} crashed on {json.dumps(blob)[:200]}:\n{trace}"
            ) from exc

    return guarded


@functools.cache
def _reader(kind: str, version: str, schema_json: str, registry: Registry) -> Reader:
    schema = json.loads(schema_json)
    if (
        kind in registry.documents
        and version in registry.released_versions()
        and schema == registry.load_schema(kind, version)
    ):

        def released(blob: Any) -> str | None:
            return _first(refitwire.violations(blob, kind, version, registry))

        return released
    if kind in registry.documents and version:
        candidate = Candidate(registry.with_resource(kind, version, schema), version, kind)
        return lambda blob: _first(candidate.violations(blob))
    validator = jsonschema_rs.validator_for(schema)

    def schema_only(blob: Any) -> str | None:
        for error in validator.iter_errors(blob):
            return f"{show_pointer(pointer(*error.instance_path))}: {error.message}"
        return None

    return schema_only


def _first(found: list[refitwire.Violation]) -> str | None:
    if not found:
        return None
    v = found[0]
    return f"{v.rule} at {show_pointer(v.pointer)}: {v.detail}"
