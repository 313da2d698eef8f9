#!/usr/bin/env python3
"""Frozen generation 1.2.0: a reader and writer of exactly spec 1.2.0, as a testee.

Speaks the conformance protocol (one JSON object per line on stdin/stdout, diagnostics on
stderr). Stdlib only, self-contained, runs with any python3 >= 3.10.

A released generation is never edited: its sha256 is pinned in lock.json and a test fails
if the file changes. A new spec version gets a new file beside this one. The file shares no
code with refitwire or with the other generations on purpose: it is a second
implementation of SPEC.md, and frozen history, like a released binary.

Extension: a read request may carry ``"document": "shard-table"`` to read a standalone
shard table (decoded form ``{"tensors": [...]}``); the default is ``"rendezvous"``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import sys

VERSION = "1.2.0"
WIRE_ID = "mx.reshard.shard_table.v1"
MAX_BLOB = 64 * 1024 * 1024
MAX_DEPTH = 1024
U64, I63, I31 = 2**64, 2**63, 2**31
DTYPE_LABEL = re.compile(r"(?:torch\.)?[a-z][a-z0-9_]*")
DIGEST = re.compile(r"[0-9a-f]{32}")
BASE64 = re.compile(r"[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]=|==)?")  # with len % 4 == 0: padded base64
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
SURROGATE = re.compile("[\ud800-\udfff]")
DTYPE_SIZES = {
    "bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
    "int16": 2, "uint16": 2, "float16": 2, "half": 2, "bfloat16": 2,
    "int32": 4, "uint32": 4, "float32": 4, "float": 4, "complex32": 4,
    "int64": 8, "uint64": 8, "float64": 8, "double": 8, "long": 8, "complex64": 8,
    "complex128": 16,
}  # fmt: skip
REQUIRED = {
    "rendezvous": ("schema", "agent_name", "agent_meta_b64", "tensors"),
    "shard-table": ("schema", "tensors"),
    "tensor": ("name", "dtype", "elsize", "full_shape", "shards"),
    "shard": ("agent_name", "device_id", "addr", "shard_offset", "shape"),
}


class Reject(Exception):
    def __init__(self, rule: str, at: tuple, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in at)


class BadRequest(Exception):
    pass


def short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- reading -------------------------------------------------------------------------------


def no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{short(text)} overflows a double")
    return value


def finite_int(text: str) -> int:
    # Numbers a double cannot hold are refused (section 5 lets a reader bound its input);
    # this also keeps int() off megabytes of digits.
    try:
        if len(text) > 400:
            raise OverflowError
        value = int(text)
        float(value)
    except OverflowError:
        raise ValueError(f"{short(text)} overflows a double") from None
    return value


def parse(blob: bytes) -> dict:
    if len(blob) > MAX_BLOB:
        raise Reject("BLOB_SIZE", (), f"{len(blob)} bytes: over the {MAX_BLOB}-byte limit")
    if blob.startswith(b"\xef\xbb\xbf"):
        raise Reject("UTF8", (), "b'\\xef\\xbb\\xbf': a blob must not start with a byte order mark")
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Reject("UTF8", (), f"byte {exc.start}: not UTF-8 ({exc.reason})") from None
    try:
        document = json.loads(
            text, parse_constant=no_constant, parse_float=finite_float, parse_int=finite_int
        )
    except RecursionError:
        raise Reject("JSON", (), "nested deeper than this reader allows") from None
    except ValueError as exc:
        raise Reject("JSON", (), f"not one JSON text: {exc}") from None
    stack = [(document, 1)]
    while stack:  # what json.loads lets through: lone surrogates, excessive depth
        value, depth = stack.pop()
        if isinstance(value, str):
            if SURROGATE.search(value):
                raise Reject("JSON", (), f"{short(value)}: a lone surrogate is not Unicode text")
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise Reject("JSON", (), f"nested deeper than {MAX_DEPTH}")
            if isinstance(value, dict):
                stack.extend((key, depth) for key in value)
                value = value.values()
            stack.extend((item, depth + 1) for item in value)
    if not isinstance(document, dict):
        raise Reject("OBJECT", (), f"{type(document).__name__}: the top level must be a JSON object")
    return document


def required(obj: object, kind: str, at: tuple) -> None:
    if type(obj) is not dict:
        raise Reject("TYPE", at, f"{short(obj)}: a {kind} is a JSON object")
    for name in REQUIRED[kind]:
        if name not in obj:
            raise Reject("REQUIRED", at, f"{kind} has no {name!r}")


def string(obj: dict, name: str, at: tuple, optional: bool = False) -> None:
    value = obj.get(name)
    if type(value) is not str and not (optional and value is None):
        raise Reject("TYPE", at + (name,), f"{short(value)}: {name} is a string")


def integer(value: object, at: tuple, rule: str, low: int, high: int) -> None:
    if type(value) is float and math.isfinite(value) and value.is_integer():
        raise Reject("INTEGER_LITERAL", at, f"{value!r}: integers are written without fraction or exponent")
    if type(value) is not int:
        raise Reject("TYPE", at, f"{short(value)}: not an integer")
    if not low <= value < high:
        raise Reject(rule, at, f"{value}: out of [{low}, {high})")


def sizes(obj: dict, name: str, at: tuple) -> None:
    value = obj[name]
    if type(value) is not list:
        raise Reject("TYPE", at + (name,), f"{short(value)}: {name} is an array of integers")
    for d, item in enumerate(value):
        integer(item, at + (name, d), "SIZE_RANGE", 0, I63)


def check_structure(doc: dict, kind: str) -> None:
    if "schema" in doc and doc["schema"] != WIRE_ID:
        raise Reject("SCHEMA_ID", ("schema",), f"{short(doc['schema'])}: not {WIRE_ID}")
    required(doc, kind, ())
    if kind == "rendezvous":
        string(doc, "agent_name", ())
        string(doc, "metadata_endpoint", (), optional=True)
        string(doc, "agent_meta_b64", ())
        meta = doc["agent_meta_b64"]
        if not canonical_base64(meta):
            raise Reject("AGENT_META_BASE64", ("agent_meta_b64",), f"{short(meta)}: not canonical base64")
    if type(doc["tensors"]) is not list:
        raise Reject("TYPE", ("tensors",), f"{short(doc['tensors'])}: tensors is an array")
    for t, tensor in enumerate(doc["tensors"]):
        at = ("tensors", t)
        required(tensor, "tensor", at)
        string(tensor, "name", at)
        string(tensor, "dtype", at)
        if not DTYPE_LABEL.fullmatch(tensor["dtype"]):
            raise Reject("DTYPE_LABEL", at + ("dtype",), f"{short(tensor['dtype'])}: not a dtype label")
        integer(tensor["elsize"], at + ("elsize",), "ELSIZE_RANGE", 1, 65)
        sizes(tensor, "full_shape", at)
        if type(tensor["shards"]) is not list:
            raise Reject("TYPE", at + ("shards",), f"{short(tensor['shards'])}: shards is an array")
        for s, shard in enumerate(tensor["shards"]):
            check_shard(shard, at + ("shards", s))
    step = doc.get("publisher_step")
    if kind == "rendezvous" and step is not None:
        integer(step, ("publisher_step",), "STEP_RANGE", 0, I63)


def check_shard(shard: object, at: tuple) -> None:
    required(shard, "shard", at)
    string(shard, "agent_name", at)
    integer(shard["device_id"], at + ("device_id",), "DEVICE_ID_RANGE", 0, I31)
    integer(shard["addr"], at + ("addr",), "ADDR_RANGE", 0, U64)
    sizes(shard, "shard_offset", at)
    sizes(shard, "shape", at)
    digest = shard.get("digest")
    if digest is not None:
        string(shard, "digest", at)
        if not DIGEST.fullmatch(digest):
            raise Reject("DIGEST_FORMAT", at + ("digest",), f"{short(digest)}: not 32 lowercase hex digits")


def canonical_base64(text: str) -> bool:
    if len(text) % 4 or not BASE64.fullmatch(text):
        return False
    if text.endswith("=="):
        return ALPHABET.index(text[-3]) & 0b1111 == 0
    if text.endswith("="):
        return ALPHABET.index(text[-2]) & 0b11 == 0
    return True


def check_geometry(doc: dict) -> None:
    for t, tensor in enumerate(doc["tensors"]):
        dtype, elsize, full = tensor["dtype"], tensor["elsize"], tensor["full_shape"]
        known = DTYPE_SIZES.get(dtype[len("torch.") :] if dtype.startswith("torch.") else dtype)
        if known is not None and known != elsize:
            message = f"{elsize}: {dtype} elements are {known} bytes"
            raise Reject("ELSIZE_DTYPE", ("tensors", t, "elsize"), message)
        for s, shard in enumerate(tensor["shards"]):
            at = ("tensors", t, "shards", s)
            offset, shape = shard["shard_offset"], shard["shape"]
            if not len(offset) == len(shape) == len(full):
                raise Reject("RANK_AGREEMENT", at, f"ranks {len(offset)}, {len(shape)}, {len(full)} differ")
            for d in range(len(full)):
                if offset[d] + shape[d] > full[d]:
                    raise Reject("BOX_IN_BOUNDS", at + ("shape", d), f"{shape[d]}: box ends past {full[d]}")
            nbytes = 0 if 0 in shape else elsize
            for extent in shape:
                nbytes *= extent
                if nbytes > U64:
                    break
            if shard["addr"] + nbytes > U64:
                raise Reject("ADDR_SPAN", at + ("addr",), f"{shard['addr']}: {nbytes} bytes wrap past 2^64")


def read(blob: bytes, kind: str) -> dict:
    doc = parse(blob)
    check_structure(doc, kind)
    check_geometry(doc)
    tensors = [
        {
            "name": t["name"],
            "dtype": t["dtype"],
            "elsize": t["elsize"],
            "full_shape": t["full_shape"],
            "shards": [
                {
                    "agent_name": s["agent_name"],
                    "device_id": s["device_id"],
                    "addr": s["addr"],
                    "shard_offset": s["shard_offset"],
                    "shape": s["shape"],
                    "digest": s.get("digest"),
                }
                for s in t["shards"]
            ],
        }
        for t in doc["tensors"]
    ]
    if kind == "shard-table":
        return {"tensors": tensors}
    return {
        "agent_name": doc["agent_name"],
        "metadata_endpoint": doc.get("metadata_endpoint") or "",
        "agent_meta_b64": doc["agent_meta_b64"],
        "publisher_step": doc.get("publisher_step"),
        "tensors": tensors,
    }


# -- writing -------------------------------------------------------------------------------


def field(obj: object, name: str, where: str) -> object:
    if type(obj) is not dict or name not in obj:
        raise BadRequest(f"{where} has no {name!r}")
    return obj[name]


def array(obj: object, name: str, where: str) -> list:
    value = field(obj, name, where)
    if type(value) is not list:
        raise BadRequest(f"{where}.{name} is {short(value)}, not an array")
    return value


def write(payload: object) -> bytes:
    meta = field(payload, "agent_meta_b64", "payload")
    try:
        meta = base64.b64encode(base64.b64decode(meta, validate=True)).decode("ascii")
    except (TypeError, ValueError, binascii.Error) as exc:
        raise BadRequest(f"payload.agent_meta_b64 {short(meta)} is not base64: {exc}") from None
    endpoint = payload.get("metadata_endpoint")
    doc = {
        "schema": WIRE_ID,
        "agent_name": field(payload, "agent_name", "payload"),
        "metadata_endpoint": "" if endpoint is None else endpoint,
        "agent_meta_b64": meta,
        "tensors": [],
    }
    for i, t in enumerate(array(payload, "tensors", "payload")):
        where = f"payload.tensors[{i}]"
        entry = {k: field(t, k, where) for k in ("name", "dtype", "elsize", "full_shape")}
        entry["shards"] = []
        for j, s in enumerate(array(t, "shards", where)):
            keys = ("agent_name", "device_id", "addr", "shard_offset", "shape")
            shard = {k: field(s, k, f"{where}.shards[{j}]") for k in keys}
            if s.get("digest") is not None:
                shard["digest"] = s["digest"]
            entry["shards"].append(shard)
        doc["tensors"].append(entry)
    if payload.get("publisher_step") is not None:
        doc["publisher_step"] = payload["publisher_step"]
    blob = json.dumps(doc).encode("ascii")
    try:  # WRITE_VALID: never emit what a reader of this version refuses
        read(blob, "rendezvous")
    except Reject as exc:
        raise BadRequest(f"refusing to write an invalid blob: {exc} [{exc.rule} at {exc.pointer}]") from None
    return blob


# -- protocol ------------------------------------------------------------------------------


def handle(request: object) -> dict | None:
    if type(request) is not dict:
        raise BadRequest(f"a request is a JSON object, not {short(request)}")
    cmd, seq = request.get("cmd"), request.get("seq")
    if cmd == "start":
        if request.get("protocol") != 1:
            raise BadRequest(f"unsupported protocol {short(request.get('protocol'))}; this testee speaks 1")
        implementation = {"name": "refitwire-generation", "version": VERSION, "language": "python"}
        return {"implementation": implementation, "spec_version": VERSION, "roles": ["reader", "writer"]}
    if cmd not in ("read", "write"):
        return {"seq": seq, "skipped": True, "reason": f"unknown command {short(cmd)}"}
    if "seq" not in request:
        raise BadRequest(f"{cmd} request has no 'seq'")
    if cmd == "write":
        blob = write(field(request, "payload", "request"))
        return {"seq": seq, "blob_b64": base64.b64encode(blob).decode("ascii")}
    kind = request.get("document", "rendezvous")
    if kind not in ("rendezvous", "shard-table"):
        raise BadRequest(f"unknown document {short(kind)}")
    try:
        blob = base64.b64decode(field(request, "blob_b64", "request"), validate=True)
    except (TypeError, ValueError, binascii.Error) as exc:
        raise BadRequest(f"blob_b64 is not base64: {exc}") from None
    try:
        return {"seq": seq, "payload": read(blob, kind)}
    except Reject as exc:
        return {"seq": seq, "rejected": True, "rule": exc.rule, "pointer": exc.pointer, "message": str(exc)}


def main() -> int:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * MAX_DEPTH))
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = seq = None
        try:
            request = json.loads(line)
            seq = request.get("seq") if type(request) is dict else None
            if type(request) is dict and request.get("cmd") == "stop":
                break
            answer = handle(request)
        except Exception as exc:  # a bad request or a bug here: answered, never fatal
            print(f"gen {VERSION}: {type(exc).__name__}: {exc}", file=sys.stderr)
            answer = {"seq": seq, "errored": True, "message": f"{type(exc).__name__}: {exc}"}
        try:
            out.write(json.dumps(answer).encode("ascii") + b"\n")
            out.flush()
        except BrokenPipeError:
            return 0
        except (TypeError, ValueError) as exc:  # an unserializable answer; should not happen
            out.write(json.dumps({"seq": seq, "errored": True, "message": str(exc)}).encode() + b"\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
