"""Every kind of change a new version may make, read by the library as it says (issue 45).

In-process and quick: each change is made the way a contributor makes it (a candidate 1.3.0
from ``refitwire schema new`` in a throwaway checkout, or a SPEC.md row or paragraph stamped
``(1.3.0)``), then read back through the public API and the engine. The same changes go
through ``python tools/regenerate.py`` and the gate in throwaway clones in
``tests/gate/test_change_kinds_clone.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _gate_helpers import SCHEMA, candidate_registry, make_repo, real, refitwire
from refitwire import (
    InvalidBlob,
    PublishedShard,
    PublishedTensor,
    unwrap_rendezvous_blob,
    wrap_rendezvous_blob,
)
from refitwire.gate import Document, Rule, diff
from refitwire.wire import Registry, SpecError, compile_model, parse_spec

SPEC = (SCHEMA / "SPEC.md").read_text(encoding="utf-8")
RELEASED = ("1.0.0", "1.1.0", "1.2.0")
MERGE_ROW = next(line for line in SPEC.splitlines() if line.startswith("| `MERGE_CONSISTENT` |"))
#: the last dtype paragraph's end, where a contributor adds a paragraph of their own
DTYPES_END = "`complex64`; 16: `complex128`.\n"
NEW_DTYPE = "\n(1.3.0) Dtype sizes added in 1.3.0 (`ELSIZE_DTYPE`): 1 byte: `float4_e2m1fn_x2`.\n"


def _with_spec(tmp: Path, edit: Any) -> Registry:
    """The registry of a throwaway checkout's schema folder after ``refitwire schema new 1.3.0``,
    its SPEC.md's text changed by ``edit`` (never this checkout's SPEC.md)."""
    repo = make_repo(tmp)
    done = refitwire(repo, "schema", "new", "1.3.0")
    assert done.returncode == 0, done.stderr
    spec = repo / "schema" / "SPEC.md"
    spec.write_text(edit(spec.read_text(encoding="utf-8")), encoding="utf-8")
    return Registry.from_folder(repo / "schema")


def _tensor(dtype: str = "torch.bfloat16", elsize: int = 2) -> PublishedTensor:
    shard = PublishedShard(agent_name="a", device_id=0, addr=4096, shard_offset=[0, 0], shape=[4, 4])
    return PublishedTensor(name="w", dtype=dtype, elsize=elsize, full_shape=[4, 4], shards=[shard])


# -- a rule that changes in a new version, in a row of its own ---------------------------------


def _rule_changed_in_1_3_0(spec: str = SPEC) -> str:
    """MERGE_CONSISTENT stated anew for 1.3.0: tables need no longer agree on ``elsize``."""
    assert "`elsize` and `full_shape`" in MERGE_ROW and MERGE_ROW in spec
    changed = MERGE_ROW.replace("| Tables", "| (1.3.0) Tables").replace(
        "`elsize` and `full_shape`", "`full_shape`"
    )
    return spec.replace(MERGE_ROW, f"{MERGE_ROW}\n{changed}")


def _dtype_added_in_1_3_0(spec: str = SPEC) -> str:
    assert DTYPES_END in spec
    return spec.replace(DTYPES_END, DTYPES_END + NEW_DTYPE)


def test_a_rule_row_for_a_new_version_changes_the_rule_from_that_version_on() -> None:
    before, after = parse_spec(SPEC), parse_spec(_rule_changed_in_1_3_0())
    assert "elsize" in after.rules_of("1.2.0")["MERGE_CONSISTENT"].terms
    assert "elsize" not in after.rules_of("1.3.0")["MERGE_CONSISTENT"].terms
    assert after.rules_of("1.3.0")["MERGE_CONSISTENT"].since == "1.3.0"
    # the released versions' facts, and so their locks, are as they were
    assert [after.lock(v) for v in RELEASED] == [before.lock(v) for v in RELEASED]
    assert after.lock("1.3.0") != before.lock("1.3.0")


def test_a_rule_stated_twice_for_one_version_is_still_an_error() -> None:
    with pytest.raises(SpecError, match="stated twice"):
        parse_spec(SPEC.replace(MERGE_ROW, f"{MERGE_ROW}\n{MERGE_ROW}"))


def test_the_engine_reads_a_changed_rule_per_version(tmp_path: Path) -> None:
    from refitwire.compat.cases._merge import merge_terms  # what the merge vectors and checks are built on

    registry = _with_spec(tmp_path, _rule_changed_in_1_3_0)
    terms = {v: merge_terms(registry.wire_model("rendezvous", v), registry)[1] for v in ("1.2.0", "1.3.0")}
    assert terms == {"1.2.0": ("dtype", "elsize", "full_shape"), "1.3.0": ("dtype", "full_shape")}


# -- a dtype listed from a new version ---------------------------------------------------------


def test_a_dtype_listed_from_a_new_version_leaves_the_released_versions_alone() -> None:
    before, after = parse_spec(SPEC), parse_spec(_dtype_added_in_1_3_0())
    assert [after.lock(v) for v in RELEASED] == [before.lock(v) for v in RELEASED]
    assert after.dtype_sizes_of("1.3.0")["float4_e2m1fn_x2"] == 1
    assert "float4_e2m1fn_x2" not in after.dtype_sizes_of("1.2.0")
    assert after.dtype_sizes["float4_e2m1fn_x2"] == 1  # every label any version lists (the digest vectors')
    with pytest.raises(SpecError, match="listed twice"):
        parse_spec(SPEC.replace(DTYPES_END, DTYPES_END + NEW_DTYPE.replace("`float4_e2m1fn_x2`", "`int8`")))


def test_a_reader_holds_elsize_to_the_dtypes_its_version_lists(tmp_path: Path) -> None:
    registry = _with_spec(tmp_path, _dtype_added_in_1_3_0)
    wrong = [_tensor("torch.float4_e2m1fn_x2", 2)]
    blob = wrap_rendezvous_blob(b"m", "a", "h:1", wrong, spec_version="1.2.0", registry=registry)
    assert unwrap_rendezvous_blob(blob, spec_version="1.2.0", registry=registry).tensors[0].elsize == 2
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry)
    assert (caught.value.rule, caught.value.pointer) == ("ELSIZE_DTYPE", "/tensors/0/elsize")


# -- members of any shape: true, {}, and required ones -------------------------------------------


def _with(schema: dict[str, Any], **members: Any) -> dict[str, Any]:
    schema["properties"].update(members)
    return schema


@pytest.mark.parametrize("shape", [True, {}], ids=["true", "empty"])
def test_a_member_of_any_value_is_a_member_never_dropped(shape: Any) -> None:
    model = compile_model(_with(real("rendezvous", "1.2.0"), anything=shape), "rendezvous")
    assert "anything" in model.top
    assert model.top["anything"].types == ()  # any JSON value


def test_a_member_of_any_value_is_written_and_read_back_as_any_json_value(tmp_path: Path) -> None:
    def edit(document: str, schema: dict[str, Any]) -> None:
        if document == "rendezvous":
            _with(schema, anything={"description": "Any JSON value.", "x-added-in": "1.3.0"})

    registry = candidate_registry(tmp_path, edit)
    for value in ({"x": [1, None, "s"]}, [True, 2.5], "s", 0, False):
        blob = wrap_rendezvous_blob(b"m", "a", "h:1", [_tensor()], spec_version="1.3.0", registry=registry,
                                    anything=value)  # fmt: skip
        assert unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry).anything == value
        old = wrap_rendezvous_blob(b"m", "a", "h:1", [_tensor()], spec_version="1.2.0", registry=registry,
                                   anything=value)  # fmt: skip
        assert b"anything" not in old  # a 1.2.0 writer does not know it


@pytest.mark.parametrize("shape", [True, False])
def test_the_gate_refuses_a_boolean_member_saying_what_to_write(shape: bool) -> None:
    old = real("rendezvous", "1.2.0")
    new = _with(real("rendezvous", "1.2.0"), anything=shape)
    new["x-spec-version"] = "1.3.0"
    changes = [c for c in diff(Document("old", old), Document("new", new)) if c.rule == Rule.ADDED_IN_MISSING]
    assert len(changes) == 1, changes
    stamp = '{"x-added-in": "1.3.0"}' if shape else '{"not": {}, "x-added-in": "1.3.0"}'
    assert f"is the boolean schema {str(shape).lower()}, which cannot carry x-added-in: write {stamp}" in (
        changes[0].detail
    )


def test_a_member_required_from_a_new_version_is_written_and_read_back(tmp_path: Path) -> None:
    rank = {"description": "Rank.", "type": "integer", "minimum": 0, "maximum": 1000, "x-added-in": "1.3.0"}

    def edit(document: str, schema: dict[str, Any]) -> None:
        if document == "rendezvous":
            _with(schema, publisher_rank=rank)["required"].append("publisher_rank")

    registry = candidate_registry(tmp_path, edit)
    blob = wrap_rendezvous_blob(b"m", "a", "h:1", [_tensor()], spec_version="1.3.0", registry=registry,
                                publisher_rank=3)  # fmt: skip
    assert unwrap_rendezvous_blob(blob, spec_version="1.3.0", registry=registry).publisher_rank == 3
    # released readers ignore it; a 1.3.0 reader refuses a blob written without it
    assert unwrap_rendezvous_blob(blob, spec_version="1.2.0", registry=registry).agent_name == "a"
    old = wrap_rendezvous_blob(b"m", "a", "h:1", [_tensor()], spec_version="1.2.0", registry=registry)
    with pytest.raises(InvalidBlob) as caught:
        unwrap_rendezvous_blob(old, spec_version="1.3.0", registry=registry)
    assert (caught.value.rule, caught.value.pointer) == ("REQUIRED", "")
