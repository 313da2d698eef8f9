"""More faults for ``faulty_testee.py``: one per class of bug the JSON-text dimensions, the writer
rules on every written blob and the refusal reasons must catch (issue: grammar, UTF-8, narrow
integers, in-object precedence, unknown payload members copied, a refusal without a rule, an
omitted endpoint, de-duplicated replicas, large agent metadata compressed, tensors kept one per
name). Each is a mistake a real implementation makes, switched
into the reference's answers; ``faulty_testee.py`` adds them to its own and runs them the same way.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import unicodedata
import zlib
from collections.abc import Callable
from typing import Any

from refitwire import InvalidBlob, wire
from refitwire.compat.cases._json_text import first_repeated_name
from refitwire.compat.testees.reference import answer
from refitwire.wire import blob_limit, check, tokens

VERSION = "1.2.0"
Reply = dict[str, Any]
Fault = Callable[[Reply, Reply], "Reply | None"]
FAULTS: dict[str, Fault] = {}


def fault(name: str) -> Callable[[Fault], Fault]:
    def register(fn: Fault) -> Fault:
        FAULTS[name] = fn
        return fn

    return register


def large(request: Reply, fraction: int) -> bool:
    """Whether ``request`` reads a blob of more than ``1/fraction`` of the blob size limit (of
    the registry this process reads with: the tests may lower it)."""
    return (
        request.get("cmd") == "read"
        and len(request.get("blob_b64", "")) * 3 // 4 > blob_limit(wire.default_registry()) // fraction
    )


def _blob(request: Reply) -> bytes:
    return base64.b64decode(request["blob_b64"])


def _read_instead(request: Reply, blob: bytes) -> Reply:
    """The reference's answer to ``blob`` in place of the one it was sent."""
    return answer({**request, "blob_b64": base64.b64encode(blob).decode()}, VERSION, wire.default_registry())


