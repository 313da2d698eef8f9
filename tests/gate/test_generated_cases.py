"""Cases by construction: six members of shapes the released schemas lack (one an array of
objects, a level of its own), added to a throwaway copy of the checkout with no code edited
and through the documented commands only
(docs/wire-model.md, "Adding an optional member": ``refitwire schema new``, the schema files,
a SPEC row, ``python tools/regenerate.py``, ``refitwire schema release``).

Then: the vectors regenerate and the reference passes every one; the vectors, the matrix's
payloads and the writer refusals carry every enum value, both bounds, each inner required
member left out, an unknown inner member and each length and item breach, each with the rule
and pointer the model gives; all of it is still sent after the release; a reader blind to one
keyword is caught, for each keyword, by a named case about a new member.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from refitwire.compat.report import _report
from refitwire.compat.upstream import envs

pytestmark = [pytest.mark.slow, pytest.mark.upstream]

ROOT = Path(__file__).resolve().parents[2]
BLIND = Path(__file__).with_name("keyword_blind_testee.py")
#: level ($defs name, or the top) -> the members added there, of the issue's four shapes, a fifth and a level
MEMBERS: dict[str, dict[str, Any]] = {
    "": {
        "job": {"description": "The job.", "type": "object", "properties": {
            "rank": {"type": "integer", "minimum": 0, "maximum": 1023},
            "world_size": {"type": "integer", "minimum": 1, "maximum": 1024}},
            "required": ["rank", "world_size"], "additionalProperties": False, "x-rule": "JOB_FORMAT",
            "x-added-in": "1.3.0"},
        "job_id": {"description": "The job's id.", "type": "string", "pattern": "^[a-z][a-z0-9-]*$",
                   "maxLength": 64, "x-rule": "JOB_ID_FORMAT", "x-added-in": "1.3.0"},
        "ratio": {"description": "A ratio.", "type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1,
                  "x-rule": "RATIO_RANGE", "x-added-in": "1.3.0"},
    },
    "tensor": {"layout": {"description": "Memory layout.", "type": "string", "enum": ["row_major", "col_major"],
                          "x-rule": "LAYOUT_NAME", "x-added-in": "1.3.0"},
               "scales": {"description": "Block scales.", "type": "array", "minItems": 1, "maxItems": 3,
                          "x-rule": "SCALES_FORMAT", "x-added-in": "1.3.0", "items": {"type": "object", "required": ["block"], "properties": {
                              "block": {"type": "integer", "minimum": 1, "maximum": 4096, "x-added-in": "1.3.0"}}}}},
    "shard": {"lanes": {"description": "Lanes.", "type": "array", "maxItems": 4, "x-rule": "LANES_RANGE", "x-added-in": "1.3.0",
                        "items": {"type": "integer", "minimum": 0, "maximum": 255}}},
}  # fmt: skip
#: each member's rule (docs/wire-model.md: a member's keywords past its type state an ``x-rule``)
SPEC_ROW = "\n".join((
    "| `JOB_ID_FORMAT` | (1.3.0) `job_id`, when present, MUST match `^[a-z][a-z0-9-]*$` and have at most 64 characters. | `/job_id` |",
    "| `JOB_FORMAT` | (1.3.0) `job`, when present, MUST hold `rank` in [0, 1023] and `world_size` in [1, 1024], and no other member. | `/job` |",
    "| `RATIO_RANGE` | (1.3.0) `ratio`, when present and not `null`, MUST be a number in (0, 1]. | `/ratio` |",
    "| `LAYOUT_NAME` | (1.3.0) `layout`, when present, MUST be `row_major` or `col_major`. | `/tensors/i/layout` |",
    "| `SCALES_FORMAT` | (1.3.0) `scales`, when present, MUST hold 1 to 3 objects, each with a `block` in [1, 4096]. | `/tensors/i/scales` |",
    "| `LANES_RANGE` | (1.3.0) `lanes`, when present, MUST hold at most 4 integers in [0, 255]. | `/tensors/i/shards/j/lanes` |",
))  # fmt: skip
T, S = "/tensors/0", "/tensors/0/shards/0"
#: member tag -> (keyword, rule, pointer at 1.3.0) that its invalid vectors must name, each
WANTED: dict[str, set[tuple[str, str, str]]] = {
    "/tensors/*/layout": {("enum", "LAYOUT_NAME", f"{T}/layout"), ("type", "TYPE", f"{T}/layout")},
    "/job": {("required", "REQUIRED", "/job"), ("additionalProperties", "JOB_FORMAT", "/job"),
             ("minimum", "JOB_FORMAT", "/job/rank"), ("maximum", "JOB_FORMAT", "/job/rank"),
             ("minimum", "JOB_FORMAT", "/job/world_size"), ("maximum", "JOB_FORMAT", "/job/world_size"),
             ("type", "TYPE", "/job/rank"), ("type", "TYPE", "/job"),
             ("integer-literal", "INTEGER_LITERAL", "/job/rank")},
    "/tensors/*/shards/*/lanes": {("maxItems", "LANES_RANGE", f"{S}/lanes"), ("minimum", "LANES_RANGE", f"{S}/lanes/0"),
                                  ("maximum", "LANES_RANGE", f"{S}/lanes/0"), ("maximum", "LANES_RANGE", f"{S}/lanes/1"),
                                  ("type", "TYPE", f"{S}/lanes/0"), ("type", "TYPE", f"{S}/lanes")},
    "/tensors/*/scales": {("minItems", "SCALES_FORMAT", f"{T}/scales"), ("maxItems", "SCALES_FORMAT", f"{T}/scales"),
                          ("required", "REQUIRED", f"{T}/scales/0")},
    "/tensors/*/scales/*/block": {("integer-literal", "INTEGER_LITERAL", f"{T}/scales/0/block"),
                                  ("maximum", "SCALES_FORMAT", f"{T}/scales/0/block")},
    "/job_id": {("maxLength", "JOB_ID_FORMAT", "/job_id"), ("pattern", "JOB_ID_FORMAT", "/job_id"),
                ("type", "TYPE", "/job_id")},
    "/ratio": {("exclusiveMinimum", "RATIO_RANGE", "/ratio"), ("maximum", "RATIO_RANGE", "/ratio"), ("type", "TYPE", "/ratio")},
}  # fmt: skip
#: keyword -> the new member whose vector must catch a reader blind to it
BLIND_TO = {"enum": "/tensors/*/layout", "required": "/job", "additionalProperties": "/job", "minimum": "/job",
            "maximum": "/ratio", "exclusiveMinimum": "/ratio", "maxItems": "/tensors/*/shards/*/lanes",
            "maxLength": "/job_id", "pattern": "/job_id", "type": "/tensors/*/shards/*/lanes",
            "minItems": "/tensors/*/scales"}  # fmt: skip
#: member -> words of the refusal descriptions the writers must be handed, one per keyword
REFUSED = {
    "/tensors/0/layout": ("not one of its values",),
    "/job": ("without its required member rank", "without its required member world_size",
             "with an unknown member", "rank: 1024, above", "world_size: 0, below"),
    "/tensors/0/shards/0/lanes": ("more than its maxItems 4", "item 0: 256, above", "item 0: -1, below"),
    "/tensors/0/scales": ("more than its maxItems 3", "fewer than its minItems 1"),
    "/job_id": ("longer than its maxLength 64", "not matching its pattern"),
    "/ratio": ("below its exclusiveMinimum 0", "above its maximum 1"),
}  # fmt: skip

IN_CLONE = 'import json, sys\nsys.path.insert(0, "tools")\nimport _clone  # noqa: F401\n'
INSPECT = (
    IN_CLONE
    + """
