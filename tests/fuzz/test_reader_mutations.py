"""Mutated blobs against the reference reader: only ``InvalidBlob`` may escape, and the cost is linear.

Valid blobs (the golden vectors and freshly written ones) are mutated the ways a broken
writer, a bad network or an attacker would: truncation, byte flips, repeated names, deep
nesting, integers past the section 5 range, floats where integers belong, ``NaN``, lone
surrogates, a BOM, and very long strings and arrays (inside the 64 MiB limit). Every
mutant goes through the three reads (full, quorum, standalone table) of every spec version.

Known reader bugs are kept as strict expected failures, so their fix is noticed.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _profiles import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refitwire import (
    InvalidBlob,
    PublishedShard,
    PublishedTensor,
    decode_shard_table,
    released_versions,
    unwrap_rendezvous_blob,
    wrap_rendezvous_blob,
)

VECTORS = Path(__file__).resolve().parents[2] / "schema" / "vectors"
FAST = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _golden() -> list[bytes]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        for vector in json.loads(path.read_text(encoding="utf-8")).get("vectors", []):
            out.append(vector["blob"].encode() if "blob" in vector else base64.b64decode(vector["blob_b64"]))
    return out


GOLDEN = _golden()

READS: list[tuple[str, Callable[[bytes, str], Any]]] = [
    ("full", lambda b, v: unwrap_rendezvous_blob(b, spec_version=v)),
    ("quorum", lambda b, v: unwrap_rendezvous_blob(b, with_tensors=False, spec_version=v)),
    ("table", lambda b, v: decode_shard_table(b, spec_version=v)),
]


def outcomes(blob: bytes, reads: tuple[str, ...] = ("full", "quorum", "table")) -> dict[tuple[str, str], str]:
    """``ok`` or the rule named, per (read, version); any other exception fails the test."""
    out = {}
    for name, read in READS:
        if name not in reads:
            continue
        for version in released_versions():
            try:
                read(blob, version)
            except InvalidBlob as exc:
                assert exc.rule and isinstance(exc.pointer, str), exc
                out[(name, version)] = exc.rule
            except Exception as exc:
                pytest.fail(
                    f"{name} read as {version} raised {type(exc).__name__}: {exc} (blob {blob[:120]!r}...)"
                )
            else:
                out[(name, version)] = "ok"
    return out


def accepted(blob: bytes) -> bool:
    try:
        unwrap_rendezvous_blob(blob)
    except InvalidBlob:
        return False
    return True


VALID = [b for b in GOLDEN if accepted(b)]
TOP = [b for b in VALID if b.rstrip().endswith(b"}")]


def with_member(blob: bytes, raw_value: bytes, name: bytes = b"x_unknown") -> bytes:
    """``blob`` with one extra top-level member (unknown to every reader) appended."""
    body = blob.rstrip()
    assert body.endswith(b"}")
    return body[:-1] + b', "' + name + b'": ' + raw_value + b"}"


# -- random mutations -----------------------------------------------------------------------

valid_blobs = st.sampled_from(VALID)


@FAST
@given(valid_blobs, st.data())
def test_truncation(blob: bytes, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(blob) - 1))
    result = outcomes(blob[:cut])
    assert result[("full", released_versions()[-1])] != "ok" or blob[:cut].strip() == blob.strip()


@FAST
@given(valid_blobs, st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=8))
def test_byte_flips(blob: bytes, flips: list[tuple[int, int]]) -> None:
    mutant = bytearray(blob)
    for at, value in flips:
        mutant[at % len(mutant)] = value
    outcomes(bytes(mutant))


@FAST
@given(valid_blobs, st.data())
def test_spliced_slices(blob: bytes, data: st.DataObject) -> None:
    """A slice of one valid blob pasted into another: structure-aware garbage."""
    other = data.draw(valid_blobs)
    i, j = sorted(data.draw(st.tuples(st.integers(0, len(other)), st.integers(0, len(other)))))
    at = data.draw(st.integers(0, len(blob)))
    outcomes(blob[:at] + other[i:j] + blob[at:])


json_junk = st.sampled_from([
    b"NaN", b"-Infinity", b"Infinity", b"1e400", b"-1e400", b"4096.0", b"4.096e3", b"-0", b"0.0",
    b"18446744073709551615", b"18446744073709551616", b"-9223372036854775808", b"-9223372036854775809",
    b"9" * 400, b'"\\ud800"', b'"\\udc00"', b'"\\ud800\\u0041"', b'"\xed\xa0\x80"', b'"\xff"', b'"\\u0000"',
    b"null", b"true", b"[]", b"{}", b'""', b"[1,]", b"{,}", b"/* c */ 1", b"1 2", b"\x00",
])  # fmt: skip


@FAST
@given(valid_blobs, json_junk, st.data())
def test_junk_in_place_of_any_number_or_string(blob: bytes, junk: bytes, data: st.DataObject) -> None:
    """Replace one JSON scalar (a number or a string) of a valid blob with junk."""
    text = blob.decode("utf-8")
    spans = [m.span() for m in re.finditer(r'-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*"', text)]
    start, end = data.draw(st.sampled_from(spans))
    outcomes(blob[: len(text[:start].encode())] + junk + blob[len(text[:end].encode()) :])


# -- targeted mutations with known outcomes --------------------------------------------------


@pytest.mark.parametrize("blob", TOP[:6])
def test_bom_is_rule_utf8(blob: bytes) -> None:
    assert set(outcomes(b"\xef\xbb\xbf" + blob).values()) == {"UTF8"}


@pytest.mark.parametrize("junk", [b"NaN", b"Infinity", b"-Infinity", b'"\\ud800"', b'"\\udc00\\ud800"'])
def test_non_json_in_an_unknown_member_is_rule_json(junk: bytes) -> None:
    assert set(outcomes(with_member(TOP[0], junk)).values()) == {"JSON"}


def test_a_number_past_double_range_in_an_unknown_member_is_rule_json() -> None:
    """A reader limit (SPEC section 5). The quorum read leaves it to the table read (documented)."""
    assert set(outcomes(with_member(TOP[0], b"1e400"), reads=("full", "table")).values()) == {"JSON"}


def test_raw_surrogate_bytes_are_rule_utf8() -> None:
    assert set(outcomes(with_member(TOP[0], b'"\xed\xa0\x80"')).values()) == {"UTF8"}


def test_a_float_where_an_integer_belongs_is_integer_literal() -> None:
    doc = json.loads(TOP[0])
    shard = next(s for t in doc["tensors"] for s in t["shards"])
    shard["addr"] = float(shard["addr"])
    assert set(outcomes(json.dumps(doc).encode()).values()) - {"ok"} == {"INTEGER_LITERAL"}


def test_repeated_names_take_the_last_one() -> None:
    """DUPLICATE_KEYS: a reader that accepts repeated names takes the last."""
    first = b'{"schema": "not-it", ' + TOP[0].lstrip()[1:]
    assert set(outcomes(first).values()) == {"ok"}
    last = with_member(TOP[0], b'"not-it"', b"schema")
    assert "ok" not in {v for (read, _), v in outcomes(last).items() if read != "quorum"}
    assert outcomes(last)[("full", released_versions()[-1])] == "SCHEMA_ID"


@pytest.mark.parametrize("depth", [6, 100, 500])
def test_moderate_nesting_in_an_unknown_member_is_ignored(depth: int) -> None:
    assert set(outcomes(with_member(TOP[0], b"[" * depth + b"]" * depth)).values()) == {"ok"}


@pytest.mark.parametrize("depth", [1030, 5000, 200_000])
def test_nesting_past_the_limit_is_rule_json(depth: int) -> None:
    result = outcomes(with_member(TOP[0], b"[" * depth + b"]" * depth), reads=("full", "table"))
    assert set(result.values()) == {"JSON"}


# Reader bugs this file found (reproducers in fuzz/README.md), fixed since; kept as regressions.
@pytest.mark.parametrize("depth", [1000, 1020, 1030, 5000, 200_000])
def test_the_quorum_read_survives_deep_nesting(depth: int) -> None:
    outcomes(with_member(TOP[0], b"[" * depth + b"]" * depth))


def test_deep_nesting_inside_the_table_is_rejected_cleanly() -> None:
    deep = b"[" * 1000 + b"]" * 1000
    blob = re.sub(rb'"tensors":\s*\[', lambda m: m.group(0) + deep + b", ", TOP[0], count=1)
    assert blob != TOP[0]
    assert "ok" not in outcomes(blob, reads=("full", "table")).values()


@pytest.mark.parametrize("big", [b"18446744073709551616", b"-9223372036854775809", b"1" + b"0" * 30])
def test_integers_past_the_range_in_an_unknown_member_are_ignored(big: bytes) -> None:
    """SPEC section 5: read as doubles; in an unknown member the value is never used."""
    assert set(outcomes(with_member(TOP[0], big)).values()) == {"ok"}


def test_integers_past_the_range_in_a_known_member_are_rejected() -> None:
    doc = json.loads(TOP[0])
    shard = next(s for t in doc["tensors"] for s in t["shards"])
    for big in (2**64, -(2**63) - 1, 10**30):
        shard["addr"] = big  # the quorum read leaves the entries to the table read
        assert "ok" not in outcomes(json.dumps(doc).encode(), reads=("full", "table")).values()


# -- size and linear cost ------------------------------------------------------------------


def _big_blob(n: int) -> bytes:
    """A valid blob with ``n`` tensors of one shard each."""
    tensors = [
        PublishedTensor(
            name=f"layers.{i}.w", dtype="torch.bfloat16", elsize=2, full_shape=(4, 4),
            shards=[PublishedShard(agent_name="a", device_id=0, addr=4096 * i, shard_offset=(0, 0), shape=(4, 4))],
        )
        for i in range(n)
    ]  # fmt: skip
    return wrap_rendezvous_blob(b"meta", "a", "h:1", tensors, 7)


def _best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: _big_blob(n), id="many-tensors"),
        pytest.param(lambda n: with_member(TOP[0], b'"' + b"a" * (200 * n) + b'"'), id="long-string"),
        pytest.param(lambda n: with_member(TOP[0], b"[" + b"1," * (50 * n) + b"1]"), id="long-array"),
        pytest.param(lambda n: with_member(TOP[0], b'"' + b"\\u00e9" * (40 * n) + b'"'), id="escapes"),
        pytest.param(lambda n: with_member(TOP[0], b"[" + b"{}," * (50 * n) + b"{}]"), id="many-objects"),
    ],
)
def test_cost_grows_linearly(make: Callable[[int], bytes]) -> None:
    """8x the input costs at most 8 x 20 the time (and the bigger input stays well under a second)."""
    small, large = make(2_000), make(16_000)
    assert len(large) < 64 * 1024 * 1024
    for name, read in READS:
        t_small = _best_of(lambda read=read: read(small, released_versions()[-1]))
        t_large = _best_of(lambda read=read: read(large, released_versions()[-1]))
        assert t_large <= 8 * 20 * max(t_small, 1e-4), (name, t_small, t_large)


def test_a_blob_just_under_the_limit_is_read_and_one_over_is_blob_size() -> None:
    limit = 64 * 1024 * 1024
    pad = limit - len(TOP[0]) - len(b', "x_unknown": ""')
    under = with_member(TOP[0], b'"' + b"a" * pad + b'"')
    assert len(under) == limit
    assert set(outcomes(under).values()) == {"ok"}
    over = with_member(TOP[0], b'"' + b"a" * (pad + 1) + b'"')
    assert set(outcomes(over).values()) == {"BLOB_SIZE"}
