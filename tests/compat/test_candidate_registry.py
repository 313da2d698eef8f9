"""A candidate version is first-class: every run is handed one registry by its entry point and
nothing below falls back to the default one (issue 44). The checks here run with the
default-registry factory made to raise, so a function that quietly asks for the default (as
``_checks.refusal`` once did, crashing 185 cases of a candidate's run) fails them."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat import Plan, candidates, reference, report_ok, run_matrix
from refitwire.compat._results import KIT_CRASHED
from refitwire.compat.cases._built_cases import refusal_cases

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gate"))
from _gate_helpers import make_repo, refitwire, write

ROOT = Path(__file__).resolve().parents[2]
#: The package's folders (pyproject's package-dir); the frozen generations are stdlib scripts.
PACKAGE = [ROOT / d for d in ("reference", "compat", "gate", "cli", "bench")]
#: The public entry points that may be given no registry (``refitwire.__all__``'s functions, and
#: the one helper they call): each builds the default registry once and hands it down.
ENTRY_POINTS = {
    "wrap_rendezvous_blob", "unwrap_rendezvous_blob", "encode_shard_table", "decode_shard_table",
    "to_decoded", "from_decoded", "schema", "latest", "wire_schema_id", "violations", "released_versions",
    "registry_or_default", "resolved",
}  # fmt: skip
NUMA = {"type": "integer", "minimum": 0, "maximum": 255, "x-added-in": "1.3.0"}


def _optional_registry_parameters() -> list[str]:
    """Every ``registry`` parameter of the package that may be None, as ``path:line function``."""
    found = []
    for folder in PACKAGE:
        for path in folder.rglob("*.py"):
            if "generations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                for arg in args:
                    if (
                        arg.arg == "registry"
                        and arg.annotation is not None
                        and "None" in ast.unparse(arg.annotation)
                    ):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    return found


def test_only_the_entry_points_may_be_given_no_registry() -> None:
    optional = _optional_registry_parameters()
    below = [where for where in optional if where.rsplit(" ", 1)[1] not in ENTRY_POINTS]
    assert not below, f"functions below the entry points that fall back to the default registry: {below}"
    assert len(optional) <= len(ENTRY_POINTS)  # (54 functions took an optional registry before issue 44)


def test_the_public_models_are_built_when_first_used_from_the_registry_of_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is built from the schemas at import: ``PublishedShard`` is the default registry's
    when it is asked for, so a folder named afterwards ($REFITWIRE_SCHEMA_DIR) is the one read."""
    import refitwire._models as models

    repo = _candidate(tmp_path)
    before = models.PublishedShard
    assert "numa_node" not in before.model_fields
    monkeypatch.setenv(wire.ENV_VAR, str(repo / "schema"))
    assert "numa_node" in models.PublishedShard.model_fields
    monkeypatch.delenv(wire.ENV_VAR)
    assert models.PublishedShard is before


def test_a_folder_changed_after_its_registry_was_built_is_read_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    folder = (repo / "schema").resolve()
    first = wire.registry_at(folder)
    assert wire.registry_at(folder) is first  # kept while the files are as they were
    assert refitwire(repo, "schema", "new", "1.3.0").returncode == 0
    assert wire.registry_at(folder).candidate_versions() == ("1.3.0",)
    assert first.candidate_versions() == ()  # a registry never changes; the folder's is another


def _candidate(tmp: Path) -> Path:
    """A checkout declaring 1.3.0 with an optional shard member (``refitwire schema new``)."""
    repo = make_repo(tmp)
    assert refitwire(repo, "schema", "new", "1.3.0").returncode == 0
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        schema["$defs"]["shard"]["properties"]["numa_node"] = NUMA
        write(path, schema)
    return repo


@pytest.fixture
def no_default_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default-registry factory raises, wherever it was imported (in this process)."""
    factory = wire.default_registry

    def refuse() -> Any:
        raise AssertionError("asked for the default registry below an entry point")

    for module in list(sys.modules.values()):
        if (
            getattr(module, "__name__", "").startswith("refitwire")
            and getattr(module, "default_registry", None) is factory
        ):
            monkeypatch.setattr(module, "default_registry", refuse)
    yield


def _run(plan: Plan) -> list[dict[str, Any]]:
    lines = run_matrix(plan)
    crashed = [r for r in lines if r.get("symptom") == KIT_CRASHED]
    assert not crashed, crashed[0]["message"]
    assert report_ok(lines[-1]), lines[-1]
    return lines


def test_a_candidates_runs_never_ask_for_the_default_registry(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A conformance run of the candidate, then a matrix run of it beside the newest release, on
    the run's own registry: no case crashes the kit, and the candidate's new member is asked."""
    repo = _candidate(tmp_path)
    registry = wire.default_registry().with_candidates(repo / "schema")
    (candidate,) = candidates(repo / "schema", registry)
    newest = reference(registry)[-1]
    request.getfixturevalue("no_default_registry")
    with pytest.raises(AssertionError, match="below an entry point"):
        wire.default_registry()

    focused = _run(Plan([candidate, newest], registry=registry, focus=[candidate.label], seed=3, examples=4,
                        limits=False))  # fmt: skip
    results = [r for r in focused if r["type"] == "result"]
    assert any(r.get("writer") == candidate.label and r["outcome"] == "passed" for r in results)
    assert any(r.get("reader") == candidate.label and r["outcome"] == "passed" for r in results)
    # the new member is asked: the candidate's writer refuses each of its breaks, judged on the run's registry
    numa = {c.id for c in refusal_cases("1.3.0", registry) if "numa_node" in c.description}
    refused = {r["case"] for r in results if r.get("writer") == candidate.label and r["outcome"] == "passed"}
    assert numa and numa <= refused, sorted(numa - refused)
    both = _run(Plan([candidate, newest], registry=registry, seed=3, examples=4, limits=False))
    cells = {(r.get("writer"), r.get("reader")) for r in both if r["type"] == "result"}
    assert (candidate.label, newest.label) in cells and (newest.label, candidate.label) in cells


def test_the_gate_never_asks_for_the_default_registry(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The gate's static step on a candidate that breaks released readers (a shard member made
    required): its witnesses are checked by the readers of the registry it is handed."""
    from _gate_helpers import candidate
    from refitwire.gate import EXIT_BREAKING, run_gate

    def require_digest(schema: dict[str, Any]) -> None:
        schema["$defs"]["shard"]["required"] = [*schema["$defs"]["shard"]["required"], "digest"]

    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", require_digest))
    registry = wire.default_registry()
    request.getfixturevalue("no_default_registry")
    report = run_gate(repo, "HEAD", matrix="never", registry=registry)
    assert report.exit_code == EXIT_BREAKING
    assert any(f.witnesses for f in report.findings if f.failing), [f.change for f in report.findings]
