"""More vectors generated from the wire model: near-misses of every pattern and constant, every
dtype label of SPEC section 4, box and span arithmetic at the signed and unsigned 64-bit
boundaries, and the precedence across stages and positions of SPEC section 2.7.

Like ``_vector_model``, nothing here names a member: patterns, constants and rules come from
the schemas; the element sizes from ``refitwire._spec.dtype_sizes()`` (SPEC section 4).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any

import _clone
from _vector_kit import blob_doc, ecma_search, py_dumps, shard, tensor
from _vector_model import RAW, bad, base, get, good, knowing, model, place, put, text
from refitwire import wire
from refitwire._spec import dtype_sizes
from refitwire.wire import NO_CONST, Member

# -- near-misses of every pattern and constant ------------------------------------------------


def matches(member: Member, value: str) -> bool:
    """Whether ``value`` is allowed by ``member``'s pattern or constant, as SPEC reads them: an
    ECMA-262 pattern (``$`` only at the very end), standard base64 also canonical (zero pad bits)."""
    if member.const is not NO_CONST:
        return bool(value == member.const)
    pattern = member.pattern or ""
    if not ecma_search(pattern, value):
        return False
    if member.rule == "AGENT_META_BASE64":
        try:
            return base64.b64encode(base64.b64decode(value, validate=True)).decode() == value
        except binascii.Error:
            return False
    return True


def near_misses(value: str) -> Iterator[tuple[str, str]]:
    """(what, near-miss) for a valid string: case, prefixes and suffixes, other alphabets,
    padding, whitespace, other lengths."""
    yield "in upper case", value.upper()
    yield "in title case", value[:1].upper() + value[1:]
    yield "with a leading space", " " + value
    yield "with a trailing space", value + " "
    yield "with a trailing newline", value + "\n"
    yield "with a trailing tab", value + "\t"
    yield "with a trailing NUL", value + "\x00"
    yield "one character short", value[:-1]
    yield "two characters short", value[:-2]
    yield "one character too long", value + value[-1]
    yield "repeated", value + value
    yield "with a prefix", "x" + value
    yield "with an algorithm prefix", "sha256:" + value
    yield "with a 0x prefix", "0x" + value
    yield "in the URL-safe alphabet", value.replace("+", "-").replace("/", "_")
    yield "without padding", value.rstrip("=")
    yield "with extra padding", value + "="
    yield "with a line break inside", value[: len(value) // 2] + "\n" + value[len(value) // 2 :]
    yield "with a full-width first character", chr(ord(value[0]) + 0xFEE0) + value[1:] if value else "x"
    yield "empty", ""


def pattern_members() -> Iterator[Member]:
    for member in model().members():
        if member.pattern is not None or (member.const is not NO_CONST and isinstance(member.const, str)):
            yield member


def near_miss_vectors() -> list[dict[str, Any]]:
    """Each near-miss of the value in a valid blob of every member with a pattern or a constant
    that the member does not allow: its rule (``x-rule``) at its pointer."""
    found, seen = [], set()
    doc = base()
    for member in pattern_members():
        path = place(member)
        value = get(doc, path)
        at = wire.pointer(*path)
        for what, miss in near_misses(value):
            if miss in seen or matches(member, miss):
                continue
            seen.add(miss)
            copy = json.loads(json.dumps(doc))
            put(copy, path, miss)
            tags = ["near-miss", f"member:{wire.pointer(*member.level, member.name)}"]
            ecma = member.pattern is not None and ecma_search(member.pattern, miss)
            if (
                member.pattern is not None and ecma_search(member.pattern, miss, python=True) and not ecma
            ):  # Python's `$`: a final \n
                tags.append("ecma-262-dollar")
            found.append(bad(f"{at} {what}: {json.dumps(miss)}", text(copy), member.rule or "SCHEMA", at,
                             knowing(member), tags))  # fmt: skip
    return found


# -- every dtype label of SPEC section 4 ------------------------------------------------------


def dtype_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every label the spec lists, with and without ``torch.``: with its element size (valid),
    and with another size (``ELSIZE_DTYPE`` at the tensor's ``elsize``)."""
    valid, invalid = [], []
    for n, (label, size) in enumerate(sorted(dtype_sizes(_clone.registry()).items())):
        written = f"torch.{label}" if n % 2 == 0 else label
        doc = blob_doc([tensor("w0", written, size, (8, 4), [shard(4096, (0, 0), (4, 4))])], step=7)
        valid.append(good(f"dtype {written} with elsize {size}", py_dumps(doc), ["dtype-table"]))
        for other in (f"torch.{label}", label):
            wrong = 3 if size != 3 else 5  # no listed type has 3 bytes
            doc = blob_doc([tensor("w0", other, wrong, (8, 4), [shard(4096, (0, 0), (4, 4))])], step=7)
            invalid.append(bad(f"dtype {other} with elsize {wrong} (it has {size})", py_dumps(doc),
                               "ELSIZE_DTYPE", "/tensors/0/elsize", _listing(label), ["dtype-table"]))  # fmt: skip
    return valid, invalid


