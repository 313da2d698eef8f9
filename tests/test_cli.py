"""The refitwire command, run as a user would (a subprocess), and its shared parser."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from refitwire import PublishedShard, PublishedTensor, tensor_digest, wire, wrap_rendezvous_blob
from refitwire.cli import EXIT_STATUSES, USAGE_EXIT, VERBS, install_hint, installed_from, main
from refitwire.gate import EXIT_BREAKING, EXIT_COMPATIBLE, EXIT_ERROR


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


def test_validate_says_a_finding_once_with_the_versions_it_holds_under(tmp_path: Path) -> None:
    """One line per finding, after every version it is found under; values as JSON (never None or 'A')."""
    bad = json.loads(good_blob().replace(b'"digest": "' + b"a" * 32, b'"digest": "' + b"A" * 32))
    bad["publisher_step"] = -3  # a member 1.2.0 adds: older readers ignore it
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "null.json").write_bytes(good_blob().replace(b'"agent_name": "r0"', b'"agent_name": null', 1))
    done = refitwire("validate", str(tmp_path / "bad.json"), str(tmp_path / "null.json"))
    assert done.returncode == 1
    head, digest, step, null_head, *null = done.stdout.splitlines()
    assert head == f"{tmp_path / 'bad.json'}: conforms to 1.0.0"
    assert digest.startswith(f'  1.1.0, 1.2.0: "{"A" * 32}" at /tensors/0/shards/0/digest: ')
    assert digest.endswith(" [DIGEST_FORMAT]")
    assert step.startswith("  1.2.0: -3 at /publisher_step: ") and step.endswith(" [STEP_RANGE]")
    assert null_head == f"{tmp_path / 'null.json'}: INVALID under every version"
    assert null and all(line.startswith("  1.0.0, 1.1.0, 1.2.0: ") for line in null), null
    assert "  1.0.0, 1.1.0, 1.2.0: null at /agent_name: " in done.stdout
    assert "None" not in done.stdout and "'" not in done.stdout


def test_validate_names_the_byte_line_and_column_of_a_syntax_error(tmp_path: Path) -> None:
    pretty = json.dumps(
        {**json.loads(good_blob()), "agent_name": "r\u00e9"}, indent=1, ensure_ascii=False
    ).encode()
    cut = pretty[: pretty.index(b'"tensors"') + 14]  # a file cut short, on its third line or later
    bad = pretty.replace("é".encode(), b"\xff")  # a byte that is no UTF-8
    for name, blob, rule, at in (
        ("cut.json", cut, "JSON", len(cut)),
        ("bad.json", bad, "UTF8", bad.index(b"\xff")),
    ):
        (tmp_path / name).write_bytes(blob)
        line, column = blob.count(b"\n", 0, at) + 1, at - blob.rfind(b"\n", 0, at)  # (ASCII before it)
        where = f"at byte {at} (line {line}, column {column}) [{rule}]"
        assert line > 2
        done = refitwire("validate", str(tmp_path / name))
        assert done.returncode == 1
        [finding] = done.stdout.splitlines()[1:]
        assert finding.startswith("  1.0.0, 1.1.0, 1.2.0: ") and finding.endswith(where), finding
        [report] = map(json.loads, refitwire("validate", "--json", str(tmp_path / name)).stdout.splitlines())
        assert report["violations"]["1.2.0"][0]["detail"].endswith(where.removesuffix(f" [{rule}]"))


def test_validate_reports_an_unreadable_file_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "good.json").write_bytes(good_blob())
    done = refitwire("validate", "/nonexistent/blob.json", str(tmp_path / "good.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "refitwire: /nonexistent/blob.json: No such file or directory"
    assert done.stdout.startswith(f"{tmp_path / 'good.json'}: conforms to 1.0.0, 1.1.0, 1.2.0")


def test_validate_json_is_json_with_rfc6901_pointers(tmp_path: Path) -> None:
    """null for None, the root pointer is "", raw bytes as text, and a line for an unreadable file."""
    (tmp_path / "null.json").write_bytes(good_blob().replace(b'"agent_name": "r0"', b'"agent_name": null', 1))
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    done = refitwire(
        "validate", "--json", str(tmp_path / "null.json"), str(tmp_path / "bom.json"), "/nonexistent"
    )
    assert done.returncode == 1
    assert "None" not in done.stdout and "b'" not in done.stdout
    null, bom, missing = (json.loads(line) for line in done.stdout.splitlines())
    assert {"rule": "TYPE", "pointer": "/agent_name", "value": None} in [
        {k: v[k] for k in ("rule", "pointer", "value")} for v in null["violations"]["1.2.0"]
    ], null
    [headline] = bom["violations"]["1.2.0"]
    assert (headline["rule"], headline["pointer"], headline["value"]) == ("UTF8", "", "\ufeff")
    assert missing == {"file": "/nonexistent", "error": "No such file or directory"}


def test_decode_prints_a_table_and_the_decoded_form(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_bytes(good_blob())
    table = refitwire("decode", str(tmp_path / "b.json"))
    assert table.returncode == 0 and "0x1000" in table.stdout
    assert re.search(r"^publisher_step +3$", table.stdout, re.M), table.stdout
    decoded = json.loads(refitwire("decode", "--json", str(tmp_path / "b.json")).stdout)
    assert decoded["publisher_step"] == 3 and decoded["tensors"][0]["shards"][0]["digest"] == "a" * 32


def test_decode_shows_a_candidates_new_members_with_no_code_edit(tmp_path: Path) -> None:
    """The table's lines and columns come from the wire model: a schema file that adds a top-level
    member and a shard member (a candidate version) is enough for both to show."""
    schema = tmp_path / "schema"
    shutil.copytree(Path(__file__).resolve().parents[1] / "schema", schema)
    candidate = json.loads((schema / "rendezvous" / "1.2.0.json").read_text())
    candidate["$id"], candidate["x-spec-version"] = "urn:refitwire:schema:rendezvous:1.3.0", "1.3.0"
    candidate["properties"]["publisher_rank"] = {"type": "integer", "minimum": 0, "x-added-in": "1.3.0"}
    candidate["$defs"]["shard"]["properties"]["numa_node"] = {
        "type": "integer",
        "minimum": 0,
        "x-added-in": "1.3.0",
    }
    (schema / "rendezvous" / "1.3.0.json").write_text(json.dumps(candidate))
    blob = json.loads(good_blob())
    blob["publisher_rank"] = 5
    blob["tensors"][0]["shards"][0]["numa_node"] = 7
    (tmp_path / "b.json").write_text(json.dumps(blob))
    done = subprocess.run(
        [sys.executable, "-m", "refitwire", "decode", "--spec-version", "1.3.0", str(tmp_path / "b.json")],
        capture_output=True, text=True, timeout=120, env={**os.environ, "REFITWIRE_SCHEMA_DIR": str(schema)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^publisher_rank +5$", done.stdout, re.M), done.stdout
    header, row = done.stdout.splitlines()[-2:]
    assert header.split()[-1] == "numa_node" and row.split()[-1] == "7", done.stdout


def test_decode_of_garbage_is_one_clear_line() -> None:
    done = refitwire("decode", "-", stdin=b"[1, 2]")
    assert done.returncode == 1
    assert done.stderr.strip() == 'refitwire: -: "list" at "": the top level must be a JSON object [OBJECT]'


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
    assert done.stderr.rstrip().endswith(install_hint("refit", installed_from())), done.stderr


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit status and the last stderr line of a command line the parser refuses."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    return int(stopped.value.code or 0), capsys.readouterr().err.strip().splitlines()[-1]


NEEDS_REFIT = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="the refit verb's options need the refit extra"
)
EVERY_VERB = [pytest.param(v, marks=NEEDS_REFIT) if v == "refit" else v for v in VERBS]


@pytest.mark.parametrize("verb", EVERY_VERB)
def test_an_unknown_option_is_named_and_exits_2(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Even where a required argument is missing too (the gate's usage errors included)."""
    code, last = usage_error([verb, "--no-such-option"], capsys)
    assert (code, last) == (2, f"refitwire {verb}: error: unrecognized arguments: --no-such-option")


