"""What the spec says is a function of a registry (``refitwire._spec``): the reader and writer
follow the SPEC.md of the registry they are given, and the default registry is whatever
``$REFITWIRE_SCHEMA_DIR`` names when it is asked for, never a value frozen at import."""

from __future__ import annotations

from pathlib import Path

import pytest
import refitwire
from _support import proposed_schema
from refitwire import InvalidBlob, PublishedShard, PublishedTensor, latest, unwrap_rendezvous_blob, wire
from refitwire.wire import blob_limit, dtype_sizes

#: A dtype label no released SPEC.md knows, and its size in the folder made below.
NEW_DTYPE, NEW_SIZE = "float128", 16
SMALL_LIMIT = 4096


def _folder(tmp_path: Path) -> Path:
    """A schema folder whose SPEC.md knows one more dtype and lowers the blob size limit."""
    return proposed_schema(
        tmp_path / "schema",
        {
            "16: `complex128`.": f"16: `complex128`, `{NEW_DTYPE}`.",
            "| blob size 64 MiB |": f"| blob size {SMALL_LIMIT // 1024} KiB |",
        },
    )


def _blob(dtype: str, elsize: int, tensors: int = 1) -> bytes:
    shard = PublishedShard(agent_name="a", device_id=0, addr=4096, shard_offset=[0], shape=[4])
    table = [
        PublishedTensor(name=f"t{i}", dtype=dtype, elsize=elsize, full_shape=[4], shards=[shard])
        for i in range(tensors)
    ]
    return refitwire.wrap_rendezvous_blob(b"m", "a", "h:1", table, 1)


def test_the_reader_follows_the_spec_md_of_its_registry(tmp_path: Path) -> None:
    """ELSIZE_DTYPE and BLOB_SIZE read from the given registry's SPEC.md, on every path of the
    reader (the typed fast path, the exact engine, the quorum read), not the package's."""
    proposed = wire.Registry.from_folder(_folder(tmp_path))
    assert dtype_sizes(proposed)[NEW_DTYPE] == NEW_SIZE and NEW_DTYPE not in dtype_sizes(
        wire.default_registry()
    )
    assert blob_limit(proposed) == SMALL_LIMIT < blob_limit(wire.default_registry())

    unknown_here = _blob(f"torch.{NEW_DTYPE}", 2)  # an unknown dtype: its elsize is authoritative
    unwrap_rendezvous_blob(unknown_here)
    with pytest.raises(InvalidBlob) as wrong_size:
        unwrap_rendezvous_blob(unknown_here, registry=proposed)
    assert [(v.rule, v.pointer) for v in wrong_size.value.violations] == [
        ("ELSIZE_DTYPE", "/tensors/0/elsize")
    ]
    document = refitwire.wire.parse(unknown_here, registry=proposed)
    assert [v.rule for v in refitwire.violations(document, "rendezvous", latest(), proposed)] == [
        "ELSIZE_DTYPE"
    ]

    large = _blob("torch.float32", 4, tensors=40)
    assert len(large) > SMALL_LIMIT
    for with_tensors in (True, False):
        unwrap_rendezvous_blob(large, with_tensors=with_tensors)
        with pytest.raises(InvalidBlob) as too_large:
            unwrap_rendezvous_blob(large, with_tensors=with_tensors, registry=proposed)
        assert [v.rule for v in too_large.value.violations] == ["BLOB_SIZE"], with_tensors
        assert f"{SMALL_LIMIT}-byte limit" in str(too_large.value)


def test_the_default_registry_is_what_the_variable_names_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Setting ``$REFITWIRE_SCHEMA_DIR`` in a running process names another default registry at
    once (nothing to reload or clear), and unsetting it names the package's folder again."""
    folder = _folder(tmp_path)
    package, large = wire.default_registry(), _blob("torch.float32", 4, tensors=40)
    monkeypatch.setenv(wire.ENV_VAR, str(folder))
    assert wire.default_registry().folder == folder.resolve()
    assert (
        blob_limit(wire.default_registry()) == SMALL_LIMIT
        and dtype_sizes(wire.default_registry())[NEW_DTYPE] == NEW_SIZE
    )
    with pytest.raises(InvalidBlob, match="BLOB_SIZE"):
        unwrap_rendezvous_blob(large)
    monkeypatch.delenv(wire.ENV_VAR)
    assert wire.default_registry() is package  # one registry per folder, built once
    assert NEW_DTYPE not in dtype_sizes(wire.default_registry())
