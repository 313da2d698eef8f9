"""The gate's runtime step with the real compat matrix, a candidate 1.3.0 included."""

from __future__ import annotations

import json
from pathlib import Path

from _gate_helpers import candidate, make_repo, refitwire, write
from refitwire.gate import EXIT_BREAKING, EXIT_COMPATIBLE

NEW_MEMBER = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0", "description": "Rank of the publisher."}


def _gate(repo: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    done = refitwire(repo, "gate", "--against", "HEAD", "--format", "json", *args)
    return done.returncode, json.loads(done.stdout.splitlines()[-1])


def test_an_optional_member_passes_the_real_matrix(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(
        repo / "schema/rendezvous/1.3.0.json",
        candidate("1.3.0", lambda s: s["properties"].update(publisher_rank=NEW_MEMBER)),
    )
    code, summary = _gate(repo)
    assert (code, summary["matrix"]) == (EXIT_COMPATIBLE, "passed"), summary


def test_a_required_member_fails_the_real_matrix_too(tmp_path: Path) -> None:
    def required(s: dict) -> None:  # type: ignore[type-arg]
        s["properties"]["publisher_rank"] = NEW_MEMBER
        s["required"].append("publisher_rank")

    repo = make_repo(tmp_path)
    write(repo / "schema/rendezvous/1.3.0.json", candidate("1.3.0", required))
    code, summary = _gate(repo, "--matrix", "always")
    assert (code, summary["matrix"]) == (EXIT_BREAKING, "failed"), summary