@pytest.mark.parametrize(
    "argv",
    [["diff"], ["gate", "--matrix", "bogus"], ["conformance"], ["schema"], ["validate"],
     ["matrix", "--seed", "x"], pytest.param(["refit", "--steps", "x"], marks=NEEDS_REFIT)],
    ids=lambda argv: " ".join(argv),
)  # fmt: skip
def test_every_usage_error_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, last = usage_error(argv, capsys)
    assert code == 2 and last.startswith(f"refitwire {argv[0]}: error: "), last


def test_a_verbs_own_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """The checks a verb makes of its options after parsing give the parser's status too."""
    assert main(["bench", "--repeats", "0"]) == 2
    assert capsys.readouterr().err.strip() == "refitwire: --repeats must be at least 1"


def test_top_level_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(["--foo"], capsys) == (2, "refitwire: error: unrecognized arguments: --foo")
    assert usage_error(["--foo", "digest", "x"], capsys) == (
        2, "refitwire digest: error: unrecognized arguments: --foo"
    )  # fmt: skip
    code, last = usage_error(["no-such-verb"], capsys)
    assert code == 2 and "invalid choice: 'no-such-verb'" in last
    assert usage_error([], capsys) == (2, "refitwire: error: the following arguments are required: VERB")


def test_help_lists_every_verb_without_importing_them() -> None:
    """Nor the internal API and the codec it brings: the verb list needs no schema."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from refitwire.cli import main\ntry: main(['--help'])\n"
         "except SystemExit: print(sorted(m for m in sys.modules if m.startswith('refitwire.cli.') "
         "or m in ('refitwire.wire', 'refitwire._codec')))"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("    ")]
    assert [v for v in listed if v in VERBS] == list(VERBS), done.stdout
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("verb", ["validate", "digest", "decode", "schema"])
def test_a_codec_verb_imports_only_its_own_module(verb: str, tmp_path: Path) -> None:
    """What makes a verb start fast: no other verb's module, no kit, no torch, no NIXL."""
    (tmp_path / "b.json").write_bytes(good_blob())
    args = ["list"] if verb == "schema" else [str(tmp_path / "b.json")]
    code = (
        "import sys; from refitwire.cli import main; status = main(sys.argv[1:]); "
        "heavy = ('torch', 'nixl', 'nixl_cu12', 'hypothesis', 'jsonschema', 'redis'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('refitwire.cli.') "
        "or m.split('.')[:2] in (['refitwire', 'compat'], ['refitwire', 'gate'], ['refitwire', 'refit']))); "
        "sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, verb, *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == str(sorted({f"refitwire.cli.{verb}", "refitwire.cli._io"}))


def _broken_folder(tmp_path: Path, how: str) -> Path:
    """A copy of the package's schema folder broken one way."""
    folder = tmp_path / "schema"
    shutil.copytree(Path(wire.package_root()), folder, ignore=shutil.ignore_patterns("vectors", "*.py"))
    if how == "no SPEC.md":
        (folder / "SPEC.md").unlink()
    elif how == "a listed schema file gone":
        (folder / "shard-table" / "1.1.0.json").unlink()
    elif how == "a schema file that is not JSON":
        (folder / "rendezvous" / "1.1.0.json").write_text('{"type": ')
    elif how == "an index without documents":
        (folder / "index.json").write_text('{"latest": "1.2.0"}')
    elif how == "a SPEC.md rule row it cannot read":
        spec = folder / "SPEC.md"
        text = spec.read_text(encoding="utf-8")
        row = next(line for line in text.splitlines() if line.startswith("| `STEP_RANGE` |"))
        spec.write_text(text.replace(row, "| `STEP_RANGE` | a row of two cells |"), encoding="utf-8")
    return folder


BROKEN = {  # how -> what the message must name
    "no SPEC.md": "SPEC.md: missing",
    "a listed schema file gone": "shard-table/1.1.0.json: missing",
    "a schema file that is not JSON": "rendezvous/1.1.0.json: not JSON at line 1",
    "an index without documents": 'index.json: no "documents" object',
    "a SPEC.md rule row it cannot read": "schema: SPEC.md line",
    "no folder at all": "nowhere: no such folder",
}


@pytest.mark.parametrize("how", list(BROKEN))
@pytest.mark.parametrize("verb", ["validate", "decode"])
def test_a_broken_schema_folder_is_one_clear_line_naming_the_file(
    tmp_path: Path, how: str, verb: str
) -> None:
    """$REFITWIRE_SCHEMA_DIR at a folder the registry cannot read: exit 2 and the file, never a
    traceback (the folder is read when the verb's modules are first used, not at import)."""
    folder = tmp_path / "nowhere" if how == "no folder at all" else _broken_folder(tmp_path, how)
    (tmp_path / "b.json").write_bytes(good_blob())
    env = {**os.environ, wire.ENV_VAR: str(folder)}
    done = subprocess.run([sys.executable, "-m", "refitwire", verb, str(tmp_path / "b.json")],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and BROKEN[how] in done.stderr, done.stderr
    assert done.stderr.startswith(f"refitwire {verb}: the schema folder cannot be read: ")
    assert str(folder) in done.stderr and len(done.stderr.splitlines()) == 1


# -- one table of exit statuses: the CLI's, shown by --help and README.md -------------------------

ROOT_DIR = Path(__file__).resolve().parents[1]
#: Every page and module text that may say which status a usage error gives.
DOCS = [ROOT_DIR / "README.md", *sorted((ROOT_DIR / "docs").glob("*.md")), ROOT_DIR / "compat" / "IMPLEMENTERS.md",
        *sorted((ROOT_DIR / "cli").glob("*.py")), *sorted((ROOT_DIR / "gate").glob("*.py"))]  # fmt: skip
_SAID = (
    re.compile(r"usage(?: or [\w-]+)? error[^.;()]{0,40}?\(?exit(?: code| status)? (\d+)", re.I),
    re.compile(r"\bexit(?: code| status)? (\d+)[^.;()]{0,40}?usage(?: or [\w-]+)? error", re.I),
    re.compile(r"\b(\d+)(?: on)?(?: an?)? usage(?: or [\w-]+)? error", re.I),
)


def test_the_readme_states_the_clis_exit_statuses() -> None:
    done = subprocess.run([sys.executable, str(ROOT_DIR / "tools" / "build_exit_codes.py"), "--check"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "refitwire", "--help"], capture_output=True, text=True, timeout=120
    )
    for code, text in EXIT_STATUSES:
        assert f"  {code:<4} {text}" in listed.stdout


def test_the_gates_statuses_are_the_clis() -> None:
    statuses = dict(EXIT_STATUSES)
    assert {EXIT_COMPATIBLE, EXIT_ERROR, EXIT_BREAKING, USAGE_EXIT} <= set(statuses)
    assert statuses[USAGE_EXIT].startswith("usage error") and USAGE_EXIT not in (EXIT_ERROR, EXIT_BREAKING)


def said_usage_statuses(text: str) -> set[int]:
    flat = " ".join(text.split())
    return {int(found) for pattern in _SAID for found in pattern.findall(flat)}


def test_every_page_gives_a_usage_error_the_one_status() -> None:
    said = {
        path.relative_to(ROOT_DIR).as_posix(): said_usage_statuses(path.read_text(encoding="utf-8"))
        for path in DOCS
    }
    assert {path: codes for path, codes in said.items() if codes - {USAGE_EXIT}} == {}
    assert said_usage_statuses("malformed input is a usage error (exit 1)") == {
        1
    }  # the scan sees a wrong one
