"""The first verbs of the refitwire command, run as a user would (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from refitwire import PublishedShard, PublishedTensor, tensor_digest, wrap_rendezvous_blob


def refitwire(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "refitwire", *args], input=stdin.decode() if stdin else None,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def good_blob() -> bytes:
    shard = PublishedShard(
        agent_name="r0", device_id=0, addr=4096, shard_offset=(0, 0), shape=(4, 4), digest="a" * 32
    )
    tensor = PublishedTensor(name="w", dtype="torch.bfloat16", elsize=2, full_shape=(8, 4), shards=[shard])
    return wrap_rendezvous_blob(b"meta", "r0", "h:1", [tensor], 3)


def test_validate_reports_conforming_versions(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_bytes(good_blob())
    done = refitwire("validate", str(tmp_path / "good.json"))
    assert done.returncode == 0, done.stderr
    assert "conforms to 1.0.0, 1.1.0, 1.2.0" in done.stdout


def test_validate_names_rule_and_pointer_and_exits_1(tmp_path: Path) -> None:
    bad = good_blob().replace(b'"digest": "' + b"a" * 32, b'"digest": "' + b"A" * 32)
    (tmp_path / "bad.json").write_bytes(bad)
    done = refitwire("validate", "--json", str(tmp_path / "bad.json"))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["conforms"] == ["1.0.0"]  # a 1.0.0 reader ignores the unknown digest
    [violation] = report["violations"]["1.2.0"]
    assert (violation["rule"], violation["pointer"]) == ("DIGEST_FORMAT", "/tensors/0/shards/0/digest")


def test_validate_a_missing_file_is_a_usage_error() -> None:
    done = refitwire("validate", "/nonexistent/blob.json")
    assert done.returncode == 2 and "No such file" in done.stderr and "Traceback" not in done.stderr


def test_decode_prints_a_table_and_the_decoded_form(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_bytes(good_blob())
    table = refitwire("decode", str(tmp_path / "b.json"))
    assert table.returncode == 0 and "0x1000" in table.stdout and "step       3" in table.stdout
    decoded = json.loads(refitwire("decode", "--json", str(tmp_path / "b.json")).stdout)
    assert decoded["publisher_step"] == 3 and decoded["tensors"][0]["shards"][0]["digest"] == "a" * 32


def test_decode_of_garbage_is_one_clear_line() -> None:
    done = refitwire("decode", "-", stdin=b"[1, 2]")
    assert done.returncode == 1
    assert done.stderr.strip() == "refitwire: -: 'list' at /: the top level must be a JSON object [OBJECT]"


def test_digest_prints_like_sha256sum(tmp_path: Path) -> None:
    data = np.arange(5000, dtype=np.int32)
    (tmp_path / "w.bin").write_bytes(data.tobytes())
    (tmp_path / "empty.bin").write_bytes(b"")
    done = refitwire("digest", str(tmp_path / "w.bin"), str(tmp_path / "empty.bin"))
    assert done.stdout.splitlines() == [
        f"{tensor_digest(data)}  {tmp_path / 'w.bin'}",
        f"c804ce198ec337e3dc762bdd1a09aece  {tmp_path / 'empty.bin'}",
    ]


def test_schema_list_and_show() -> None:
    listing = refitwire("schema", "list").stdout.splitlines()
    assert len(listing) == 6 and listing[0].startswith("rendezvous   1.0.0")
    shown = json.loads(refitwire("schema", "show", "rendezvous", "1.1.0").stdout)
    assert "digest" in shown["$defs"]["shard"]["properties"]
    assert refitwire("schema", "show", "rendezvous", "9.9.9").returncode == 2


def test_the_codec_and_kit_verbs_work_without_torch_or_nixl() -> None:
    """The refit extra is optional: without it, every other verb still runs."""
    blocked = "import sys; sys.modules.update(torch=None, nixl=None, nixl_cu12=None); from refitwire.cli import main; "
    for args, code in ((["schema", "list"], 0), (["matrix", "--help"], 0), (["refit"], 2)):
        done = subprocess.run(
            [sys.executable, "-c", blocked + f"sys.exit(main({args!r}))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == code, done.stderr
        assert "Traceback" not in done.stderr
    assert "pip install 'refitwire[refit]'" in done.stderr
