"""Sanity of the golden vectors themselves (tox -e vectors): shape, ids, rules, coverage.

Independent of the reference reader: it checks the files against their own schema, the
spec's rule list and both schema validators.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from _support import VECTORS, blob_of, load_vectors
from refitwire import wire
from refitwire.wire import version_key

SPEC = (VECTORS.parent / "SPEC.md").read_text(encoding="utf-8")
SPEC_RULES = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", SPEC, flags=re.M))
# Rules a single vector cannot show: a limit (64 MiB blob), or writer/reader/merge behaviour.
NOT_BLOB_RULES = {"BLOB_SIZE", "DUPLICATE_KEYS", "MERGE_CONSISTENT", "MERGE_REPLICAS"}
VECTORS_LIST = load_vectors()
IDS = [v["id"] for v in VECTORS_LIST]


def schema_file(document: str, version: str) -> dict[str, Any]:
    return json.loads((VECTORS.parent / document / f"{version}.json").read_text())


@pytest.mark.parametrize(
    "path", sorted(p.name for p in VECTORS.glob("*.json") if p.name != "vector.schema.json")
)
def test_each_file_matches_the_vector_schema(path: str) -> None:
    meta = json.loads((VECTORS / "vector.schema.json").read_text())
    jsonschema.Draft202012Validator(meta).validate(json.loads((VECTORS / path).read_text(encoding="utf-8")))


def test_ids_are_unique_and_name_the_vector() -> None:
    """An ID is the vector's name (document and description), never its bytes: a blob that
    gains a later member keeps it. Two vectors share neither a name nor a blob."""
    assert len(set(IDS)) == len(IDS)
    for v in VECTORS_LIST:
        name = f"{v['document']}\n{v['description']}".encode()
        assert v["id"] == "v-" + hashlib.sha256(name).hexdigest()[:12], v["description"]
    blobs = [(v["document"], blob_of(v)) for v in VECTORS_LIST]
    assert len(set(blobs)) == len(blobs)


def test_blob_is_text_exactly_when_the_bytes_are_utf8_without_bom() -> None:
    for v in VECTORS_LIST:
        data = blob_of(v)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            utf8 = False
        else:
            utf8 = True
        assert ("blob" in v) == (utf8 and not data.startswith(b"\xef\xbb\xbf")), v["id"]


def test_every_rule_named_by_a_vector_is_in_the_spec() -> None:
    named = {o["rule"] for v in VECTORS_LIST for o in v["expect"].values() if not o["valid"]}
    assert named <= SPEC_RULES, named - SPEC_RULES


def test_every_blob_rule_of_the_spec_has_an_invalid_vector() -> None:
    named = {o["rule"] for v in VECTORS_LIST for o in v["expect"].values() if not o["valid"]}
    blob_rules = {r for r in SPEC_RULES if not r.startswith(("WRITE_", "READ_"))} - NOT_BLOB_RULES
    assert blob_rules <= named, f"rules with no vector: {sorted(blob_rules - named)}"


def test_there_are_valid_vectors_for_each_legal_form() -> None:
    tags = {t for v in VECTORS_LIST for t in v["tags"] if all(o["valid"] for o in v["expect"].values())}
    required = {
        "compact",
        "reordered",
        "unicode",
        "large-integers",
        "step-zero",
        "empty-table",
        "unknown-keys",
        "null-optional",
        "duplicate-keys",
        "endpoint-default",
        "writer-output",
    }
    assert required <= tags, required - tags


ENCODING_RULES = {"UTF8", "JSON", "OBJECT", "BLOB_SIZE"}


@pytest.mark.parametrize("vector", VECTORS_LIST, ids=IDS)
def test_both_validators_agree_with_the_vector(vector: dict[str, Any]) -> None:
    if all(not o["valid"] and o["rule"] in ENCODING_RULES for o in vector["expect"].values()):
        return  # not a JSON document a schema validator could be given
    try:
        instance = json.loads(blob_of(vector))
    except RecursionError:
        pytest.skip("nested deeper than Python's json module can load")
    for version, outcome in vector["expect"].items():
        schema = schema_file(vector["document"], version)
        python = jsonschema.Draft202012Validator(schema).is_valid(instance)
        rust = jsonschema_rs.validator_for(schema).is_valid(instance)
        if "ecma-262-dollar" in vector["tags"] and not outcome["valid"]:  # (a version that knows the member)
            # python-jsonschema matches `pattern` with re.search, where `$` also matches before a
            # final newline; JSON Schema patterns are ECMA-262, where it does not.
            assert (python, rust) == (True, False), version
            continue
        assert python == rust, f"validators disagree at {version}"
        if outcome["valid"]:
            assert python, f"the {version} schema rejects a valid vector"


def test_rebuilding_the_vectors_changes_nothing() -> None:
    """The files are what tools/build_vectors.py writes: an edit to either shows up here."""
    import subprocess
    import sys

    tool = VECTORS.parent.parent / "tools" / "build_vectors.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_vector_states_the_tier_its_upstream_verdict_gives() -> None:
    """Upstream's acceptance makes a rejection Recommended only where upstream's own spec version
    (the released adapter's) must reject: what it does not know, it must ignore."""
    from refitwire.compat.upstream.adapter_testee import SPEC_VERSION

    for v in VECTORS_LIST:
        invalid = not v["expect"][SPEC_VERSION]["valid"]
        lenient = (invalid and v["upstream"] == "accepts") or {"upstream-diverges", "limits"} & set(v["tags"])
        assert v["tier"] == ("recommended" if lenient else "required"), v["description"]


def test_each_expectation_states_the_tier_of_its_reader_version() -> None:
    """Upstream's own version keeps the vector's tier; an older version's tier follows what upstream
    does with the members that version does not know made unknown: a value only a newer reader
    checks (1e400 as publisher_step) is Recommended for the older readers, as NaN in an unknown
    member is, and stays Required for the newer ones."""
    from refitwire.compat.upstream.adapter_testee import SPEC_VERSION

    for v in VECTORS_LIST:
        assert v["expect"][SPEC_VERSION]["tier"] == v["tier"], v["description"]
        for version, outcome in v["expect"].items():
            if outcome["valid"] and not {"upstream-diverges", "limits"} & set(v["tags"]):
                assert outcome["tier"] == "required", (v["description"], version)
    (step,) = [
        v for v in VECTORS_LIST if v["description"] == "/publisher_step written as 1e400 (overflows a double)"
    ]
    # Required from the version that added publisher_step on (a candidate's included), Recommended before
    added = wire.default_registry().newest_model().top["publisher_step"].added_in
    assert {k: o["tier"] for k, o in step["expect"].items()} == {
        v: "required" if version_key(v) >= version_key(added) else "recommended" for v in step["expect"]}  # fmt: skip
    assert set(step["expect"]) == set(wire.default_registry().known_versions())
    (unknown,) = [v for v in VECTORS_LIST if v["description"].startswith("NaN in an unknown member")]
    assert {o["tier"] for o in unknown["expect"].values()} == {"recommended"}


def spec_rows(rule: str) -> list[str]:
    """The SPEC.md table rows that name ``rule`` (its own row first)."""
    rows = [line for line in SPEC.splitlines() if line.startswith("|") and f"`{rule}`" in line]
    return sorted(rows, key=lambda row: not row.startswith(f"| `{rule}` |"))


@pytest.mark.parametrize("v", VECTORS_LIST, ids=IDS)
def test_each_vector_names_the_rule_and_keyword_its_expectation_follows_from(v: dict[str, Any]) -> None:
    """A Required expectation rests on a MUST of the rule it names; where that rule lets a reader
    reject (MAY), a Required acceptance must allow the rejection too (SPEC.md section 7)."""
    rule, keyword = v["spec"]["rule"], v["spec"]["keyword"]
    rows = spec_rows(rule)
    assert rows and rows[0].startswith(f"| `{rule}` |"), f"{v['id']} names {rule}, which is not a SPEC rule"
    assert any(re.search(rf"\b{keyword}\b", row) for row in rows), f"{rule} says no {keyword}"
    rejections = {o["rule"] for o in v["expect"].values() if not o["valid"]}
    assert not rejections or rule in rejections, (v["id"], rule, rejections)
    if v["tier"] == "required":
        assert keyword == "MUST", f"{v['id']} is Required on a {keyword} of {rule}"
        if re.search(r"\bMAY reject\b", rows[0]):
            assert all(not o["valid"] or "or_reject" in o for o in v["expect"].values()), (
                f"{v['id']}: {rule} lets a reader reject, yet the vector requires acceptance"
            )