def _listing(label: str) -> tuple[str, ...]:
    """The versions whose SPEC.md lists ``label`` (a later version may list a new dtype)."""
    return tuple(v for v in _all() if label in dtype_sizes(_clone.registry(), v))


def _all() -> tuple[str, ...]:
    from _vector_kit import VERSIONS

    return VERSIONS


# -- arithmetic at the 64-bit boundaries ------------------------------------------------------

S = "/tensors/0/shards/0"
I63, U64 = 2**63, 2**64


def _geometry(full: tuple[int, ...], offset: tuple[int, ...], shape: tuple[int, ...], addr: int,
              dtype: str = "torch.bfloat16", elsize: int = 2) -> bytes:  # fmt: skip
    return py_dumps(blob_doc([tensor("w0", dtype, elsize, full, [shard(addr, offset, shape)])], step=7))


def arithmetic_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """BOX_IN_BOUNDS and ADDR_SPAN where signed 64-bit arithmetic overflows (sums and products
    reaching 2^63) and where unsigned arithmetic wraps (2^64), each beside its valid twin."""
    tags = ["arithmetic"]
    valid = [
        good("offset + extent is exactly 2^63 - 1, the whole dimension", _geometry((I63 - 1, 4), (2**62, 0), (2**62 - 1, 0), 4096), tags),
        good("a span ending exactly at 2^64 with a byte count of 2^63 (2^31 x 2^31 x 2)", _geometry((2**31, 2**31), (0, 0), (2**31, 2**31), I63), tags),
        good("a byte count of 2^63 - 2 from 2^62 - 1 x 2 elements of 1 byte", _geometry((2**62 - 1, 2), (0, 0), (2**62 - 1, 2), 0, "torch.int8", 1), tags),
        good("2^62 x 4 elements of 1 byte from addr 0: exactly 2^64 bytes, ending at 2^64", _geometry((2**62, 4), (0, 0), (2**62, 4), 0, "torch.int8", 1), tags),
        good("an extent of 2^63 - 1 times a zero extent is no bytes at all", _geometry((I63 - 1, I63 - 1, 0), (0, 0, 0), (I63 - 1, I63 - 1, 0), U64 - 1), tags),
        good("a scalar (rank 0: the empty product is one element) ending exactly at 2^64", _geometry((), (), (), U64 - 2), tags),
    ]  # fmt: skip
    span, box = "ADDR_SPAN", "BOX_IN_BOUNDS"
    invalid = [
        (box, "offset 2^63 - 1 + extent 1 passes 2^63 (signed overflow)", _geometry((I63 - 1, 4), (I63 - 1, 0), (1, 4), 4096), S + "/shape/0"),
        (box, "offset 2^62 + extent 2^62 is 2^63 (signed overflow)", _geometry((I63 - 1, 4), (2**62, 0), (2**62, 0), 4096), S + "/shape/0"),
        (box, "offset 2^63 - 1 + extent 2^63 - 1 (signed overflow, fits unsigned)", _geometry((I63 - 1, 4), (I63 - 1, 0), (I63 - 1, 0), 4096), S + "/shape/0"),
        (box, "offset and extent of 2^63 - 1 in the second dimension", _geometry((4, I63 - 1), (0, I63 - 1), (0, I63 - 1), 4096), S + "/shape/1"),
        (span, "2^31 x 2^31 x 2 bytes from 2^63 + 2 (the byte count is 2^63: signed overflow)", _geometry((2**31, 2**31), (0, 0), (2**31, 2**31), I63 + 2), S + "/addr"),
        (span, "2^32 x 2^32 elements from addr 1 (the count wraps to 0 in 64 bits)", _geometry((2**32, 2**32), (0, 0), (2**32, 2**32), 1, "torch.int8", 1), S + "/addr"),
        (span, "2^62 x 4 elements of 1 byte from addr 4096 (2^64 bytes: wraps to 0)", _geometry((2**62, 4), (0, 0), (2**62, 4), 4096, "torch.int8", 1), S + "/addr"),
        (span, "2^63 - 1 x 2 elements of 2 bytes (the byte count wraps to -4 signed)", _geometry((I63 - 1, 2), (0, 0), (I63 - 1, 2), 4096), S + "/addr"),
        (span, "2^62 elements of 8 bytes (2^65 bytes: wraps to 0)", _geometry((2**62,), (0,), (2**62,), 0, "torch.float64", 8), S + "/addr"),
        (span, "2^63 bytes from 2^63 + 1 (8 x 2^60 elements of 1 byte)", _geometry((8, 2**60), (0, 0), (8, 2**60), I63 + 1, "torch.int8", 1), S + "/addr"),
        (span, "addr 2^64 - 1 with one 2-byte element", _geometry((1,), (0,), (1,), U64 - 1), S + "/addr"),
        (span, "a scalar (rank 0: one element, not none) of 2 bytes from 2^64 - 1", _geometry((), (), (), U64 - 1), S + "/addr"),
        # every dimension out of bounds: the first one is reported
        (box, "the box passes the tensor in both dimensions: the first is reported", _geometry((4, 4), (3, 3), (2, 2), 4096), S + "/shape/0"),
        # a dtype label the table does not list: elsize alone gives the byte count (8 here, not 1 or 2)
        (span, "4 elements of an unlisted dtype, elsize 8, 16 bytes below 2^64", _geometry((4,), (0,), (4,), U64 - 16, "fp8x", 8), S + "/addr"),
    ]  # fmt: skip
    return valid, [bad(f"{rule}: {what}", blob, rule, at, _all(), tags) for rule, what, blob, at in invalid]


