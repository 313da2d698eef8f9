"""Schema documents: loading and checking one, resolving ``$ref`` and JSON pointers in it.

References are resolved by the wire's one resolver (``refitwire.wire.References``, built
on ``referencing``), which also says where each target is, so the gate reports schema
locations; pointers are built by ``refitwire.wire`` too.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from refitwire.gate._errors import GateError
from refitwire.wire import References, RefError, join, pointer, show_pointer


@dataclass(frozen=True)
class Document:
    """A schema document and where it came from (a file name or ``REF:path``)."""

    source: str
    schema: dict[str, Any]

    @property
    def version(self) -> str | None:
        stamp = self.schema.get("x-spec-version")
        return stamp if isinstance(stamp, str) else None

    @property
    def wire_id(self) -> str | None:
        stamp = self.schema.get("x-wire-id")
        return stamp if isinstance(stamp, str) else None

    @property
    def kind(self) -> str | None:
        """The document kind (``rendezvous``, ``shard-table``): from ``$id``, else its folder."""
        schema_id = self.schema.get("$id")
        if isinstance(schema_id, str) and schema_id.startswith("urn:refitwire:schema:"):
            return schema_id.split(":")[3]
        parts = self.source.rsplit(":", 1)[-1].split("/")
        return parts[-2] if len(parts) >= 2 else None

    @functools.cached_property
    def references(self) -> References:
        return References(self.schema)

    def resolve(self, ref: str, at: str) -> tuple[str, Any]:
        """(pointer, node) that ``ref`` (found at pointer ``at``) names in this document."""
        if not ref.startswith("#"):
            raise GateError(
                self.source,
                f"{ref!r} at {show_pointer(at)}: only references within the document are supported",
            )
        try:
            return self.references.lookup(ref)
        except RefError:
            raise GateError(self.source, f"{ref!r} at {show_pointer(at)} does not resolve") from None

    def follow(
        self, node: Any, at: str, until: Callable[[Mapping[str, Any]], bool] | None = None
    ) -> tuple[Any, str]:
        """``node`` (at ``at``) through its chain of references, and where it ends
        (``References.follow``); GateError on a cycle."""
        try:
            return self.references.follow(node, at, until)
        except RefError as exc:
            raise GateError(self.source, str(exc)) from None

    def deref(self, node: Any) -> Any:
        """``node`` with its references replaced, one level (``References.deref``); ``true`` is ``{}``."""
        try:
            node = self.references.deref(node)
        except RefError as exc:
            raise GateError(self.source, str(exc)) from None
        return {} if node is True else node

    def at(self, pointer: str) -> Any:
        """The node at ``pointer``; GateError when there is none."""
        return self.resolve("#" + pointer, pointer)[1] if pointer else self.schema


def load_document(source: str, data: bytes) -> Document:
    """Parse and check one schema document; GateError (a usage error) if it is not one."""
    try:
        schema = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GateError(source, f"not JSON: {exc}") from None
    except RecursionError:
        raise GateError(source, "nested too deep to be a schema document") from None
    if not isinstance(schema, dict):
        raise GateError(source, f"a schema document is a JSON object, not {type(schema).__name__}")
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        where = show_pointer(pointer(*exc.instance_path))
        raise GateError(source, f"not a valid JSON Schema at {where}: {exc.message}") from None
    except jsonschema_rs.ReferencingError as exc:
        raise GateError(source, f"cannot check against its meta-schema: {exc}") from None
    except (ValueError, RecursionError) as exc:  # jsonschema-rs bounds its own recursion
        raise GateError(source, f"nested too deep to check: {exc}") from None
    document = Document(source, schema)
    try:
        _check_refs(document, schema, "")
    except RecursionError:
        raise GateError(source, "nested too deep to be a schema document") from None
    return document


def _check_refs(document: Document, node: Any, at: str) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            document.resolve(ref, at)
        for key, value in node.items():
            _check_refs(document, value, join(at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_refs(document, value, join(at, i))
