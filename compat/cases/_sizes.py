"""The size and scale cases: realistic tables at and over the blob limit, built once and kept.

``size:at-limit`` is a realistic table of exactly the blob size limit (tens of thousands of
tensors, eight shards each, digests, a step) and ``size:over-limit`` one byte longer
(``BLOB_SIZE``): a few realistic tensors padded with whitespace, since its length is what is
judged, and a reader with no limit then accepts it at once instead of parsing 64 MiB of
tensors first. The limit is in bytes, not characters: ``size:at-limit-multibyte`` and
``size:over-limit-multibyte`` are a few tensors and an unknown member whose string is raw
multi-byte UTF-8, at the limit and one byte over it, in about a third as many characters (and
fewer UTF-16 code units than bytes), so a reader that counts the decoded text accepts the one
over the limit. ``size:many-tensors`` is an eighth of the limit filled with as many small
tensors as fit. A reader's growth is judged from the same realistic table at a sixteenth of
the limit to the one at it (``refitwire.compat.runner._size_budget``).

Tiers (SPEC.md section 5): a reader MUST read a blob of up to the limit within the
per-request timeout (Required: writers may write that much, and every released reader
can); it SHOULD reject a larger one before parsing it (Recommended: the released readers
have no limit).

Building the tables takes seconds, so each is written once under the user's cache folder,
keyed by the kit's version and this module's own text (a changed generator is a new key), and
read back by every later run; a cache that cannot be written only costs the build.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refitwire.compat._cache import cache_home, content_key, write_whole
from refitwire.compat._results import RECOMMENDED, REQUIRED
from refitwire.wire import WireModel


@dataclass(frozen=True)
class SizeCase:
    id: str
    tier: str
    description: str
    blob: bytes
    valid: bool
    limit: int  # the blob size limit it was built for

    @functools.cached_property
    def tensors(self) -> int:
        """Its entries, counted once: each count is a pass over up to 64 MiB."""
        return count_tensors(self.blob)


def kit_version() -> str:
    from importlib.metadata import version

    return version("refitwire")


@functools.cache
def _cache_key() -> str:
    # the kit and this generator; each file is named by its size, so a limit is never in the key
    return f"{kit_version()}-{content_key(code=[Path(__file__)], length=12)}"


#: Another key's tables (another kit version, or another checkout's generator) are removed once
#: no run has read them for this long: two checkouts side by side must not delete each other's.
STALE_AFTER_S = 7 * 24 * 3600.0


def _kept(name: str, build: Callable[[], bytes]) -> bytes:
    """The bytes ``build`` makes, from the cache when an earlier run of this kit kept them."""
    root = cache_home() / "size-cases"
    folder = root / _cache_key()
    path = folder / name
    try:
        blob = path.read_bytes()
    except OSError:
        pass
    else:
        _used(folder)
        return blob
    blob = build()
    if write_whole(path, blob):
        now = time.time()
        for other in root.iterdir():
            if other != folder and now - _last_used(other, now) > STALE_AFTER_S:
                shutil.rmtree(other, ignore_errors=True)
    return blob


def _used(folder: Path) -> None:
    """Mark ``folder`` read now (its modification time: a read does not change it)."""
    with contextlib.suppress(OSError):  # a cache that cannot be marked only costs a rebuild a week later
        os.utime(folder)


def _last_used(folder: Path, now: float) -> float:
    try:
        return folder.stat().st_mtime
    except OSError:
        return now  # gone already, or unreadable: not ours to remove


@functools.cache
def realistic_table(size: int) -> bytes:
    """A valid realistic table (mixture-of-experts weights, eight shards each) of exactly ``size`` bytes."""
    return _kept(f"realistic-{size}.json", lambda: filled(size, _realistic_tensor))


@functools.cache
def size_cases(limit: int) -> tuple[SizeCase, ...]:
    """The size limit and the scale cases of blob size limit ``limit`` (see the module's text;
    a reader's limit is ``blob_limit(registry, version)``), built once per limit."""
    table = realistic_table(limit)
    many = _kept(f"small-{limit // 8}.json", lambda: filled(limit // 8, _small_tensor))
    over = padded(filled(4096, _realistic_tensor), limit + 1)
    wide, wide_over = (multibyte_padded(filled(4096, _realistic_tensor), n) for n in (limit, limit + 1))
    return (
        SizeCase(
            "size:at-limit",
            REQUIRED,
            f"a realistic table of exactly {limit} bytes (the limit): "
            f"{count_tensors(table)} tensors, 8 shards each",
            table,
            True,
            limit,
        ),
        SizeCase(
            "size:at-limit-multibyte",
            REQUIRED,
            f"a blob of exactly {limit} bytes (the limit) in {_characters(wide)} characters "
            f"({count_tensors(wide)} tensors and a string of multi-byte UTF-8)",
            wide,
            True,
            limit,
        ),
        SizeCase(
            "size:over-limit",
            RECOMMENDED,
            f"a blob of {limit + 1} bytes, one over the limit ({count_tensors(over)} tensors and whitespace)",
            over,
            False,
            limit,
        ),
        SizeCase(
            "size:over-limit-multibyte",
            RECOMMENDED,
            f"a blob of {limit + 1} bytes, one over the limit, in {_characters(wide_over)} characters "
            f"({count_tensors(wide_over)} tensors and a string of multi-byte UTF-8: the limit counts bytes)",
            wide_over,
            False,
            limit,
        ),
        SizeCase(
            "size:many-tensors",
            REQUIRED,
            f"{count_tensors(many)} small tensors in {len(many)} bytes (a reader must grow linearly)",
            many,
            True,
            limit,
        ),
    )


def expected_read(case: SizeCase, model: WireModel) -> bytes:
    """What a reader of ``model`` must decode from valid ``case``, as canonical JSON text
    (:func:`~refitwire.compat.cases._cases.canonical_json`): worked out once per case and shape of
    the decoded form (the members of each level), and kept beside the tables, so a run
    compares one reply with bytes rather than parsing and projecting the table again."""
    from refitwire.compat.cases import _cases, _forms
    from refitwire.wire import decoded_members, no_gc

    shape = [
        (path, [(m.name, m.child) for m in decoded_members(level)]) for path, level in model.levels.items()
    ]
    key = content_key(repr(shape), code=[_forms], length=12)  # a changed projection: a new form

    def build() -> bytes:
        import orjson

        assert case.valid, case.id
        with no_gc():  # ~10^6 acyclic values, dropped once written
            text = _cases.canonical_json(_forms.decoded_document(orjson.loads(case.blob), model))
        assert text is not None, case.id  # our own tables: 64-bit integers only
        return text

    # named by the table's size too: the same case at another limit is another table
    return _kept(f"{case.id.replace(':', '-')}-{len(case.blob)}.decoded-{key}.json", build)


def count_tensors(blob: bytes) -> int:
    """The entries of one of these tables, without parsing it (each entry has one ``"dtype"``)."""
    return blob.count(b'"dtype": ')


def _realistic_tensor(i: int) -> dict[str, Any]:
    """Expert weights of a mixture-of-experts model, split eight ways along dim 0."""
    layer, expert, proj = i // 384, i // 3 % 128, i % 3
    shards = [
        {"agent_name": f"trainer-r{r}", "device_id": r, "addr": 0x7F0000000000 + i * 786432 * 8 + r * 786432,
         "shard_offset": [r * 96, 0], "shape": [96, 2048], "digest": f"{i * 8 + r:032x}"}
        for r in range(8)
    ]  # fmt: skip
    return {"name": f"model.layers.{layer}.mlp.experts.{expert}.w{proj + 1}.weight", "dtype": "torch.bfloat16",
            "elsize": 2, "full_shape": [768, 2048], "shards": shards}  # fmt: skip


def _small_tensor(i: int) -> dict[str, Any]:
    return {"name": f"t{i}", "dtype": "torch.float32", "elsize": 4, "full_shape": [1], "shards": []}


def filled(size: int, tensor: Callable[[int], dict[str, Any]]) -> bytes:
    """A valid blob of exactly ``size`` bytes holding as many ``tensor(i)`` as fit, padded with
    whitespace before its closing brace (JSON allows it; no member is added, so a reader's
    fastest path is the one timed)."""
    head = {"schema": "mx.reshard.shard_table.v1", "agent_name": "trainer-r0", "metadata_endpoint": "h:1",
            "agent_meta_b64": "bWV0YQ==", "tensors": []}  # fmt: skip
    tail = ', "publisher_step": 7}'
    start = json.dumps(head)[: -len("]}")]
    parts: list[str] = []
    used = len(start) + len("]") + len(tail)
    while True:
        text = json.dumps(tensor(len(parts)))
        if used + len(text) + 2 > size:
            break
        used += len(text) + (2 if parts else 0)
        parts.append(text)
    return padded((start + ", ".join(parts) + "]" + tail).encode(), size)


def padded(blob: bytes, size: int) -> bytes:
    """JSON object ``blob`` grown to exactly ``size`` bytes by whitespace before its closing brace."""
    grown = blob[:-1] + b" " * (size - len(blob)) + b"}"
    assert len(grown) == size, (len(grown), size)
    return grown


#: The pad of the multi-byte cases: a 2-, a 3- and a 4-byte UTF-8 sequence, 9 bytes in 3
#: characters (4 UTF-16 code units), so a reader counting either sees far fewer than the bytes.
MULTIBYTE = "\u00e9\u20ac\U0001f600".encode()
#: The unknown member that carries it: a name no version will add (members are snake_case).
PAD_MEMBER = "x-pad"


def multibyte_padded(blob: bytes, size: int) -> bytes:
    """JSON object ``blob`` grown to exactly ``size`` bytes by an unknown member holding raw
    multi-byte UTF-8 (``MULTIBYTE`` over and over, then ASCII for the bytes left): valid, the
    same table to every reader, and a third as many characters as bytes."""
    head = blob[:-1].rstrip() + b', "' + PAD_MEMBER.encode() + b'": "'
    room = size - len(head) - len(b'"}')
    grown = head + MULTIBYTE * (room // len(MULTIBYTE)) + b"." * (room % len(MULTIBYTE)) + b'"}'
    assert len(grown) == size, (len(grown), size)
    return grown


def _characters(blob: bytes) -> int:
    return len(blob.decode("utf-8"))
