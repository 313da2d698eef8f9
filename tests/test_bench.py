"""The bench runs end to end at tiny size and reports every section with ratios (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from numbers import Real
from pathlib import Path

import pytest
from refitwire import PublishedTensor, unwrap_rendezvous_blob, wrap_rendezvous_blob
from refitwire.bench import make_table, table_inputs


def test_the_generator_is_seeded_and_realistic() -> None:
    assert make_table(60, seed=1) == make_table(60, seed=1) != make_table(60, seed=2)
    table = make_table(200)
    assert all(isinstance(t, PublishedTensor) and 1 <= len(t.shards) <= 2 for t in table)
    assert {t.dtype for t in table} == {"torch.bfloat16", "torch.float32"}
    assert any(".mlp.experts." in t.name and t.name.endswith("gate_proj.weight") for t in table)
    blob = wrap_rendezvous_blob(**table_inputs(200))
    payload = unwrap_rendezvous_blob(blob)
    assert payload.tensors == table and payload.publisher_step is not None
    assert all(s.digest for t in payload.tensors for s in t.shards)


def _number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _nixl_importable() -> bool:
    from refitwire.refit._errors import NixlMissing

    try:
        import refitwire.refit._nixl  # noqa: F401
    except NixlMissing:  # only a missing NIXL; a broken import of ours must fail the test
        return False
    return True


def _timing(value: object) -> bool:
    return isinstance(value, dict) and all(_number(value[k]) for k in ("best_s", "median_s", "spread"))


@pytest.mark.slow
def test_quick_bench_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "refitwire", "bench", "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["schema"] == "refitwire.bench.v1" and result["quick"] is True
    assert result["machine"]["cores"] and result["versions"]["refitwire"]
    s = result["sections"]
    assert set(s) == {"decode", "quorum", "encode", "schema_validation", "digest", "nixl", "matrix"}
    upstream = result["upstream"]["status"] == "measured"

    decode_timings = ("refitwire_unwrap", "refitwire_unwrap_lazy", "json_loads", "orjson_loads",
                      "floor_orjson_and_schema", "floor_typed_decode")  # fmt: skip
    assert [row["entries"] for row in s["decode"]["sizes"]] == [8, 80]
    for row in s["decode"]["sizes"]:
        assert all(_timing(row[k]) for k in decode_timings)
        assert _number(row["ratios"]["refitwire_over_orjson"]) and _number(row["us_per_entry"])
        assert _number(row["ratios"]["floor_over_orjson"]) and _number(
            row["ratios"]["typed_floor_over_orjson"]
        )
        assert (
            _timing(row["upstream_unwrap"]) == upstream == _number(row["ratios"]["upstream_over_refitwire"])
        )
        assert _number(row["ratios"]["median_upstream_over_refitwire"]) == upstream
        assert _number(row["cpu_ratios"]["refitwire_over_orjson"]) and all(
            _number(row[k]["cpu_best_s"]) for k in decode_timings
        )
        assert _number(row["cpu_ratios"]["upstream_over_refitwire"]) == upstream
    assert set(s["decode"]["us_per_entry"]["eager"]) == {"8", "80"}
    assert _timing(s["quorum"]["refitwire_count_only"]) and s["quorum"]["count"] == s["quorum"]["entries"]
    assert [row["entries"] for row in s["encode"]["sizes"]] == [8, 80]
    for row in s["encode"]["sizes"]:
        assert _timing(row["refitwire_wrap"]) and _number(row["ratios"]["refitwire_over_json_dumps"])
        assert _timing(row["upstream_wrap"]) == upstream == _number(row["ratios"]["upstream_over_refitwire"])
        assert row["byte_identical_to_upstream"] is (True if upstream else None)
        assert _number(row["cpu_ratios"]["upstream_over_refitwire"]) == upstream
    assert s["encode"]["byte_identical_to_upstream"] is (True if upstream else None)
    assert _number(s["schema_validation"]["ratios"]["jsonschema_over_jsonschema_rs"])
    assert _number(s["digest"]["refitwire_digest"]["gb_per_s"]) and _number(s["digest"]["memcpy"]["gb_per_s"])
    assert _number(s["digest"]["ratios"]["refitwire_over_memcpy_throughput"])
    assert s["digest"]["digests_equal"] is (True if upstream else None)
    # Where NIXL imports, the section must have measured it: a broken NIXL bench fails here.
    assert s["nixl"]["status"] == ("measured" if _nixl_importable() else "not available"), s["nixl"]
    if _nixl_importable():
        assert s["nixl"]["bytes_verified"] is True
        for row in [*s["nixl"]["sizes"], s["nixl"]["descriptors"]]:
            assert _number(row["nixl_read"]["gb_per_s"]) and _number(row["ratio_to_memcpy"])
            assert row["nixl_read"]["gb_per_s"] > 0 and row["ratio_to_memcpy"] > 0
    else:
        assert s["nixl"]["reason"]
    assert s["matrix"]["status"] == "measured" and s["matrix"]["cases_per_second"] > 0
    assert s["matrix"]["required_failed"] == 0
    for name in ("decode", "quorum", "encode", "digest"):
        assert all("met" in g and "target" in g for g in s[name]["goals"])
    assert "goals:" in done.stdout and "NIXL" in done.stdout
