"""A deliberately broken testee: the reference implementation with one fault injected.

Run as ``python faulty_testee.py FAULT``; ``none`` is the correct implementation. Each fault
is a mistake a real implementation makes (a lenient reader, an encoder with other escaping
habits, a wrong reason, a writer that never refuses); the suite must catch every one.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from refitwire import InvalidBlob, wire
from refitwire._validate import parse
from refitwire.compat.cases._json_text import first_repeated_name
from refitwire.compat.testees.reference import answer
from refitwire.wire import blob_limit

VERSION = "1.2.0"
Reply = dict[str, Any]
FAULTS: dict[str, Callable[[Reply, Reply], Reply | None]] = {}


def fault(
    *names: str,
) -> Callable[[Callable[[Reply, Reply], Reply | None]], Callable[[Reply, Reply], Reply | None]]:
    def register(fn: Callable[[Reply, Reply], Reply | None]) -> Callable[[Reply, Reply], Reply | None]:
        for name in names:
            FAULTS[name] = fn
        return fn

    return register


# -- helpers -------------------------------------------------------------------------------


def blob_of(request: Reply) -> bytes:
    return base64.b64decode(request["blob_b64"])


def written(reply: Reply) -> bytes | None:
    return base64.b64decode(reply["blob_b64"]) if "blob_b64" in reply else None


def with_blob(reply: Reply, blob: bytes) -> Reply:
    return {**reply, "blob_b64": base64.b64encode(blob).decode()}


def lenient(request: Reply, seq: int) -> Reply:
    """What a reader that checks nothing but JSON syntax answers: the decoded form as written."""
    doc = json.loads(blob_of(request))
    tensors = [
        {**{k: t.get(k) for k in ("name", "dtype", "elsize", "full_shape")},
         "shards": [{**{k: s.get(k) for k in ("agent_name", "device_id", "addr", "shard_offset", "shape")},
                     "digest": s.get("digest")} for s in t.get("shards", [])]}
        for t in doc.get("tensors", [])
    ]  # fmt: skip
    payload = {"agent_name": doc.get("agent_name"), "metadata_endpoint": doc.get("metadata_endpoint") or "",
               "agent_meta_b64": doc.get("agent_meta_b64"), "publisher_step": doc.get("publisher_step"),
               "tensors": tensors}  # fmt: skip
    return {"seq": seq, "payload": payload}


def shards(payload: Reply) -> list[Reply]:
    return [s for t in payload["tensors"] for s in t["shards"]]


def rewrite_json(reply: Reply, change: Callable[[Any], Any]) -> Reply:
    """The written blob, parsed, changed, and dumped again the reference way."""
    blob = written(reply)
    if blob is None:
        return reply
    doc = json.loads(blob)
    change(doc)
    return with_blob(reply, json.dumps(doc).encode())


def rewrite_text(reply: Reply, change: Callable[[str], str]) -> Reply:
    blob = written(reply)
    return reply if blob is None else with_blob(reply, change(blob.decode("utf-8")).encode("utf-8"))


# -- readers that decode wrongly -----------------------------------------------------------


@fault("none")
def _none(request: Reply, reply: Reply) -> Reply | None:
    return reply


@fault("step-missing-as-zero")
def _step_zero(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply and reply["payload"].get("publisher_step", 0) is None:
        reply["payload"]["publisher_step"] = 0
    return reply


@fault("rounds-large-addresses")
def _rounds(request: Reply, reply: Reply) -> Reply | None:
    for s in shards(reply.get("payload", {"tensors": []})):
        s["addr"] = int(float(s["addr"]))
    return reply


@fault("reorders-shards")
def _reorders(request: Reply, reply: Reply) -> Reply | None:
    for t in reply.get("payload", {"tensors": []})["tensors"]:
        t["shards"].reverse()
    return reply


@fault("uppercases-digests")
def _upper_digest(request: Reply, reply: Reply) -> Reply | None:
    for s in shards(reply.get("payload", {"tensors": []})):
        s["digest"] = s["digest"].upper() if s.get("digest") else s.get("digest")
    return reply


@fault("endpoint-null-as-none")
def _endpoint(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply and reply["payload"]["metadata_endpoint"] == "":
        reply["payload"]["metadata_endpoint"] = None
    return reply


@fault("drops-unknown-dtype-tensors")
def _drops_dtype(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply:
        reply["payload"]["tensors"] = [t for t in reply["payload"]["tensors"] if "float4" not in t["dtype"]]
    return reply


@fault("floats-for-integers")
def _floats(request: Reply, reply: Reply) -> Reply | None:
    for s in shards(reply.get("payload", {"tensors": []})):
        s["device_id"] = float(s["device_id"])
    return reply


@fault("null-tensor-reply")
def _null_tensor(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply and reply["payload"]["tensors"]:
        reply["payload"]["tensors"] = [None]
    return reply


@fault("string-addr-reply")
def _string_addr(request: Reply, reply: Reply) -> Reply | None:
    for s in shards(reply.get("payload", {"tensors": []})):
        s["addr"] = str(s["addr"])
    return reply


# -- readers that accept or reject the wrong blobs -----------------------------------------


@fault("rejects-unknown-keys")
def _unknown(request: Reply, reply: Reply) -> Reply | None:
    known = {"schema", "agent_name", "metadata_endpoint", "agent_meta_b64", "tensors", "publisher_step"}
    if "payload" in reply and set(json.loads(blob_of(request))) - known:
        return {"seq": reply["seq"], "rejected": True, "message": "unknown member"}
    return reply


ACCEPTS = {  # fault -> the rule a lenient reader does not check
    "accepts-wrong-schema-id": "SCHEMA_ID",
    "accepts-device-id-up-to-2^32": "DEVICE_ID_RANGE",
    "accepts-any-size": "SIZE_RANGE",
    "accepts-any-elsize": "ELSIZE_RANGE",
    "accepts-oversized-blobs": "BLOB_SIZE",
}


@fault(*ACCEPTS)
def _accepts(request: Reply, reply: Reply) -> Reply | None:
    rule = ACCEPTS[NAME]
    if reply.get("rule") != rule:
        return reply
    if rule == "BLOB_SIZE":  # it parses whatever it gets
        return lenient(request, reply["seq"])
    if rule == "DEVICE_ID_RANGE" and any(not 0 <= s["device_id"] < 2**32 for s in _raw_shards(request)):
        return reply
    return lenient(request, reply["seq"])


@fault("counts-characters")
def _counts_characters(request: Reply, reply: Reply) -> Reply | None:
    """BLOB_SIZE checked on the decoded text's length in characters, not on its bytes: a blob
    over the limit whose multi-byte UTF-8 makes it fewer characters than the limit is read."""
    if reply.get("rule") == "BLOB_SIZE" and len(blob_of(request).decode("utf-8", "replace")) <= blob_limit(
        wire.default_registry()
    ):
        return lenient(request, reply["seq"])
    return reply


def _raw_shards(request: Reply) -> list[Reply]:
    return [s for t in json.loads(blob_of(request))["tensors"] for s in t["shards"]]


@fault("rejects-device-id-at-the-bound")
def _off_by_one(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply and any(s["device_id"] == 2**31 - 1 for s in shards(reply["payload"])):
        return {
            "seq": reply["seq"],
            "rejected": True,
            "rule": "DEVICE_ID_RANGE",
            "message": "device_id too large",
        }
    return reply


@fault("slow-on-large-blobs")
def _slow(request: Reply, reply: Reply) -> Reply | None:
    """Thirty times slower than the reference on blobs over half the limit (a constant factor,
    not a hang)."""
    if large(request, 2) and "payload" in reply:
        time.sleep(30 * TOOK[0])
    return reply


#: Passes over the earlier names per name, so that the n^2 term is the same part of the read at
#: a sixteenth of any limit as one pass is at the package's own limit (where one was a fifth of
#: that read: about the least size:growth catches, 4 x a linear growth to the limit). The term
#: grows with the limit, so a lower limit (a test's registry) needs more passes for the same fault.
QUADRATIC_PASSES = max(
    1, blob_limit(registry=wire.registry_at(wire.package_root())) // blob_limit(wire.default_registry())
)


@fault("quadratic-in-tensors")
def _quadratic(request: Reply, reply: Reply) -> Reply | None:
    """Checks each tensor name against every earlier one, ignoring case: right answers, time
    growing as n^2."""
    if "payload" in reply:
        names = [t["name"] for t in reply["payload"]["tensors"]]
        for i, name in enumerate(names):
            for _ in range(QUADRATIC_PASSES):
                if any(other.casefold() == name.casefold() for other in names[:i]):
                    break
    return reply


@fault("accepts-exponent-integers")
def _exponent(request: Reply, reply: Reply) -> Reply | None:
    """INTEGER_LITERAL checked by looking for a '.': ``4096E0`` and ``1e3`` pass."""
    if reply.get("rule") == "INTEGER_LITERAL" and not re.search(rb"\d\.\d", blob_of(request)):
        return lenient(request, reply["seq"])
    return reply


@fault("accepts-uppercase-digest")
def _upper_ok(request: Reply, reply: Reply) -> Reply | None:
    """DIGEST_FORMAT matched case-insensitively."""
    if reply.get("rule") != "DIGEST_FORMAT":
        return reply
    digests = [s.get("digest") for s in _raw_shards(request)]
    if all(d is None or (isinstance(d, str) and re.fullmatch(r"[0-9a-fA-F]{32}", d)) for d in digests):
        return lenient(request, reply["seq"])
    return reply


@fault("overflows-at-2^63")
def _signed(request: Reply, reply: Reply) -> Reply | None:
    """Box and span arithmetic in signed 64-bit integers: a sum or product that overflows wraps."""
    if reply.get("rule") not in ("BOX_IN_BOUNDS", "ADDR_SPAN"):
        return reply
    wrap = lambda n: (n + 2**63) % 2**64 - 2**63  # noqa: E731
    for t in json.loads(blob_of(request))["tensors"]:
        for s in t["shards"]:
            if any(wrap(o + e) > f for o, e, f in zip(s["shard_offset"], s["shape"], t["full_shape"])):
                return reply
            nbytes = t["elsize"]
            for extent in s["shape"]:
                nbytes = wrap(nbytes * extent)
            if s["addr"] > 2**64 - 1 - max(nbytes, 0) and nbytes >= 0:
                return reply
    return lenient(request, reply["seq"])


# -- rejections for the wrong reason -------------------------------------------------------


@fault("always-names-json")
def _always_json(request: Reply, reply: Reply) -> Reply | None:
    return {**reply, "rule": "JSON"} if reply.get("rejected") else reply


@fault("root-pointer-always")
def _root_pointer(request: Reply, reply: Reply) -> Reply | None:
    return {**reply, "pointer": ""} if reply.get("rejected") else reply


@fault("no-rule-given")
def _no_rule(request: Reply, reply: Reply) -> Reply | None:
    return (
        {k: v for k, v in reply.items() if k not in ("rule", "pointer")} if reply.get("rejected") else reply
    )


@fault("type-for-integer-literal")
def _type_for_literal(request: Reply, reply: Reply) -> Reply | None:
    return {**reply, "rule": "TYPE"} if reply.get("rule") == "INTEGER_LITERAL" else reply


@fault("literal-before-range")
def _literal_first(request: Reply, reply: Reply) -> Reply | None:
    if reply.get("rule", "").endswith("_RANGE") and re.search(rb"\d[.eE][-+\d]", blob_of(request)):
        return {**reply, "rule": "INTEGER_LITERAL"}
    return reply


@fault("checks-in-one-pass")
def _one_pass(request: Reply, reply: Reply) -> Reply | None:
    """Every rule checked value by value in one walk: an INTEGER_LITERAL written before a
    structure violation is reported instead of it (SPEC 2.7 says the structure comes first)."""
    if reply.get("rule") in ("TYPE", "REQUIRED") and re.search(rb"[:\[] ?\d+\.0[,}\]]", blob_of(request)):
        return {**reply, "rule": "INTEGER_LITERAL"}
    return reply


@fault("reports-last-violation")
def _last(request: Reply, reply: Reply) -> Reply | None:
    if not reply.get("rejected"):
        return reply
    try:
        from refitwire._validate import violations

        found = violations(parse(blob_of(request), registry=wire.default_registry()), "rendezvous", VERSION)
    except InvalidBlob:
        return reply
    return {**reply, "rule": found[-1].rule, "pointer": found[-1].pointer} if found else reply


# -- writers -------------------------------------------------------------------------------


@fault("writes-null-step")
def _null_step(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_json(reply, lambda d: d.setdefault("publisher_step", None))


@fault("drops-step-zero")
def _drop_zero(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_json(reply, lambda d: d.pop("publisher_step") if d.get("publisher_step") == 0 else None)


@fault("writes-null-digests")
def _null_digests(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_json(
        reply, lambda d: [s.setdefault("digest", None) for t in d["tensors"] for s in t["shards"]]
    )


@fault("writes-shards-reversed")
def _writes_reversed(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_json(reply, lambda d: [t["shards"].reverse() for t in d["tensors"]])


@fault("strips-torch-prefix")
def _strips_prefix(request: Reply, reply: Reply) -> Reply | None:
    def strip(doc: Any) -> None:
        for t in doc.get("tensors", []):
            t["dtype"] = t["dtype"].removeprefix("torch.")

    return rewrite_json(reply, strip)


@fault("refuses-with-rejected")
def _refuses_rejected(request: Reply, reply: Reply) -> Reply | None:
    if request.get("cmd") == "write" and reply.get("errored"):
        return {"seq": reply["seq"], "rejected": True, "message": reply["message"]}
    return reply


@fault("refuses-valid-digests")
def _refuses_digests(request: Reply, reply: Reply) -> Reply | None:
    payload = request.get("payload") or {}
    if request.get("cmd") == "write" and any(
        s.get("digest") for t in payload.get("tensors", []) for s in t.get("shards", [])
    ):
        return {"seq": reply["seq"], "errored": True, "message": "digests are not supported [DIGEST_FORMAT]"}
    return reply


@fault("compact-separators")
def _compact(request: Reply, reply: Reply) -> Reply | None:
    blob = written(reply)
    return (
        reply
        if blob is None
        else with_blob(reply, json.dumps(json.loads(blob), separators=(",", ":")).encode())
    )


@fault("sorted-members")
def _sorted(request: Reply, reply: Reply) -> Reply | None:
    blob = written(reply)
    return reply if blob is None else with_blob(reply, json.dumps(json.loads(blob), sort_keys=True).encode())


@fault("trailing-newline")
def _newline(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_text(reply, lambda text: text + "\n")


@fault("escapes-newline-as-u000a")
def _u000a(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_text(reply, lambda text: re.sub(r"(?<!\\)((?:\\\\)*)\\n", r"\1\\u000a", text))


@fault("raw-del")
def _del(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_text(reply, lambda text: text.replace("\\u007f", "\x7f"))


@fault("escapes-slash")
def _slash(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_text(reply, lambda text: text.replace("/", "\\/"))


@fault("upper-case-hex")
def _upper_hex(request: Reply, reply: Reply) -> Reply | None:
    return rewrite_text(
        reply, lambda text: re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text)
    )


@fault("raw-astral-characters")
def _astral(request: Reply, reply: Reply) -> Reply | None:
    pair = r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})"
    joined = lambda m: chr(0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00)  # noqa: E731
    blob = written(reply)
    return reply if blob is None else with_blob(reply, re.sub(pair, joined, blob.decode()).encode("utf-8"))


@fault("never-refuses")
def _never_refuses(request: Reply, reply: Reply) -> Reply | None:
    if request.get("cmd") != "write" or not reply.get("errored"):
        return reply
    p = request["payload"]
    doc = {"schema": "mx.reshard.shard_table.v1", "agent_name": p["agent_name"], "metadata_endpoint": p["metadata_endpoint"],
           "agent_meta_b64": p["agent_meta_b64"], "tensors": [{**t, "shards": [{k: v for k, v in s.items() if v is not None}
           for s in t["shards"]]} for t in p["tensors"]]}  # fmt: skip
    if p.get("publisher_step") is not None:
        doc["publisher_step"] = p["publisher_step"]
    return {"seq": reply["seq"], "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


# -- the protocol's other promises: the digest, new commands and members, the refusal's rule --


@fault("tail-weights-continue-rows")
def _tail_weights(request: Reply, reply: Reply) -> Reply | None:
    """Weighs the tail words by their position in the whole input, not from 1 (SPEC.md section 4)."""
    return _digested(request, reply, tail_from_rows=True)


@fault("float64-weighted-row-sum")
def _float_weighted(request: Reply, reply: Reply) -> Reply | None:
    """Keeps the weighted row sum S2 in a float64 (as a double-only language does): exact up to
    2^53, rounded past it where S2 is odd."""
    return _digested(request, reply, float_weighted=True)


@fault("float64-row-sum-total")
def _float_total(request: Reply, reply: Reply) -> Reply | None:
    """Keeps the sum S1 of the row sums in a float64: rounded past 2^53 where S1 is odd."""
    return _digested(request, reply, float_total=True)


def _digested(
    request: Reply,
    reply: Reply,
    *,
    tail_from_rows: bool = False,
    float_weighted: bool = False,
    float_total: bool = False,
) -> Reply:
    """The digest of SPEC.md section 4 computed here, with the fault asked for."""
    if request.get("cmd") != "digest" or "digest" not in reply:
        return reply
    import hashlib

    import numpy as np
    from refitwire._spec import dtype_sizes

    size = dtype_sizes(wire.default_registry())[request["dtype"].removeprefix("torch.")]
    full = np.frombuffer(base64.b64decode(request["data_b64"]), np.dtype(f"V{size}")).reshape(
        request["shape"]
    )
    if "box" in request:
        box = request["box"]
        full = full[tuple(slice(o, o + e) for o, e in zip(box["shard_offset"], box["shape"]))]
    data = np.ascontiguousarray(full).tobytes()
    n, words = len(data), np.frombuffer(data[: len(data) - len(data) % 4], "<i4").astype(np.int64)
    rows = len(words) // 1024
    scalars = [n]
    if rows:
        sums = words[: rows * 1024].reshape(rows, 1024).sum(axis=1)
        weights = np.arange(1, rows + 1)
        total = int(sums.astype(np.float64).sum()) if float_total else int(sums.sum())
        weighted = (
            int(np.dot(weights.astype(np.float64), sums.astype(np.float64)))
            if float_weighted
            else int(np.dot(weights, sums))
        )
        scalars += [total, weighted]
    tail = words[rows * 1024 :]
    if len(tail):
        first = rows * 1024 + 1 if tail_from_rows else 1  # the weights restart at 1
        scalars += [int(tail.sum()), int((np.arange(first, first + len(tail)) * tail).sum())]
    if n % 4:
        scalars += [sum(data[n - n % 4 :]), n % 4]
    h = hashlib.blake2b(digest_size=16)
    for value in scalars:
        h.update((value % 2**64).to_bytes(8, "little"))
    return {**reply, "digest": h.hexdigest()}


@fault("rejects-duplicate-keys")
def _rejects_duplicates(request: Reply, reply: Reply) -> Reply | None:
    """Not a fault: SPEC.md DUPLICATE_KEYS lets a reader reject repeated names (this one does)."""
    if request.get("cmd") != "read" or "payload" not in reply:
        return reply

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [name for name, _ in items]
        repeated = next((n for n in names if names.count(n) > 1), None)
        if repeated is not None:
            raise KeyError(repeated)
        return dict(items)

    try:
        json.loads(blob_of(request), object_pairs_hook=pairs)
    except RecursionError:  # deeper than Python's parser goes: the reference's answer stands
        return reply
    except KeyError as exc:  # at the repeated member's own pointer: vectors repeat one at every level
        name = str(exc.args[0])
        at = first_repeated_name(blob_of(request)) or wire.pointer(name)
        return {"seq": reply["seq"], "rejected": True, "rule": "DUPLICATE_KEYS", "pointer": at,
                "message": f"the member {name!r} is repeated"}  # fmt: skip
    return reply


@fault("names-the-repetition-met-first")
def _repetition_met_first(request: Reply, reply: Reply) -> Reply | None:
    """Rejects repeated names as the spec allows, but names the top-level member whose second
    occurrence it meets first (as a streaming reader does), not the first repeated one in document
    order: ``a, b, b, a`` names ``b``."""
    if request.get("cmd") != "read" or "payload" not in reply:
        return reply
    try:
        names = [name for name, _ in json.loads(blob_of(request), object_pairs_hook=lambda p: p)]
    except (ValueError, RecursionError):
        return reply
    met = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if met is None:
        return _rejects_duplicates(request, reply)
    return {"seq": reply["seq"], "rejected": True, "rule": "DUPLICATE_KEYS", "pointer": wire.pointer(met),
            "message": f"the member {met!r} is repeated"}  # fmt: skip


@fault("python-json-loads-bytes")
def _loads_bytes(request: Reply, reply: Reply) -> Reply | None:
    """Reads with ``json.loads(blob)`` as Python's json does by default: UTF-16 and UTF-32 are
    sniffed and read, ``NaN`` and a lone surrogate accepted; the schema checked after it."""
    if request.get("cmd") != "read" or reply.get("rule") not in ("UTF8", "JSON"):
        return reply
    try:
        doc = json.loads(blob_of(request))
    except (ValueError, RecursionError):
        return reply
    if not isinstance(doc, dict):
        return reply
    again = answer(
        {**request, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()},
        VERSION,
        wire.default_registry(),
    )
    return {**again, "seq": reply["seq"]}


@fault("no-digest")
def _no_digest(request: Reply, reply: Reply) -> Reply | None:
    if request.get("cmd") == "digest":
        return {"seq": request.get("seq"), "skipped": True, "reason": "unknown command 'digest'"}
    return reply


@fault("exits-on-unknown-command")
def _exits_on_unknown(request: Reply, reply: Reply) -> Reply | None:
    if request.get("cmd") not in ("start", "read", "write", "digest"):
        sys.exit(2)
    return reply


@fault("loses-long-line-start")  # (in the read loop below: the first 64 KiB of a longer line are lost)
def _as_given(request: Reply, reply: Reply) -> Reply | None:
    return reply


@fault("rejects-unknown-request-member")
def _strict_requests(request: Reply, reply: Reply) -> Reply | None:
    known = {"cmd", "seq", "protocol", "payload", "blob_b64", "data_b64", "dtype", "shape", "box", "document"}
    unknown = sorted(set(request) - known)
    if unknown and request.get("cmd") in ("read", "write"):
        return {
            "seq": request.get("seq"),
            "errored": True,
            "message": f"unknown request member {unknown[0]!r}",
        }
    return reply


@fault("refuses-with-wrong-rule")
def _wrong_refusal_rule(request: Reply, reply: Reply) -> Reply | None:
    """Refuses every invalid payload, but always says WRITE_VALID's neighbour, TYPE."""
    if request.get("cmd") == "write" and reply.get("errored"):
        return {
            "seq": reply["seq"],
            "errored": True,
            "message": "refusing: bad payload [TYPE]",
            "rule": "TYPE",
        }
    return reply