from refitwire.compat.cases import _built_cases, _cases
from refitwire.compat.keywords import domain
from refitwire import wire
version = sys.argv[1]
model = wire.default_registry().wire_model("rendezvous", version)
payloads = _cases.generated_payloads(3, 12, wire.default_registry())
asked = [_cases.conform(p, version, n, wire.default_registry()) for n, p in enumerate(payloads.values())]
json.dump({
    "released": list(wire.default_registry().released_versions()),
    "vectors": list(_cases.vectors()),
    "refusals": [[c.rule, c.description] for c in _built_cases.refusal_cases(version, wire.default_registry())],
    "domains": {m.place: list(domain(m.schema)) for m in model.members() if m.added_in == version},
    "required": [m.place for m in model.members() if m.added_in == version and m.required],
    "asked": asked,
}, sys.stdout)
"""
)
BANK = (
    IN_CLONE
    + """
from pathlib import Path
from refitwire import compat, wire
blind, keywords, out = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
schema = str(Path("schema").resolve())
testees = [compat.Participant(f"blind: {k}", (sys.executable, blind, k, schema, "1.3.0"), "third-party")
           for k in keywords]
plan = compat.Plan(registry=wire.default_registry(), participants=testees, seed=7, examples=2, timeout_s=5.0, focus=[t.label for t in testees], limits=False,
                   schema_dir=Path(schema))