# -- which violation is reported (SPEC 2.7) across stages and positions -----------------------


def _string_member(level: tuple[str, ...]) -> Member:
    """A required plain string member of ``level`` (no pattern, no constant): a TYPE violation's home."""
    return next(m for m in model().level(*level).members
                if m.required and m.types == ("string",) and m.pattern is None and m.const is NO_CONST)  # fmt: skip


def _reordered(doc: dict[str, Any], first: str, last: str) -> dict[str, Any]:
    middle = [k for k in doc if k not in (first, last)]
    return {k: doc[k] for k in [first, *middle, last]}


def precedence_vectors() -> list[dict[str, Any]]:
    """A later-stage violation written before a structure violation (structure wins wherever it
    is); a wrong constant written after an earlier bad member (the constant wins); a repeated
    name whose first and last places differ (its value is the last, its place the first)."""
    found = []
    doc = base()
    top = model().top
    const = next(m for m in top.members if m.const is not NO_CONST)
    tags = ["precedence", "cross-stage"]
    deepest = model().table_at(*model().table_at())  # the shard: the level inside the table's entries
    late = _string_member(deepest)
    late_path = (*place(late)[:-2], 1, late.name)  # the same member, in a second object of its level
    for _member, path, _ in _integers():
        at = wire.pointer(*path)
        copy = json.loads(json.dumps(doc))
        parent = get(copy, place(late)[:-2])
        parent.append(json.loads(json.dumps(parent[0])))
        put(copy, late_path, 5)
        put(copy, path, RAW)
        first = path[0] if isinstance(path[0], str) else ""
        if first != late_path[0]:  # the integer's member written first, the late one last
            copy = _reordered(copy, str(first), str(late_path[0]))
        value = get(doc, path)
        found.append(bad(f"INTEGER_LITERAL at {at} ({value}.0) written before a TYPE at {wire.pointer(*late_path)}: TYPE",
                         text(copy, f"{value}.0"), "TYPE", wire.pointer(*late_path), _all(), tags))  # fmt: skip
    # the other step-4 violations: non-zero pad bits, a geometry rule
    for what, change in (
        ("non-zero base64 pad bits", _pad_bits),
        ("an elsize its dtype does not have", _elsize),
    ):
        copy = json.loads(json.dumps(doc))
        parent = get(copy, place(late)[:-2])
        parent.append(json.loads(json.dumps(parent[0])))
        put(copy, late_path, 5)
        change(copy)
        found.append(bad(f"{what} written before a TYPE at {wire.pointer(*late_path)}: TYPE", text(copy), "TYPE",
                         wire.pointer(*late_path), _all(), tags))  # fmt: skip
    # a wrong constant written last, after an earlier bad member of each kind
    earlier = [
        ("a TYPE", lambda d: put(d, place(_string_member(())), 5)),
        ("a missing required member", lambda d: d.pop(_string_member(()).name)),
        ("a TYPE deep in the table", lambda d: put(d, place(late), 5)),
    ]
    for what, change in earlier:
        copy = json.loads(json.dumps(doc))
        change(copy)
        copy[const.name] = const.const + "x"
        copy = _reordered(copy, next(k for k in copy if k != const.name), const.name)
        found.append(bad(f"a wrong {const.name} written last, after {what}: {const.rule}", text(copy),
                         const.rule or "SCHEMA", wire.pointer(const.name), _all(), tags))  # fmt: skip
    found += _repeated_names(doc, late)
    return found


