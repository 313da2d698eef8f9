"""refitwire: the spec, reference codec and compatibility kit for the refit rendezvous blob.

Everything public is re-exported here; modules whose names start with ``_`` are private.
(``refitwire.schema`` is the package holding the schema files; ``schema_document`` loads one.)
"""

from __future__ import annotations

# ruff: noqa: F401 -- the imports under TYPE_CHECKING are this package's re-exports (see below)
from typing import TYPE_CHECKING

from refitwire.lazy_exports import lazy_names, loader

if TYPE_CHECKING:
    # The re-exports, loaded on first use (refitwire.lazy_exports): `import refitwire` (and so
    # every subpackage, the CLI first) reads no schema folder until a name is used, so a bad
    # folder is reported by whoever uses it, never a traceback at import.
    from refitwire._codec import (
        decode_shard_table,
        encode_shard_table,
        merge_shard_tables,
        unwrap_rendezvous_blob,
        wrap_rendezvous_blob,
    )
    from refitwire._decoded import from_decoded, to_decoded
    from refitwire._digest import tensor_digest
    from refitwire._errors import FrozenModel, InvalidBlob, Violation
    from refitwire._lazy_table import LazyTable
    from refitwire._models import PublishedShard, PublishedTensor, RendezvousPayload
    from refitwire._registry import schema as schema_document
    from refitwire._spec import latest, wire_schema_id
    from refitwire._validate import violations
    from refitwire._wire import released_versions

_WHERE = lazy_names(__file__)
__all__ = sorted(_WHERE)
__getattr__ = loader(__name__, _WHERE)