with open(out, "w", encoding="utf-8") as stream:
    compat.run_matrix(plan, stream)
"""
)


@pytest.fixture(autouse=True)
def _upstream_built() -> None:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream envs {missing} not built under {envs.cache_dir()}")


def _copy_checkout(tmp: Path) -> Path:
    """The checkout's tracked files (what a clone holds), without its git history."""
    repo = tmp / "repo"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    return repo


def _run(repo: Path, *argv: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, envs.ENV_VAR: str(envs.cache_dir()), "REFITWIRE_SCHEMA_DIR": str(repo / "schema")}
    return subprocess.run([sys.executable, *argv], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=timeout)  # fmt: skip


def _add_members(repo: Path) -> None:
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        for level, members in MEMBERS.items():
            if level or document == "rendezvous":
                (schema["$defs"][level] if level else schema)["properties"].update(members)
        path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")


def _inspect(repo: Path) -> dict[str, Any]:
    done = _run(repo, "-c", INSPECT, "1.3.0")
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The copy with the five members, regenerated; what it holds before and after the release."""
    repo = _copy_checkout(tmp_path_factory.mktemp("clone"))
    done = _run(repo, "-m", "refitwire", "schema", "new", "1.3.0")
    assert done.returncode == 0, done.stderr
    _add_members(repo)
    # A new x-rule without its SPEC row fails the regeneration, naming the rule.
    done = _run(repo, "tools/regenerate.py", "--check")
    assert done.returncode == 1 and "'JOB_ID_FORMAT' has no row in schema/SPEC.md" in done.stderr, done.stderr
    spec = repo / "schema" / "SPEC.md"
    text = spec.read_text(encoding="utf-8")
    step = next(line for line in text.splitlines() if line.startswith("| `STEP_RANGE` |"))
    spec.write_text(text.replace(step, f"{step}\n{SPEC_ROW}"), encoding="utf-8")
    done = _run(repo, "tools/regenerate.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _run(repo, "tools/regenerate.py", "--check").returncode == 0
    before = _inspect(repo)
    keywords = ["none", *BLIND_TO]
    bank = repo.parent / "bank.jsonl"
    done = _run(repo, "-c", BANK, str(BLIND), ",".join(keywords), str(bank), timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    done = _run(repo, "-m", "refitwire", "schema", "release", "1.3.0")
    assert done.returncode == 0, done.stderr
    done = _run(repo, "tools/regenerate.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"before": before, "after": _inspect(repo), "bank": _report.read_report(bank)}


def _tag(place: str) -> str:
    """The tag of the generated vectors about the member at ``place`` (``/tensors/*/layout``)."""
    return "member:" + place.replace("/*", "")


def _new_member_vectors(vectors: list[dict[str, Any]], member: str) -> list[dict[str, Any]]:
    return [v for v in vectors if _tag(member) in v["tags"]]


def _parsed(vector: dict[str, Any]) -> Any:
    try:
        return json.loads(vector["blob"]) if "blob" in vector else None
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit
        return None


def _value_at(vector: dict[str, Any], at: str) -> Any:
    value: Any = json.loads(vector["blob"])
    for token in at.split("/")[1:]:
        value = value[int(token)] if isinstance(value, list) else value.get(token, "<absent>")
    return value


def _values_at(node: Any, tokens: list[str]) -> list[Any]:
    """The values at a place (``*``: every item) of a payload; ``"<absent>"`` where an object lacks it."""
    if node is None and tokens:
        return []
    if not tokens:
        return [node]
    if tokens[0] == "*":
        return [found for item in node or [] for found in _values_at(item, tokens[1:])]
    if not isinstance(node, dict) or tokens[0] not in node:
        return ["<absent>"] if len(tokens) == 1 and isinstance(node, dict) else []
    return _values_at(node[tokens[0]], tokens[1:])


@pytest.mark.parametrize("when", ["before", "after"])
def test_every_value_and_every_break_of_each_new_member_is_a_vector(clone: dict[str, Any], when: str) -> None:
    seen = clone[when]
    assert ("1.3.0" in seen["released"]) == (when == "after")
    for member, wanted in WANTED.items():
        found = _new_member_vectors(seen["vectors"], member)
        # every value of its domain is read back at 1.3.0 (in a vector of its own, or one that
        # already had those bytes), and every vector about it is read (ignoring it) at 1.2.0
        valid = [
            v for v in seen["vectors"] if v["document"] == "rendezvous" and v["expect"]["1.3.0"]["valid"]
        ]
        values = [value for v in valid for value in _values_at(_parsed(v), member.split("/")[1:])]
        assert all(value in values for value in seen["domains"][member]), (member, values)
        assert all(v["expect"]["1.2.0"]["valid"] for v in found if v["expect"]["1.3.0"].get("rule") != "JSON")
        # every keyword broken, with the model's rule and pointer
        named = {(k, v["expect"]["1.3.0"]["rule"], v["expect"]["1.3.0"]["pointer"])
                 for v in found if not v["expect"]["1.3.0"]["valid"] for k in v["tags"]}  # fmt: skip
        assert wanted <= named, (member, wanted - named)
    omitted = {k for v in _new_member_vectors(seen["vectors"], "/job") for k in ("rank", "world_size")
               if "required" in v["tags"] and k not in _value_at(v, "/job")}  # fmt: skip
    assert omitted == {"rank", "world_size"}  # each inner required member left out, one vector each


@pytest.mark.parametrize("when", ["before", "after"])
def test_writers_are_handed_every_value_and_asked_to_refuse_every_break(
    clone: dict[str, Any], when: str
) -> None:
    seen = clone[when]
    for member, words in REFUSED.items():
        described = [d for _, d in seen["refusals"] if d.startswith((f"{member}:", f"{member}/"))]
        for word in words:
            assert any(word in d for d in described), (member, word, described)
    rules = {(d.split(":")[0], r) for r, d in seen["refusals"] if "pattern" in d or "one of its values" in d}
    assert {("/job_id", "JOB_ID_FORMAT"), ("/tensors/0/layout", "LAYOUT_NAME")} <= rules
    for place, values in seen["domains"].items():
        carried = [value for payload in seen["asked"] for value in _values_at(payload, place.split("/")[1:])]
        present = [v for v in values if v is not None]
        assert all(v in carried for v in present), (place, present, carried)
        if place not in seen["required"]:  # (a required member of a new level is always there)
            assert "<absent>" in carried or None in carried, place  # and its absence


def test_the_reference_passes_every_vector_and_each_blind_reader_is_caught(clone: dict[str, Any]) -> None:
    bank: _report.Report = clone["bank"]
    vectors = {f"read:{v['id']}": v for v in clone["before"]["vectors"]}
    correct = [r for r in bank.results if r.reader == "blind: none" and r.case.split("#")[0] in vectors]
    assert {r.case.split("#")[0] for r in correct} == {
        c for c, v in vectors.items() if v["document"] == "rendezvous"
    }
    assert not [r.case for r in correct if r.outcome.bad], "the reference fails its own vectors"
    for keyword, member in BLIND_TO.items():
        caught = [r.case for r in bank.results if r.reader == f"blind: {keyword}" and r.outcome.bad
                  and r.case in vectors and _tag(member) in vectors[r.case]["tags"]
                  and keyword in vectors[r.case]["tags"]]  # fmt: skip
        assert caught, f"a reader blind to {keyword} is caught by no vector of {member}"
