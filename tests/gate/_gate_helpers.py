"""Shared helpers for the gate tests: the fixture pairs, a throwaway git checkout, running the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from refitwire import wire
from refitwire.gate import Document, load_baseline, render, run_gate
from refitwire.wire import Registry

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema"
PAIRS = json.loads((Path(__file__).parent / "fixtures" / "pairs.json").read_text(encoding="utf-8"))


def toy(schema: dict[str, Any], name: str) -> Document:
    return Document(name, schema)


def real(document: str, version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA / document / f"{version}.json").read_text(encoding="utf-8"))
    return loaded


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(tmp: Path) -> Path:
    """A git checkout whose one commit (on branch main) holds the released schema/ files: the
    index, the schema documents and SPEC.md (its rules are part of each released version)."""
    repo = tmp / "repo"
    (repo / "schema").mkdir(parents=True)
    shutil.copy(SCHEMA / "index.json", repo / "schema" / "index.json")
    spec = released_spec((SCHEMA / "SPEC.md").read_text(encoding="utf-8"))
    (repo / "schema" / "SPEC.md").write_text(spec, encoding="utf-8")
    # the files the index lists, not a candidate this checkout may hold (a clone's 1.3.0): the
    # tests scaffold their own candidates on the released versions
    index = json.loads((SCHEMA / "index.json").read_text(encoding="utf-8"))
    for entries in index["documents"].values():
        for entry in entries:
            (repo / "schema" / entry["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SCHEMA / entry["path"], repo / "schema" / entry["path"])
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "schema")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "released")
    return repo


def released_spec(text: str) -> str:
    """SPEC.md ``text`` as the released versions state it: without the blocks a candidate this
    checkout holds adds of its own (a clone's 1.3.0 rows of the members and versions tables, its
    stamped rules and paragraphs), which a test's own 1.3.0 would otherwise find as its text."""
    from refitwire.wire import spec_text

    registry = wire.default_registry()
    candidates = set(registry.candidate_versions())
    lines = text.split("\n")
    drop: set[int] = set()
    for block in spec_text(text, registry.released_versions()[0]).blocks:
        if block.since in candidates:
            start, count = block.line - 1, block.raw.count("\n") + 1
            drop.update(range(start, start + count))
            if block.kind != "row" and start + count < len(lines) and not lines[start + count].strip():
                drop.add(start + count)  # (the blank line after a paragraph)
    return "\n".join(line for n, line in enumerate(lines) if n not in drop)


def write_text_locks(repo: Path) -> None:
    """Write each released version's spec_text lock from the repository's SPEC.md, as the gate's
    RELEASE_ENTRY_MISMATCH tells whoever edits released text to (docs/gate.md)."""
    from refitwire.wire import spec_text

    index_path = repo / "schema" / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    text = spec_text((repo / "schema" / "SPEC.md").read_text(encoding="utf-8"), "1.0.0")
    for lock in index["spec_text"]:
        lock["sha256"] = text.lock(lock["version"])
    index_path.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def write(path: Path, schema: dict[str, Any]) -> None:
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")


def candidate(version: str, mutate: Any = None) -> dict[str, Any]:
    """The real rendezvous 1.2.0 restamped as ``version``, then changed by ``mutate``."""
    schema = real("rendezvous", "1.2.0")
    schema["$id"] = f"urn:refitwire:schema:rendezvous:{version}"
    schema["x-spec-version"] = version
    if mutate is not None:
        mutate(schema)
    return schema


def gate(repo: Path, *, fmt: str = "text", baseline: Path | None = None, **options: Any) -> tuple[int, str]:
    """The gate in this process, as ``refitwire gate --against HEAD --matrix never`` would report it:
    the exit code and the report in ``fmt``. ``baseline``: a baseline file (``--baseline``)."""
    options.setdefault("against", "HEAD")
    options.setdefault("matrix", "never")
    report = run_gate(
        repo,
        registry=wire.default_registry(),
        baseline=load_baseline(baseline) if baseline else (),
        **options,
    )
    return report.exit_code, render(report, fmt, root=repo)


def refitwire(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line in its own process: for the tests whose subject is the CLI itself."""
    return subprocess.run(
        [sys.executable, "-m", "refitwire", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def commit(repo: Path, message: str, *paths: str) -> None:
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", *(paths or ("-A",)))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", message)


def fake_matrix(tmp: Path, results: list[dict[str, Any]], participants: list[tuple[str, str]] | None = None,
                footer: bool = True) -> list[str]:  # fmt: skip
    """A stand-in for ``refitwire matrix`` that writes this report to its ``--output`` file.

    ``participants``: (label, spec version); default: every released participant."""
    if participants is None:
        from refitwire.gate._matrix import released_participants

        participants = [
            (p, p.split("@")[1] if p.startswith("reference@") else "1.2.0")
            for p in released_participants(wire.default_registry().released_versions())
        ]
    lines = [{"type": "header", "seed": 7, "examples": 5, "participants": [{"label": p, "spec_version": v} for p, v in participants],
              "unavailable": []}]  # fmt: skip
    lines += [{"type": "result", "tier": "required", **r} for r in results]
    if footer:
        failed = sum(r["outcome"] in ("failed", "errored") for r in results)
        lines.append({"type": "footer", "seconds": 0.1, "counts": {}, "required_failed": failed,
                      "recommended_failed": 0, "xpassed": 0})  # fmt: skip
    script = tmp / "fake_matrix.py"
    script.write_text(
        "import sys\n"
        "assert '--schema-dir' in sys.argv and '--format' in sys.argv\n"
        f"out = sys.argv[sys.argv.index('--output') + 1]\nopen(out, 'w').write({chr(10).join(json.dumps(x) for x in lines)!r})\n"
    )
    return [sys.executable, str(script)]


def candidate_registry(tmp: Path, edit: Callable[[str, dict[str, Any]], None]) -> Registry:
    """The default registry with a candidate 1.3.0 (``refitwire schema new`` in a throwaway
    checkout), each of its documents changed in place by ``edit(document, schema)``; the default
    registry itself is never changed."""
    from refitwire import wire

    repo = make_repo(tmp)
    done = refitwire(repo, "schema", "new", "1.3.0")
    assert done.returncode == 0, done.stderr
    for document in ("rendezvous", "shard-table"):
        path = repo / "schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        edit(document, schema)
        write(path, schema)
    return wire.default_registry().with_candidates(repo / "schema")
