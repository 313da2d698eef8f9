"""The generated vector dimensions follow the schemas: a candidate's new member gets its vectors,
Required for the versions that declare it, with no edit to the tools."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from _support import VECTORS

TOOLS = VECTORS.parent.parent / "tools"
RANK = {"description": "Rank of the publisher.", "type": "integer", "minimum": 0, "maximum": 2147483647}


def _versions() -> tuple[str, str]:
    """The newest release, and a version after every one this checkout holds (a clone's candidate
    included): the candidate the test scaffolds."""
    from refitwire import wire

    registry = wire.default_registry()
    major, minor, _ = wire.parse_version(registry.known_versions("rendezvous")[-1]) or (1, 0, 0)
    return registry.released_versions()[-1], f"{major}.{minor + 1}.0"


GENERATE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from build_vectors import generated
valid, invalid = generated()
json.dump([v for v in valid + invalid if "member:/publisher_rank" in v["tags"]], sys.stdout)
"""


def _candidate_vectors(tmp: Path, version: str) -> list[dict[str, Any]]:
    schema = tmp / "schema"
    shutil.copytree(VECTORS.parent, schema, ignore=shutil.ignore_patterns("vectors", "protocol", "report"))
    env = {**os.environ, "REFITWIRE_SCHEMA_DIR": str(schema)}
    done = subprocess.run([sys.executable, "-m", "refitwire", "schema", "new", version, "--schema-dir", str(schema)],
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = schema / "rendezvous" / f"{version}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["properties"]["publisher_rank"] = {**RANK, "x-added-in": version}
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", GENERATE, str(TOOLS)], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def test_a_candidates_new_member_gets_required_vectors_with_no_tool_edit(tmp_path: Path) -> None:
    released, new = _versions()
    found = _candidate_vectors(tmp_path, new)
    invalid = [v for v in found if not v["expect"][new]["valid"]]
    rules = {v["expect"][new]["rule"] for v in invalid}
    assert {"INTEGER_LITERAL", "TYPE", "JSON"} <= rules and len(invalid) > 20, rules
    # the range rule of a member with no x-rule is the schema's: the literal forms past its bounds
    for v in invalid:
        if v["expect"][new]["rule"] != "JSON":
            assert v["expect"][released]["valid"], v["description"]  # a released reader must ignore it
            assert v["expect"][new]["pointer"] == "/publisher_rank"
            # The released readers accept it as they must; that makes it no less Required.
            assert v["tier"] == "required", v["description"]


def _coverage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOLS / "build_coverage.py"), *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_every_rule_at_every_place_has_a_vector_and_the_table_is_current() -> None:
    done = _coverage("--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_empty_cell_is_named() -> None:
    """Without the generated vectors (the hand-written ones alone), cells are empty and named."""
    sys.path.insert(0, str(TOOLS))
    try:
        import build_coverage
    finally:
        sys.path.remove(str(TOOLS))
    hand_written = [
        v
        for v in _load()
        if not {
            "integer-literal",
            "type",
            "near-miss",
            "dtype-table",
            "grammar",
            "integer-alias",
            "in-object",
            "document-order",
        }
        & set(v["tags"])
    ]
    found = build_coverage.covering(hand_written)
    empty = [key for key in build_coverage.required_cells() if not found.get(key)]
    assert ("TYPE", "/tensors/*/shards/*/shard_offset") in empty
    assert ("ELSIZE_DTYPE", "dtype float8_e8m0fnu") in empty
    assert ("INTEGER_LITERAL", "/tensors/*/shards/*/device_id") in empty
    assert ("TYPE", "/metadata_endpoint") in empty


def _load() -> list[dict[str, Any]]:
    return [v for name in ("legal-forms.json", "invalid.json")
            for v in json.loads((VECTORS / name).read_text(encoding="utf-8"))["vectors"]]  # fmt: skip


def _musts() -> Any:
    sys.path.insert(0, str(TOOLS))
    try:
        import _coverage_musts
    finally:
        sys.path.remove(str(TOOLS))
    return _coverage_musts


def test_every_must_sentence_is_a_row_with_cases() -> None:
    """Every MUST of SPEC.md is read as a row (one per rule-table MUST at least), and none is empty."""
    musts = _musts()
    spec = (VECTORS.parent / "SPEC.md").read_text(encoding="utf-8")
    rules = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", spec, flags=re.M))
    written = json.loads((VECTORS / "writer-output.json").read_text(encoding="utf-8"))["vectors"]
    _, gaps = musts.must_rows(written + _load(), rules)
    assert not gaps, gaps
    with_must = {r for r in rules if re.search(rf"^\| `{r}` \|[^|]*\bMUST\b", spec, flags=re.M)}
    assert with_must <= {r for s in musts.sentences(rules) for r in s.rules}


def test_a_must_sentence_no_case_covers_is_a_gap(tmp_path: Path) -> None:
    musts = _musts()
    planted = tmp_path / "PLANTED.md"
    planted.write_text("| `FROBNICATE` | A reader MUST frobnicate every tensor. | x |\n\nA writer SHOULD not.\n",
                       encoding="utf-8")  # fmt: skip
    lines, gaps = musts.must_rows(_load(), {"FROBNICATE"}, {"PLANTED": planted})
    assert len(gaps) == 1 and gaps[0].startswith("PLANTED:FROBNICATE:"), (gaps, lines)


def test_every_member_inside_the_table_is_broken_in_a_later_object() -> None:
    """A reader that checks only the first tensor, or only as many shards as the first tensor
    has, must fail a vector: each member of each level of the table is broken once in the second
    tensor, in its second shard for a shard's member (tools/_vector_later.py)."""
    from _support import load_vectors
    from refitwire import wire

    model = wire.default_registry().newest_model()
    tensors = model.table_at()
    shards = model.table_at(*tensors)
    later = {
        e["pointer"]
        for v in load_vectors()
        if "later-object" in v["tags"]
        for e in v["expect"].values()
        if not e["valid"]
    }
    for level, where in ((tensors, (tensors[-1], 1)), (shards, (tensors[-1], 1, shards[-1], 1))):
        for member in model.level(*level).members:
            if not wire.asserting(member.schema):  # any JSON value: nothing to break
                continue
            at = wire.pointer(*where, member.name)
            assert any(p == at or p.startswith(at + "/") for p in later), at


def test_every_declared_name_is_matched_exactly_as_json_reads_it() -> None:
    """Each level has a valid vector holding the names declared at other levels and its own names
    in another case (both unknown there, with values refused where they are known), and each
    declared name has one spelling it with a \\u escape (tools/_vector_names.py)."""
    from _support import blob_of, load_vectors
    from refitwire import wire

    named = [v for v in load_vectors() if "names" in v["tags"]]
    assert named and all(e["valid"] for v in named for e in v["expect"].values())
    model = wire.default_registry().newest_model()
    for level, members in model.levels.items():
        where = wire.pointer(*level) or "the top level"
        phrases = (f"unknown in {where}, with", f"names of {where} in another case")
        assert all(any(p in v["description"] for v in named) for p in phrases), where
        path = [s for part in level for s in (part, "0")]
        for member in members.members:
            escaped = [
                v for v in named if v["description"].startswith(wire.pointer(*path, member.name) + ":")
            ]
            assert escaped and b'"\\u00' in blob_of(escaped[0]), member.name
