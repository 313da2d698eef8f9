"""A ModelExpress pull request that adds a member, the way docs/upstream-ci.md says, on the released sdists.

Each released sdist is unpacked and patched as a pull request would patch it, at each level: the
writer takes a new optional member (``wrap_rendezvous_blob`` a parameter for the top-level one,
``PublishedTensor`` / ``PublishedShard`` a field for a tensor's or a shard's) and writes it when it
is given one, the reader returns it. 0.6.0's ``rendezvous.py`` is byte for byte upstream HEAD's
(the writer builds the table by serializing and parsing it again, the tensor entries are written
inline), 0.7.0's builds the entries directly (``_encode_tensor_entries``): one patch reads both.
Declared the documented way (``refitwire schema export``, ``schema new 1.3.0``, the member added,
``--schema-dir``), the tree declares 1.3.0, is handed the member and reads it back, and passes.
The same member written without a version that declares it fails ``WRITE_KNOWN_MEMBERS``. A
member on every shard makes the answer to a read of the largest table longer than the table,
and the runner's reply limit (derived from SPEC's, ``reply_limit``) still holds it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from refitwire import wire
from refitwire.compat._testee import reply_limit
from refitwire.compat.cases._sizes import realistic_table
from refitwire.compat.report._report import read_report
from refitwire.compat.runner._participants import upstream_source
from refitwire.compat.upstream import envs
from refitwire.wire import blob_limit

pytestmark = [pytest.mark.upstream, pytest.mark.slow, pytest.mark.xdist_group("upstream-source")]

SDISTS = ("0.6.0", "0.7.0")
RENDEZVOUS = "modelexpress/refit/reshard/rendezvous.py"
#: The new member at each level: (its name, where the schema declares it, its value when written unasked).
MEMBERS = {
    "top": ("digest_algorithm", ("properties",), "blake2b-128"),
    "tensor": ("storage_layout", ("$defs", "tensor", "properties"), "row-major"),
    "shard": ("memory_kind", ("$defs", "shard", "properties"), "dram"),
}
#: The adapter's ``--member`` level of each.
LEVELS = {"top": "", "tensor": "tensors", "shard": "tensors.shards"}


def _schema(name: str) -> dict[str, object]:
    return {"type": "string", "pattern": "^[a-z0-9-]{1,32}$", "x-added-in": "1.3.0",
            "description": f"The pull request's {name}."}  # fmt: skip


def _patch(text: str, level: str, default: str) -> str:
    """The pull request's ``rendezvous.py``: ``default`` is what the writer writes unasked (the
    Python text of a value, ``None`` for nothing)."""
    name = MEMBERS[level][0]
    if level == "top":
        pairs = [
            ("    publisher_step: int | None = None,\n) -> bytes:",
             f"    publisher_step: int | None = None,\n    {name}: str | None = {default},\n) -> bytes:"),
            ('        payload["publisher_step"] = int(publisher_step)\n',
             f'        payload["publisher_step"] = int(publisher_step)\n    if {name} is not None:\n'
             f'        payload["{name}"] = str({name})\n'),
            ("    tensor_count: int | None = None\n", f"    tensor_count: int | None = None\n    {name}: str | None = None\n"),
            ("        len(entries),\n    )", f'        len(entries),\n        payload.get("{name}"),\n    )'),
        ]  # fmt: skip
    elif level == "tensor":
        # the entry is written inline (0.6.0, HEAD) or by _encode_tensor_entries (0.7.0): its shards line, either way
        found = re.search(r'( *)"shards": \[_encode_shard\((\w+)\) for \2 in (\w+)\.shards\],\n', text)
        assert found, f"the released {RENDEZVOUS} no longer writes a tensor entry's shards as it did"
        indent, tensor = found.group(1), found.group(3)
        pairs = [
            ("    shards: list  # list[PublishedShard]\n",
             f"    shards: list  # list[PublishedShard]\n    {name}: str | None = {default}\n"),
            (found.group(0),
             found.group(0) + f'{indent}**({{"{name}": {tensor}.{name}}} if {tensor}.{name} is not None else {{}}),\n'),
            ("                shards=shards,\n", f'                shards=shards,\n                {name}=t.get("{name}"),\n'),
            # the merge builds each tensor again by position: it carries the member too
            ("                    t.name, t.dtype, t.elsize, t.full_shape, []\n",
             f"                    t.name, t.dtype, t.elsize, t.full_shape, [], t.{name}\n"),
        ]  # fmt: skip
    else:
        pairs = [
            ("    digest: str | None = None\n\n\n@dataclass\nclass PublishedTensor",
             f"    digest: str | None = None\n    {name}: str | None = {default}\n\n\n@dataclass\nclass PublishedTensor"),
            ('        encoded["digest"] = shard.digest\n',
             f'        encoded["digest"] = shard.digest\n    if shard.{name} is not None:\n'
             f'        encoded["{name}"] = shard.{name}\n'),
            ('                digest=s.get("digest"),\n', f'                digest=s.get("digest"),\n                {name}=s.get("{name}"),\n'),
        ]  # fmt: skip
    for old, new in pairs:
        assert text.count(old) == 1, f"the released {RENDEZVOUS} no longer has {old!r}"
        text = text.replace(old, new)
    return text


def _released(version: str, into: Path) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "refitwire" / "sdists"
    archive = cache / f"modelexpress-{version}.tar.gz"
    if not archive.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest",
                        str(cache), f"modelexpress=={version}"], capture_output=True, timeout=600, check=True)  # fmt: skip
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"modelexpress-{version}"


@pytest.fixture(scope="module")
def released_trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    missing = [v for v in envs.UPSTREAM_VERSIONS if envs.find_env(v) is None]
    if missing:
        pytest.skip(f"upstream environments not built: {missing} (python -m refitwire.compat.upstream.envs)")
    into = tmp_path_factory.mktemp("sdists")
    return {version: _released(version, into) for version in SDISTS}


def _tree(released: Path, where: Path, level: str, default: str) -> Path:
    tree = where / "modelexpress-src"
    shutil.copytree(released, tree)
    path = tree / RENDEZVOUS
    path.write_text(_patch(path.read_text(encoding="utf-8"), level, default), encoding="utf-8")
    return tree


def _declare(where: Path, level: str) -> Path:
    """``schema export``, ``schema new 1.3.0`` and the member added to its files, as the page says."""
    assert _refitwire("schema", "export", "wire-schema", cwd=where).returncode == 0
    assert _refitwire("schema", "new", "1.3.0", "--schema-dir", "wire-schema", cwd=where).returncode == 0
    name, place, _ = MEMBERS[level]
    for document in ("rendezvous",) if level == "top" else ("rendezvous", "shard-table"):
        path = where / "wire-schema" / document / "1.3.0.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        node = schema
        for key in place:
            node = node[key]
        node[name] = _schema(name)
        path.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return where / "wire-schema"


def _refitwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "refitwire", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900, stdin=subprocess.DEVNULL)  # fmt: skip


def _conformance(tree: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _refitwire("conformance", "--upstream-src", str(tree), "--seed", "5", "--examples", "5",
                      "--no-size-limit", "--output", str(out), *extra, cwd=tree.parent)  # fmt: skip


@pytest.mark.parametrize("level", MEMBERS)
@pytest.mark.parametrize("sdist", SDISTS)
def test_a_member_added_the_documented_way_is_written_read_back_and_passes(
    released_trees: dict[str, Path], tmp_path: Path, sdist: str, level: str
) -> None:
    tree = _tree(released_trees[sdist], tmp_path, level, "None")  # written when the caller gives one
    done = _conformance(tree, tmp_path / "r.jsonl", "--schema-dir", str(_declare(tmp_path, level)))
    said = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, said
    report = read_report(tmp_path / "r.jsonl")
    [me] = [p for p in report.header.participants if p["kind"] == "upstream-source"]
    assert me["spec_version"] == "1.3.0" and me["label"].startswith(f"modelexpress@{sdist}+nogit.")
    name = MEMBERS[level][0]
    assert f"{LEVELS[level]}:{name}" in me["command"]
    mine = [r for r in report.results if me["label"] in (r.writer, r.reader) and r.tier == "required"]
    assert mine and not [r for r in mine if r.outcome.value in ("failed", "errored")], said


@pytest.mark.parametrize("level", MEMBERS)
@pytest.mark.parametrize("sdist", SDISTS)
def test_the_same_member_undeclared_fails_naming_the_rule(
    released_trees: dict[str, Path], tmp_path: Path, sdist: str, level: str
) -> None:
    tree = _tree(released_trees[sdist], tmp_path, level, repr(MEMBERS[level][2]))  # written on every blob
    done = _conformance(tree, tmp_path / "r.jsonl")
    assert done.returncode == 1, done.stdout[-3000:]
    report = read_report(tmp_path / "r.jsonl")
    failed = [r for r in report.results if r.tier == "required" and r.outcome.value == "failed"]
    assert failed and all("WRITE_KNOWN_MEMBERS" in r.message for r in failed), {r.message for r in failed}
    assert any("--upstream-spec-version" in r.message for r in failed), (
        "the hint names what this route offers"
    )


def test_a_member_on_every_shard_of_the_largest_table_is_answered_within_the_reply_limit(
    released_trees: dict[str, Path], tmp_path: Path
) -> None:
    """The tree's own answer to a read of the realistic table at the blob limit, the member read
    back (as ``null``) on each of its hundreds of thousands of shards: longer than the table, and
    within the limit the runner reads replies with."""
    tree = _tree(released_trees["0.6.0"], tmp_path, "shard", "None")
    schema_dir = _declare(tmp_path, "shard")
    registry = wire.default_registry().with_candidates(schema_dir)
    table = realistic_table(blob_limit(registry, "1.3.0"))
    command = upstream_source(tree, schema_dir=schema_dir, registry=registry).command  # as a run starts it
    requests = [
        {"cmd": "start", "protocol": 1},
        {"cmd": "read", "seq": 1, "blob_b64": base64.b64encode(table).decode()},
    ]
    done = subprocess.run(command, input=b"".join(json.dumps(r).encode() + b"\n" for r in requests),
                          capture_output=True, timeout=600)  # fmt: skip
    _, answer = done.stdout.splitlines(keepends=True)[:2]
    tensors = json.loads(answer)["payload"]["tensors"]
    assert {s[MEMBERS["shard"][0]] for t in tensors for s in t["shards"]} == {None}
    assert len(table) < len(answer) <= reply_limit(registry)