@fault("rejects-without-pointer")
def _no_pointer(request: Reply, reply: Reply) -> Reply | None:
    return {k: v for k, v in reply.items() if k != "pointer"} if reply.get("rejected") else reply


# -- processes that misbehave --------------------------------------------------------------


@fault("never-flushes")  # the main loop leaves stdout unflushed: a pipe buffers it
def _never_flushes(request: Reply, reply: Reply) -> Reply | None:
    return reply


@fault("crashes-on-empty-table")
def _crash(request: Reply, reply: Reply) -> Reply | None:
    if "payload" in reply and not reply["payload"]["tensors"]:
        sys.exit(3)
    return reply


@fault("hangs-on-read")
def _hang(request: Reply, reply: Reply) -> Reply | None:
    return None if request.get("cmd") == "read" else reply


@fault("wrong-seq")
def _wrong_seq(request: Reply, reply: Reply) -> Reply | None:
    return {**reply, "seq": reply["seq"] + 1} if isinstance(reply.get("seq"), int) else reply


@fault("garbage-output")
def _garbage(request: Reply, reply: Reply) -> Reply | None:
    if request.get("cmd") == "read":
        sys.stdout.write("\x1b[31mthis is not json\x1b[0m\n")
        sys.stdout.flush()
        return None
    return reply