def _rewrite(reply: Reply, change: Callable[[dict[str, Any]], Any]) -> Reply:
    if "blob_b64" not in reply:
        return reply
    doc = json.loads(base64.b64decode(reply["blob_b64"]))
    change(doc)
    return {**reply, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


# -- readers -------------------------------------------------------------------------------

#: A number as a strtod-style scanner takes it: signs, leading zeros, bare points, hex.
_LOOSE_NUMBER = re.compile(
    rb"(?<=[:\[,])(\s*)([+-]?(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?))(?=\s*[,\]}])"
)


def _strict(match: re.Match[bytes]) -> bytes:
    text = match.group(2).decode()
    try:
        value: float | int = int(text, 16) if text.lower().lstrip("+-").startswith("0x") else float(text)
    except ValueError:
        return match.group(0)
    plain = "." not in text and "e" not in text.lower() and float(value).is_integer()
    return match.group(1) + (str(int(value)) if plain else repr(float(value))).encode()


@fault("accepts-strtod-numbers")
def _strtod(request: Reply, reply: Reply) -> Reply | None:
    """Numbers scanned by strtod: ``01``, ``+1``, ``.5``, ``1.``, ``0x1`` all read as numbers."""
    if request.get("cmd") != "read" or reply.get("rule") != "JSON":
        return reply
    loose = _LOOSE_NUMBER.sub(_strict, _blob(request))
    return _read_instead(request, loose) if loose != _blob(request) else reply


@fault("decodes-utf8-leniently")
def _lenient_utf8(request: Reply, reply: Reply) -> Reply | None:
    """Invalid UTF-8 decoded with replacement characters (an overlong ``C0 AF`` becomes U+FFFD)."""
    if request.get("cmd") != "read" or reply.get("rule") != "UTF8":
        return reply
    repaired = _blob(request).decode("utf-8", "replace").encode("utf-8")
    return _read_instead(request, repaired.removeprefix("\ufeff".encode()))


#: A value-separator right before an end token: what a JSON5-style parser lets through.
_TRAILING_SEPARATOR = re.compile(rb",([ \t\n\r]*[}\]])")


@fault("accepts-trailing-separators")
def _trailing_separators(request: Reply, reply: Reply) -> Reply | None:
    """A value-separator before ``}`` or ``]`` skipped, as JSON5 and many hand-written parsers do."""
    if request.get("cmd") != "read" or reply.get("rule") != "JSON":
        return reply
    trimmed = _TRAILING_SEPARATOR.sub(rb"\1", _blob(request))
    return _read_instead(request, trimmed) if trimmed != _blob(request) else reply


@functools.cache
def _isspace_beyond_json() -> dict[int, None]:
    """What a parser built on ``str.isspace`` skips beyond RFC 8259's four ``ws`` characters
    (and the byte order mark, which many skip too): a ``str.translate`` table that drops them."""
    return {
        code: None
        for code in range(0x110000)
        if (chr(code).isspace() or code == 0xFEFF) and chr(code) not in " \t\n\r"
    }


@fault("skips-unicode-spaces")
def _unicode_spaces(request: Reply, reply: Reply) -> Reply | None:
    """Whitespace between tokens taken from the host language's ``isspace``, not RFC 8259's four."""
    if request.get("cmd") != "read" or reply.get("rule") != "JSON":
        return reply
    try:
        text = _blob(request).decode("utf-8")
    except UnicodeDecodeError:
        return reply
    spaced = text.translate(_isspace_beyond_json()).encode()
    return _read_instead(request, spaced) if spaced != _blob(request) else reply


#: The C type each integer member is kept in: the value wraps modulo 2^bits.
_NARROW = {"elsize": 8, "device_id": 16, "addr": 64, "publisher_step": 64}
_SIZE_BITS = 32  # full_shape, shard_offset and shape entries in an int32 array


@fault("keeps-integers-narrow")
def _narrow(request: Reply, reply: Reply) -> Reply | None:
    """``elsize`` in a uint8, ``device_id`` in a uint16, sizes in 32 bits, addresses and steps in 64 bits."""
    if request.get("cmd") != "read":
        return reply
    try:
        doc = json.loads(_blob(request))
    except (ValueError, RecursionError):
        return reply

    def wrap(obj: Any) -> None:
        if isinstance(obj, dict):
            for name, value in obj.items():
                if name in _NARROW and isinstance(value, int) and not isinstance(value, bool):
                    obj[name] = value % 2 ** _NARROW[name]
                elif name in ("full_shape", "shard_offset", "shape") and isinstance(value, list):
                    obj[name] = [
                        v % 2**_SIZE_BITS if isinstance(v, int) and not isinstance(v, bool) else v
                        for v in value
                    ]
                else:
                    wrap(value)
        elif isinstance(obj, list):
            for item in obj:
                wrap(item)

    if not isinstance(doc, dict):
        return reply
    wrap(doc)
    return _read_instead(request, json.dumps(doc).encode())


#: A valid value for each required member, by name (what the checker fills in to look further).
_FILL = {"schema": "mx.reshard.shard_table.v1", "agent_name": "a", "agent_meta_b64": "", "tensors": [],
         "name": "w", "dtype": "torch.int8", "elsize": 1, "full_shape": [], "shards": [],
         "device_id": 0, "addr": 0, "shard_offset": [], "shape": []}  # fmt: skip


@fault("checks-types-before-required")
def _types_first(request: Reply, reply: Reply) -> Reply | None:
    """Checks the members it has before it looks for the ones missing (SPEC 2.7 puts REQUIRED first)."""
    if request.get("cmd") != "read" or reply.get("rule") != "REQUIRED":
        return reply
    doc = json.loads(_blob(request))
    obj: Any = doc
    for token in tokens(reply["pointer"]):
        obj = obj[int(token)] if isinstance(obj, list) else obj[token]
    for name, value in _FILL.items():
        obj.setdefault(name, value)
    inner = _read_instead(request, json.dumps(doc).encode())
    inside = inner.get("rejected") and str(inner.get("pointer", "")).startswith(reply["pointer"] + "/")
    return {**inner, "seq": reply["seq"]} if inside else reply


@fault("literals-before-geometry")
def _literals_first(request: Reply, reply: Reply) -> Reply | None:
    """Reports an integer written with a fraction, or non-zero pad bits, before any rule of SPEC
    2.3, wherever each is written (2.7: step 4 is reported in document order, whatever the rule)."""
    if request.get("cmd") != "read" or not reply.get("rejected"):
        return reply
    try:
        check(json.loads(_blob(request)), "rendezvous", VERSION, wire.default_registry())
    except (InvalidBlob, ValueError, RecursionError) as exc:
        found = getattr(exc, "violations", [])
    else:
        return reply
    early = [v for v in found if v.rule in ("INTEGER_LITERAL", "AGENT_META_BASE64")]
    if not early or early[0].rule == reply.get("rule"):
        return reply
    return {**reply, "rule": early[0].rule, "pointer": early[0].pointer}


def _nfc(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, dict):
        return {k: _nfc(v) for k, v in value.items()}
    return [_nfc(v) for v in value] if isinstance(value, list) else value


@fault("normalizes-read-names")
def _normalizes_read(request: Reply, reply: Reply) -> Reply | None:
    """Reports every string in NFC (to match names across writers): not the value written (READ_PROJECTION)."""
    return {**reply, "payload": _nfc(reply["payload"])} if "payload" in reply else reply


@fault("normalizes-written-names")
def _normalizes_written(request: Reply, reply: Reply) -> Reply | None:
    """Writes every string of the payload in NFC: not the payload it was given."""
    if request.get("cmd") != "write" or "blob_b64" not in reply:
        return reply
    return {
        **answer({**request, "payload": _nfc(request["payload"])}, VERSION, wire.default_registry()),
        "seq": reply["seq"],
    }


@fault("drops-shardless-tensors")
def _drops_shardless(request: Reply, reply: Reply) -> Reply | None:
    """Leaves out of the blob the tensors that have no shards here (nothing to read from this rank)."""
    if request.get("cmd") != "write" or "blob_b64" not in reply:
        return reply
    payload = {**request["payload"], "tensors": [t for t in request["payload"]["tensors"] if t["shards"]]}
    return {**answer({**request, "payload": payload}, VERSION, wire.default_registry()), "seq": reply["seq"]}


@fault("rejects-duplicate-keys-at-their-place")
def _duplicates(request: Reply, reply: Reply) -> Reply | None:
    """Not a fault: SPEC 2.1 lets a reader reject repeated names, at the first repeated member."""
    if request.get("cmd") != "read" or reply.get("rule") in ("UTF8", "JSON", "OBJECT", "BLOB_SIZE"):
        return reply
    at = first_repeated_name(_blob(request))
    if at is None:
        return reply
    return {"seq": reply["seq"], "rejected": True, "rule": "DUPLICATE_KEYS", "pointer": at,
            "message": f"a member name is repeated at {at}"}  # fmt: skip


# -- writers -------------------------------------------------------------------------------


def _unknown_members(payload: Any, known: Any) -> list[tuple[list[Any], str, Any]]:
    """(path, name, value) of every payload member the projected payload lacks."""
    found: list[tuple[list[Any], str, Any]] = []

    def walk(obj: Any, seen: Any, at: list[Any]) -> None:
        if isinstance(obj, dict) and isinstance(seen, dict):
            for name, value in obj.items():
                if name not in seen:
                    found.append((at, name, value))
                else:
                    walk(value, seen[name], [*at, name])
        elif isinstance(obj, list) and isinstance(seen, list):
            for i, (item, twin) in enumerate(zip(obj, seen)):
                walk(item, twin, [*at, i])

    walk(payload, known, [])
    return found


@fault("copies-unknown-payload-members")
def _copies(request: Reply, reply: Reply) -> Reply | None:
    """Writes every member of the payload, known or not, into the blob."""
    if request.get("cmd") != "write" or "WRITE_KNOWN_MEMBERS" not in str(reply.get("message", "")):
        return reply
    from refitwire.compat.cases._cases import project

    payload = request["payload"]
    known = project(payload, VERSION, wire.default_registry())
    written = answer({**request, "payload": known}, VERSION, wire.default_registry())

    def add(doc: dict[str, Any]) -> None:
        for at, name, value in _unknown_members(payload, known):
            obj: Any = doc
            for step in at:
                obj = obj[step]
            obj[name] = value

    return _rewrite(written, add)


@fault("refuses-without-a-rule")
def _no_rule(request: Reply, reply: Reply) -> Reply | None:
    """Refuses what it must refuse, with a message that names no rule."""
    if request.get("cmd") == "write" and reply.get("errored"):
        return {"seq": reply["seq"], "errored": True, "message": "cannot write this payload"}
    return reply


@fault("omits-empty-endpoint")
def _omits_endpoint(request: Reply, reply: Reply) -> Reply | None:
    """Leaves an empty metadata_endpoint out of the blob (reading it back gives "" all the same)."""
    return _rewrite(reply, lambda d: d.pop("metadata_endpoint") if d.get("metadata_endpoint") == "" else None)


@fault("dedups-replica-shards")
def _dedups(request: Reply, reply: Reply) -> Reply | None:
    """Writes one shard per box: replicas (the same shard_offset and shape) after the first dropped."""

    def dedup(doc: dict[str, Any]) -> None:
        for t in doc["tensors"]:
            seen: set[str] = set()
            kept = []
            for s in t["shards"]:
                box = json.dumps([s["shard_offset"], s["shape"]])
                if box not in seen:
                    seen.add(box)
                    kept.append(s)
            t["shards"] = kept

    return _rewrite(reply, dedup)


#: Where the compressing writer starts: a page of agent metadata (a threshold real encoders pick).
COMPRESS_PAST = 4 * 1024


@fault("compresses-large-metadata")
def _compresses(request: Reply, reply: Reply) -> Reply | None:
    """Carries agent metadata past ``COMPRESS_PAST`` bytes zlib-compressed (still canonical
    base64, so the blob is valid): a reader gets other bytes than the agent's."""
    if request.get("cmd") != "write" or "blob_b64" not in reply:
        return reply
    blob = base64.b64decode(reply["blob_b64"])
    text = json.loads(blob)["agent_meta_b64"]
    meta = base64.b64decode(text)
    if len(meta) <= COMPRESS_PAST:
        return reply
    packed = base64.b64encode(zlib.compress(meta)).decode("ascii")
    # the one member changed in place: the bytes around it stay the reference writer's
    written = blob.replace(json.dumps(text).encode(), json.dumps(packed).encode(), 1)
    return {**reply, "blob_b64": base64.b64encode(written).decode()}


@fault("dedups-tensors-by-name")
def _dedups_names(request: Reply, reply: Reply) -> Reply | None:
    """Writes one entry per tensor name (the first), as a writer keyed by name does: the other
    entries of a name, and their shards, are lost."""
    if request.get("cmd") != "write" or "blob_b64" not in reply:
        return reply
    first: dict[str, Any] = {}
    for tensor in request["payload"]["tensors"]:
        first.setdefault(tensor["name"], tensor)
    payload = {**request["payload"], "tensors": list(first.values())}
    return {**answer({**request, "payload": payload}, VERSION, wire.default_registry()), "seq": reply["seq"]}


@fault("garbage-on-large-blobs")
def _garbage_large(request: Reply, reply: Reply) -> Reply | None:
    """Prints a log line to stdout instead of answering a read of a blob over a tenth of the limit."""
    if large(request, 10):
        import sys

        sys.stdout.write("loaded the large table\n")
        sys.stdout.flush()
        return None
    return reply
