"""The golden vectors' own schema (``schema/vectors/vector.schema.json``): the versions it names.

A vector states what a reader of every version does with its blob (``expect``) and which
writer versions write it (``written_by``), so the vectors' schema names those versions. They
are the registry's (``_vector_kit.VERSIONS``: the released ones, then any candidate), written
here by ``build_vectors.py`` and never by hand: a clone that adds 1.3.0 gets vectors that
answer for 1.3.0 and a schema that requires it, in the same regenerate.
"""

from __future__ import annotations

import json

import _clone
from _vector_kit import OUT, VERSIONS

META = OUT / "vector.schema.json"


def rebuilt(text: str) -> str:
    """The schema ``text`` with every version it names set to the registry's."""
    schema = json.loads(text)
    versions = list(VERSIONS)
    schema["$defs"]["version"] = {"enum": versions}
    expect = schema["$defs"]["vector"]["properties"]["expect"]
    expect.pop("patternProperties", None)  # (a pattern of versions guessed their shape)
    expect["required"] = versions
    expect["properties"] = {version: {"$ref": "#/$defs/outcome"} for version in versions}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def refresh(check: bool) -> int:
    """Write the schema (with ``check``, only say it is stale): 0 when it is current."""
    return _clone.refresh(META, rebuilt, "the versions the vectors answer for", check)