@fault("ansi-noise-on-stderr")
def _ansi(request: Reply, reply: Reply) -> Reply | None:
    sys.stderr.write(
        "\x1b[1;31mwarning\x1b[0m \x00\x07 ]]> <&> \ud800\n".encode("utf-8", "surrogatepass").decode(
            "utf-8", "replace"
        )
    )
    sys.stderr.flush()
    return _rounds(request, reply)


from faulty_conformance import FAULTS as CONFORMANCE_FAULTS  # noqa: E402  (the grammar, writer-rule faults)
from faulty_conformance import large  # noqa: E402

FAULTS.update(CONFORMANCE_FAULTS)
NAME = sys.argv[1] if len(sys.argv) > 1 else "none"
TOOK = [0.0]  # seconds the reference code took for the last request
# Block-buffered whatever PYTHONUNBUFFERED says, as a testee's stdout on a pipe usually is.
OUT = open(1, "w", buffering=1 << 20, encoding="utf-8", closefd=False)  # noqa: SIM115

if __name__ == "__main__":
    if NAME not in FAULTS:
        raise SystemExit(f"unknown fault {NAME!r}; known: {', '.join(sorted(FAULTS))}")
    for line in sys.stdin:
        if NAME == "loses-long-line-start" and len(line) > 1 << 16:
            line = line[1 << 16 :]  # as a reader of pipe chunks that keeps only the last one
        request = json.loads(line)
        if request.get("cmd") == "stop":
            break
        t0 = time.perf_counter()
        correct = answer(request, VERSION, wire.default_registry())
        TOOK[0] = time.perf_counter() - t0
        faulty = FAULTS[NAME](request, correct)
        if faulty is None:
            if NAME == "hangs-on-read":
                time.sleep(3600)
            continue
        OUT.write(json.dumps(faulty) + "\n")
        if NAME != "never-flushes":
            OUT.flush()
