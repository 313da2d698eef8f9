"""Integers past [-2^63, 2^64) in a member whose schema does not bound them inside that range:
read exactly on every path (READ_EXACT_INTEGERS). orjson, the parser of the path that names
every rule, reads them as doubles; a candidate member the typed fast path cannot compile
(``prefixItems``) sent every blob down that path, and a valid 2^64 was refused naming
INTEGER_LITERAL, while the same value in a plain member (fast path, msgspec) was read exactly.
"""

from __future__ import annotations

from typing import Any

import pytest
from _gate_helpers import candidate_registry
from refitwire import unwrap_rendezvous_blob, wire, wrap_rendezvous_blob
from refitwire._errors import InvalidBlob
from refitwire.wire import Registry

#: an unbounded integer the typed path cannot compile (prefixItems), and one it can
RANKS = {"description": "A rank and its host.", "type": "array", "x-added-in": "1.3.0",
         "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}  # fmt: skip
EPOCH = {"description": "An epoch.", "type": "integer", "x-added-in": "1.3.0"}
BIG = 2**64 + 1


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    def edit(document: str, schema: dict[str, Any]) -> None:
        if document == "rendezvous":
            schema["properties"].update(ranks=RANKS, epoch=EPOCH)

    return candidate_registry(tmp_path_factory.mktemp("long"), edit)


def test_only_a_schema_with_an_integer_unbounded_in_that_range_asks_for_the_exact_read(
    registry: Registry,
) -> None:
    released = wire.default_registry()
    assert not any(
        released.wire_model(d, v).rounds_integers for d in released.documents for v in released.released
    )
    assert registry.wire_model("rendezvous", "1.3.0").rounds_integers


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("member", ["ranks", "epoch"])
def test_an_integer_past_64_bits_is_read_exactly_on_every_path(
    registry: Registry, member: str, lazy: bool
) -> None:
    value = [BIG, "h"] if member == "ranks" else BIG
    blob = wrap_rendezvous_blob(
        b"m", "a", "h:1", [], spec_version="1.3.0", registry=registry, **{member: value}
    )
    assert str(BIG).encode() in blob
    payload = unwrap_rendezvous_blob(blob, spec_version="1.3.0", lazy=lazy, registry=registry)
    assert payload.optional_members[member] == value
    written_as_double = blob.replace(str(BIG).encode(), b"1.8446744073709552e19")
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(written_as_double, spec_version="1.3.0", lazy=lazy, registry=registry)
    assert caught.value.rule == "INTEGER_LITERAL"
