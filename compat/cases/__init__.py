"""The cases: what the kit sends a testee, built from the registry's schemas.

Each module builds one family of cases or the values they are made of: the forms a schema
takes (``_forms``), the generated payloads and their identities (``_cases``), realistic
magnitudes (``_magnitudes``), the refusal cases of each rule (``_built_cases``,
``_refusals``), digests (``_digest``), later members a reader must keep (``_write_unknown``), merges (``_merge``),
the size sweep (``_sizes``) and JSON text a parser may read wrongly (``_json_text``).
They sit on the results and the protocol (``refitwire.compat._results``, ``_protocol``) and
below the runner: nothing here runs a testee.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from refitwire.lazy_exports import lazy_names, loader

if TYPE_CHECKING:
    # What the layers above use of this one, loaded on first use as compat's own names are
    # (refitwire.lazy_exports): importing one module here does not import the whole layer.
    # ``X as X``: a re-export mypy's strict mode accepts (``__all__`` is built at run time).
    from refitwire.compat.cases._built_cases import RefusalCase as RefusalCase
    from refitwire.compat.cases._forms import objects_at as objects_at
    from refitwire.compat.cases._json_text import first_repeated_name as first_repeated_name

_WHERE = lazy_names(__file__)

__all__ = [*_WHERE]

__getattr__ = loader(__name__, _WHERE)
