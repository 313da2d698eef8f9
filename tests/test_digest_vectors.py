"""Sanity of the golden digest vectors (schema/vectors/digest/): shape, ids, coverage of SPEC.md
section 4, the reference's agreement, and (with the upstream envs) that the released code still
gives every recorded digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import jsonschema
import numpy as np
import pytest
from _support import VECTORS
from refitwire import tensor_digest, wire
from refitwire._spec import dtype_sizes
from refitwire.compat.cases._digest import tensor_bytes
from refitwire.compat.upstream import envs

FOLDER = VECTORS / "digest"
DOC = json.loads((FOLDER / "digest.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DOC["vectors"]
ROW = 4096


def box_bytes(v: dict[str, Any]) -> bytes:
    """The bytes the digest is of: the box, row-major (written here from SPEC.md section 4)."""
    size = dtype_sizes(wire.default_registry())[v["dtype"].removeprefix("torch.")]
    full = np.frombuffer(tensor_bytes(v), dtype=np.dtype(f"V{size}")).reshape(v["shape"])
    if "box" in v:
        box = v["box"]
        full = full[tuple(slice(o, o + e) for o, e in zip(box["shard_offset"], box["shape"]))]
    return np.ascontiguousarray(full).tobytes()


def test_the_file_matches_its_schema() -> None:
    meta = json.loads((FOLDER / "digest.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(meta).validate(DOC)


def test_ids_are_unique_and_derived_from_content() -> None:
    ids = [v["id"] for v in CASES]
    assert len(set(ids)) == len(ids)
    for v in CASES:
        box = [v["box"]["shard_offset"], v["box"]["shape"]] if "box" in v else None
        key = json.dumps([v["dtype"], v["shape"], box, v["data_b64"]], sort_keys=True)
        key = json.dumps([key, v["repeat"]]) if "repeat" in v else key
        assert v["id"] == "d-" + hashlib.sha256(key.encode()).hexdigest()[:12], v["description"]


def test_each_input_fills_its_shape_and_its_box_fits() -> None:
    for v in CASES:
        size = dtype_sizes(wire.default_registry())[v["dtype"].removeprefix("torch.")]
        assert len(tensor_bytes(v)) == size * int(np.prod(v["shape"], dtype=np.int64)), v["id"]
        if "box" in v:
            box = v["box"]
            assert len(box["shard_offset"]) == len(box["shape"]) == len(v["shape"]), v["id"]
            assert all(o + e <= n for o, e, n in zip(box["shard_offset"], box["shape"], v["shape"])), v["id"]


def test_every_dtype_label_of_the_spec_is_covered_with_and_without_its_prefix() -> None:
    labels = {v["dtype"] for v in CASES}
    assert {label.removeprefix("torch.") for label in labels} >= set(dtype_sizes(wire.default_registry()))
    assert any(x.startswith("torch.") for x in labels) and any(not x.startswith("torch.") for x in labels)


def test_sizes_cover_every_branch_of_the_digest() -> None:
    """Empty; every ragged length; a tail only; exact rows; rows with a tail; boundaries either side."""
    sizes = {len(box_bytes(v)) for v in CASES}
    assert 0 in sizes
    assert {n % 4 for n in sizes} == {0, 1, 2, 3}
    assert {ROW - 1, ROW, ROW + 1, 2 * ROW} <= sizes
    assert any(n > 2 * ROW and n % ROW and n % 4 for n in sizes)  # rows, tail words and ragged bytes


def test_boxes_that_are_not_contiguous_in_their_tensor_are_covered() -> None:
    strided = [
        v
        for v in CASES
        if "box" in v and any(e != n for e, n in zip(v["box"]["shape"][1:], v["shape"][1:])) and box_bytes(v)
    ]
    assert len(strided) >= 3
    assert any(len(v["shape"]) == 3 for v in strided)
    assert any(len(box_bytes(v)) > ROW for v in strided)


@pytest.mark.parametrize("v", CASES, ids=[v["id"] for v in CASES])
def test_the_reference_digest_agrees_with_upstream(v: dict[str, Any]) -> None:
    assert tensor_digest(box_bytes(v)) == v["digest"], v["description"]


@pytest.mark.upstream
def test_the_released_code_still_gives_every_recorded_digest() -> None:
    """An upstream change to the algorithm (a new release's env) shows here, and in the matrix."""
    version = DOC["upstream"].split()[-1]
    if envs.find_env(version) is None:
        pytest.skip(f"no upstream env for modelexpress {version}: python -m refitwire.compat.upstream.envs")
    tool = VECTORS.parent.parent / "tools" / "build_digest_vectors.py"
    # The tool imports this checkout (tools/_clone.py), whose default env folder is the checkout's;
    # it is told where this process found the env (an installed kit looks in the user cache).
    where = {**os.environ, envs.ENV_VAR: os.pathsep.join(map(str, envs.cache_dirs()))}
    proc = subprocess.run(
        [sys.executable, str(tool), "--check", "--upstream", version],
        capture_output=True,
        text=True,
        timeout=600,
        env=where,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_digest_case_can_be_rerun_alone() -> None:
    """``--case digest:ID`` finds the case and shows its input and upstream's digest."""
    from refitwire.compat.report import _rerun
    from refitwire.compat.runner._run import Plan

    v = CASES[0]
    plan = Plan(registry=wire.default_registry(), participants=[], examples=0)
    assert _rerun.known(plan, f"digest:{v['id']}") and not _rerun.known(plan, "digest:d-000000000000")
    lines = list(_rerun.describe(plan, [], f"digest:{v['id']}"))
    assert lines[0] == f"case digest:{v['id']}: {v['description']} (SPEC.md section 4)"
    assert f"upstream's digest: {v['digest']}" in lines
