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
from typing import Any, NamedTuple

import jsonschema_rs
import refitwire
from refitwire.compat import Candidate
from refitwire.gate._document import Document
from refitwire.gate._errors import ReaderCrash
from refitwire.wire import Registry, pointer, show_pointer


class Rejection(NamedTuple):
    """A reader's first complaint about a blob: the rule it names (None: a schema of no known
    document, which names none), the pointer of the value, and the complaint as reports show it."""

    rule: str | None
    pointer: str
    text: str


#: A reader: the first complaint about a blob, or None when it reads it.
Reader = Callable[[Any], "str | None"]
#: The same reader, its complaint as a record.
Rejecter = Callable[[Any], "Rejection | None"]


def reader(document: Document, registry: Registry) -> Reader:
    """The full reader of ``document``'s version (the released one of ``registry`` when the file is
    its, else the library's reader of it as a candidate of ``registry``); one that raises raises
    ReaderCrash with the traceback."""
    reject = rejecter(document, registry)

    def read(blob: Any) -> str | None:
        found = reject(blob)
        return None if found is None else found.text

    return read


def rejecter(document: Document, registry: Registry) -> Rejecter:
    """:func:`reader`, its complaint as a :class:`Rejection` (the rule and the pointer apart)."""
    schema_json = json.dumps(document.schema, sort_keys=True)
    read = _reader(document.kind or "", document.version or "", schema_json, registry)

    def guarded(blob: Any) -> Rejection | None:
        try:
            return read(blob)
        except Exception as exc:
            trace = "".join(traceback.format_exception(exc))
            raise ReaderCrash(
                f"the reader of {document.source} crashed on {json.dumps(blob)[:200]}:\n{trace}"
            ) from exc

    return guarded


def is_release(document: Document, registry: Registry) -> bool:
    """Whether ``document`` is a version ``registry`` releases, as released (its reader is the
    reference's, every rule of that version applied)."""
    kind, version = document.kind or "", document.version or ""
    return (
        kind in registry.documents
        and version in registry.released_versions()
        and document.schema == registry.load_schema(kind, version)
    )


@functools.cache
def _reader(kind: str, version: str, schema_json: str, registry: Registry) -> Rejecter:
    schema = json.loads(schema_json)
    if (
        kind in registry.documents
        and version in registry.released_versions()
        and schema == registry.load_schema(kind, version)
    ):

        def released(blob: Any) -> Rejection | None:
            return _first(refitwire.violations(blob, kind, version, registry))

        return released
    if kind in registry.documents and version:
        candidate = Candidate(registry.with_resource(kind, version, schema), version, kind)
        return lambda blob: _first(candidate.violations(blob))
    validator = jsonschema_rs.validator_for(schema)

    def schema_only(blob: Any) -> Rejection | None:
        for error in validator.iter_errors(blob):
            at = pointer(*error.instance_path)
            return Rejection(None, at, f"{show_pointer(at)}: {error.message}")
        return None

    return schema_only


def _first(found: list[refitwire.Violation]) -> Rejection | None:
    if not found:
        return None
    v = found[0]
    return Rejection(v.rule, v.pointer, f"{v.rule} at {show_pointer(v.pointer)}: {v.detail}")
