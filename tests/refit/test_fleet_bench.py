"""The fleet benchmark's tables are real: the codec reads them back, shaped as the layout shards them."""

from __future__ import annotations

from pathlib import Path

from refitwire import unwrap_rendezvous_blob
from refitwire.bench._fleet import discover_once, publish_tables
from refitwire.refit._layout import layout_model
from refitwire.refit._store import DirectoryStore


def test_n_tables_of_the_moe_layout_are_discovered_whole(tmp_path: Path) -> None:
    model = layout_model("moe-30b-a3b", 1 << 20)
    store = DirectoryStore(tmp_path)
    sizes = publish_tables(store, model, 4)
    assert len(sizes) == 4 and store.keys() == [f"rank-{r:05d}" for r in range(4)]
    found = discover_once(store)
    assert found["tables"] == 4 and found["bytes"] == sum(sizes)
    assert found["entries"] == sum(len(model.publisher_boxes(r, 4)) for r in range(4))
    table = unwrap_rendezvous_blob(store.read("rank-00003") or b"").tensors
    assert "model.layers.0.mlp.experts.127.up_proj.weight" in {
        t.name for t in table
    }  # the last rank's expert
    assert all(t.full_shape == model[t.name].full_shape for t in table)
