"""refitwire: the spec, reference codec and compatibility kit for the refit rendezvous blob.

Everything public is re-exported here; modules whose names start with ``_`` are private.
(``refitwire.schema`` is the package holding the schema files; ``schema_document`` loads one.)
"""

from __future__ import annotations

from refitwire._codec import (
    LazyTable,
    decode_shard_table,
    encode_shard_table,
    merge_shard_tables,
    unwrap_rendezvous_blob,
    wrap_rendezvous_blob,
)
from refitwire._decoded import from_decoded, to_decoded
from refitwire._digest import tensor_digest
from refitwire._errors import InvalidBlob, Violation
from refitwire._models import PublishedShard, PublishedTensor, RendezvousPayload
from refitwire._registry import schema as schema_document
from refitwire._spec import LATEST, SPEC_VERSIONS, WIRE_SCHEMA_ID
from refitwire._validate import violations

__all__ = [
    "LATEST",
    "SPEC_VERSIONS",
    "WIRE_SCHEMA_ID",
    "InvalidBlob",
    "LazyTable",
    "PublishedShard",
    "PublishedTensor",
    "RendezvousPayload",
    "Violation",
    "decode_shard_table",
    "encode_shard_table",
    "from_decoded",
    "merge_shard_tables",
    "schema_document",
    "tensor_digest",
    "to_decoded",
    "unwrap_rendezvous_blob",
    "violations",
    "wrap_rendezvous_blob",
]