def _pad_bits(doc: dict[str, Any]) -> None:
    """The padded base64 value of a base64 member with a pad bit set (AGENT_META_BASE64, step 4)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for member in pattern_members():
        value = get(doc, place(member))
        if member.rule == "AGENT_META_BASE64" and value.endswith("="):
            last = value.rstrip("=")
            put(doc, place(member), last[:-1] + alphabet[alphabet.index(last[-1]) + 1] + value[len(last) :])
            return
    raise AssertionError("no padded base64 member in the base blob")


def _elsize(doc: dict[str, Any]) -> None:
    """A listed dtype with another element size (ELSIZE_DTYPE, step 4)."""
    first = doc["tensors"][0]
    first["elsize"] = 3 if dtype_sizes(_clone.registry())[first["dtype"].removeprefix("torch.")] != 3 else 5


def _integers() -> Iterator[tuple[Member, tuple[str | int, ...], Any]]:
    from _vector_model import integer_places

    return integer_places()


def _repeated_names(doc: dict[str, Any], late: Member) -> list[dict[str, Any]]:
    """A member repeated with its first occurrence before a violation and its last after it."""
    name = _string_member(()).name
    inner = wire.pointer(*place(late))
    body = {k: v for k, v in doc.items() if k != name}
    found = []
    for first, last, rule, at, what in (
        ('"a"', "5", "TYPE", wire.pointer(name), "its last value (5) is checked where it first appears"),
        ("5", '"a"', "TYPE", inner, "its first value (5) is replaced by the last, so the later violation is reported"),
    ):  # fmt: skip
        broken = json.loads(json.dumps(body))
        put(broken, place(late), 7)
        inside = py_dumps(broken).decode()
        blob = ("{" + json.dumps(name) + ": " + first + ", " + inside[1:-1] + ", " + json.dumps(name) + ": "
                + last + "}").encode()  # fmt: skip
        found.append(bad(f"{name} repeated around a TYPE at {inner}: {what}", blob, rule, at, _all(),
                         ["precedence", "duplicate-keys"], parsed={**broken, name: json.loads(last)}))  # fmt: skip
    return found
