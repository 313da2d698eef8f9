"""The reference implementation as a testee.

``python -m refitwire.compat.testees.reference [--spec-version V] [--schema-dir DIR]``;
with --schema-dir, V may be an unreleased candidate version found in DIR: the library's own
reader and writer answer at it, given the registry that holds DIR's candidates.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import refitwire
from refitwire import (
    InvalidBlob,
    from_decoded,
    latest,
    merge_shard_tables,
    to_decoded,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)
from refitwire.wire import dtype_sizes, no_gc


def answer(request: dict[str, Any], version: str, registry: wire.Registry) -> dict[str, Any]:
    cmd, seq = request.get("cmd"), request.get("seq")
    if cmd == "start":
        return {
            "implementation": {"name": "refitwire", "version": refitwire_version(), "language": "python"},
            "spec_version": version,
            "roles": ["reader", "writer"],
        }
    if cmd in ("read", "count"):
        try:
            blob = base64.b64decode(request["blob_b64"], validate=True)
        except (KeyError, TypeError, ValueError) as exc:
            return {"seq": seq, "errored": True, "message": f"bad {cmd} request: {exc}"}
        try:
            payload = unwrap_rendezvous_blob(
                blob, with_tensors=cmd == "read", spec_version=version, registry=registry
            )
        except InvalidBlob as exc:
            return {
                "seq": seq,
                "rejected": True,
                "message": str(exc),
                "rule": exc.rule,
                "pointer": exc.pointer,
            }
        decoded = to_decoded(payload, version, registry)
        if cmd == "count":  # the quorum read: every member but the table, and the table's count
            table = registry.wire_model("rendezvous", version).table_at()[-1]
            del decoded[table]
            return {"seq": seq, "envelope": decoded, "entries": payload.entry_count()}
        return {"seq": seq, "payload": decoded}
    if cmd == "write":
        try:
            p = from_decoded(request["payload"], registry)
            blob = wrap_rendezvous_blob(
                *p[:4], p.publisher_step, spec_version=version, registry=registry, **p.optional_members
            )
        # Only a refusal is an answer: any other exception is a crash of the library, which ends the
        # process (an errored case with its traceback), never an "errored" reply a refusal case passes on.
        except InvalidBlob as exc:
            if exc.rule == "DECODED_FORM":  # a bad request, not a rule of the spec
                return {"seq": seq, "errored": True, "message": f"not a decoded payload: {exc}"}
            return {
                "seq": seq,
                "errored": True,
                "message": f"refusing to write an invalid blob: {exc}",
                "rule": exc.rule,
            }
        return {"seq": seq, "blob_b64": base64.b64encode(blob).decode("ascii")}
    if cmd == "merge":
        return merged(request, version, registry)
    if cmd == "digest":
        try:
            return {"seq": seq, "digest": digest(request, registry)}
        except (KeyError, TypeError, ValueError) as exc:
            return {"seq": seq, "errored": True, "message": f"cannot digest this: {exc}"}
    return {"seq": seq, "skipped": True, "reason": f"unknown command {cmd!r}"}


def merged(request: dict[str, Any], version: str, registry: wire.Registry) -> dict[str, Any]:
    """The library's merge of the request's tables (decoded ``tensors`` arrays), as decoded tensors."""
    seq, table = request.get("seq"), registry.wire_model("rendezvous", version).table_at()[-1]
    envelope = {"agent_name": "", "metadata_endpoint": "", "agent_meta_b64": "", "publisher_step": None}
    try:
        payloads = [from_decoded({**envelope, table: t}, registry) for t in request["tables"]]
    except (KeyError, TypeError, InvalidBlob) as exc:
        return {"seq": seq, "errored": True, "message": f"bad merge request: {exc}"}
    try:
        tensors = merge_shard_tables(p.tensors for p in payloads)
    except InvalidBlob as exc:
        return {"seq": seq, "rejected": True, "message": str(exc), "rule": exc.rule, "pointer": exc.pointer}
    return {"seq": seq, "merged": to_decoded(payloads[0]._replace(tensors=tensors), version, registry)[table]}


def digest(request: dict[str, Any], registry: wire.Registry) -> str:
    """SPEC.md section 4's digest of the box ``request["box"]`` of the tensor in ``data_b64``
    (the dtype's element size from ``registry``'s SPEC.md)."""
    import numpy as np

    data = base64.b64decode(request["data_b64"], validate=True)
    label, shape = request["dtype"], request["shape"]
    elsize = dtype_sizes(registry).get(label.removeprefix("torch."))
    if elsize is None:
        raise ValueError(f"unknown dtype {label!r}")
    count = 1
    for extent in shape:
        count *= extent
    if len(data) != count * elsize:
        raise ValueError(f"{len(data)} bytes for shape {shape} of {label} ({count * elsize} expected)")
    tensor = np.frombuffer(data, dtype=np.dtype(f"V{elsize}")).reshape(shape)
    box = request.get("box")
    if box is not None:
        offset, extent = box["shard_offset"], box["shape"]
        if not len(offset) == len(extent) == len(shape):
            raise ValueError(f"rank mismatch: shape {shape}, box {offset} + {extent}")
        if any(o < 0 or e < 0 or o + e > n for o, e, n in zip(offset, extent, shape)):
            raise ValueError(f"the box {offset} + {extent} is not inside shape {shape}")
        tensor = tensor[tuple(slice(o, o + e) for o, e in zip(offset, extent))]
    return refitwire.tensor_digest(np.ascontiguousarray(tensor).reshape(-1).view(np.uint8))


def refitwire_version() -> str:
    from importlib.metadata import version

    return version("refitwire")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec-version", default=latest())
    parser.add_argument(
        "--schema-dir", type=Path, help="a schema/ folder holding an unreleased candidate --spec-version"
    )
    args = parser.parse_args()
    version = args.spec_version
    registry = wire.default_registry()
    if version not in registry.released_versions():
        if not args.schema_dir:
            parser.error(f"unknown spec version {version} (a candidate needs --schema-dir)")
        registry = registry.with_candidates(args.schema_dir.resolve())
        if version not in registry.candidate_versions():
            parser.error(
                f"spec version {version!r} is not released (known: {', '.join(registry.released_versions())}) "
                f"and {args.schema_dir} has no candidate schema rendezvous/{version}.json"
            )
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        try:
            request = _loads(line)
        except ValueError as exc:
            text = _dumps({"seq": None, "errored": True, "message": f"request is not JSON: {exc}"})
        else:
            if request.get("cmd") == "stop":
                return 0
            # One pause for the whole answer (the reader and the decoded form pause the collector
            # each, but between them a table's million objects set off full collections), ended
            # once the reply is serialized and its objects freed by their counts.
            with no_gc():
                reply = answer(request, version, registry)
                text = _dumps(reply)
                del reply
        out.write(text + b"\n")
        out.flush()
    return 0


# A request at the size limit is an 85 MB line and its reply a decoded table of ~10^6 values:
# orjson reads and writes them (the reader pauses the collector itself), the standard library
# takes what orjson refuses (NaN, lone surrogates, integers past 64 bits) with its own meaning.


def _loads(line: bytes) -> Any:
    """A request: orjson for a read request (base64 and small integers: the 85 MB line at the
    size limit), the standard library for anything else, because orjson reads an integer past
    64 bits as a float (a write payload's ``addr`` of 2^64 must stay that integer)."""
    request = json.loads(line) if b'"read"' not in line[:200] else None
    if request is not None:
        return request
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _dumps(reply: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(reply)
    except TypeError:
        return json.dumps(reply).encode("ascii")


if __name__ == "__main__":
    raise SystemExit(main())
