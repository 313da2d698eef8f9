"""A deliberately broken testee: the reference implementation with one fault injected.

Run as ``python faulty_testee.py FAULT``; ``none`` is the correct implementation.
Each fault is a mistake a real implementation could make; the conformance suite must
catch every one of them.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from typing import Any

from refitwire.compat.testees.reference import answer


def _blob_doc(reply: dict[str, Any]) -> dict[str, Any]:
    return json.loads(base64.b64decode(reply["blob_b64"]))


def _with_doc(reply: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    return {**reply, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


def _shards(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for t in payload["tensors"] for s in t["shards"]]


def fault(name: str, request: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any] | None:
    """Rewrite a correct reply into a faulty one (None: say nothing and hang)."""
    cmd = request.get("cmd")
    read_ok = cmd == "read" and "payload" in reply
    if name == "step-missing-as-zero" and read_ok and reply["payload"].get("publisher_step", 0) is None:
        reply["payload"]["publisher_step"] = 0
    elif name == "writes-null-step" and cmd == "write" and "blob_b64" in reply:
        doc = _blob_doc(reply)
        doc.setdefault("publisher_step", None)
        return _with_doc(reply, doc)
    elif name == "drops-step-zero" and cmd == "write" and "blob_b64" in reply:
        doc = _blob_doc(reply)
        if doc.get("publisher_step") == 0:
            del doc["publisher_step"]
        return _with_doc(reply, doc)
    elif name == "rejects-unknown-keys" and read_ok:
        known = {"schema", "agent_name", "metadata_endpoint", "agent_meta_b64", "tensors", "publisher_step"}
        if set(json.loads(base64.b64decode(request["blob_b64"]))) - known:
            return {"seq": reply["seq"], "rejected": True, "message": "unknown member"}
    elif name == "accepts-wrong-schema-id" and reply.get("rule") == "SCHEMA_ID":
        doc = json.loads(base64.b64decode(request["blob_b64"]))
        doc["schema"] = "mx.reshard.shard_table.v1"
        return fault(
            "none",
            request,
            answer({**request, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}, VERSION),
        )
    elif name == "rounds-large-addresses" and read_ok:
        for s in _shards(reply["payload"]):
            s["addr"] = int(float(s["addr"]))
    elif name == "reorders-shards" and read_ok:
        for t in reply["payload"]["tensors"]:
            t["shards"].reverse()
    elif name == "uppercases-digests" and read_ok:
        for s in _shards(reply["payload"]):
            s["digest"] = s["digest"].upper() if s.get("digest") else s.get("digest")
    elif name == "writes-null-digests" and cmd == "write" and "blob_b64" in reply:
        doc = _blob_doc(reply)
        for t in doc["tensors"]:
            for s in t["shards"]:
                s.setdefault("digest", None)
        return _with_doc(reply, doc)
    elif name == "crashes-on-empty-table" and read_ok and not reply["payload"]["tensors"]:
        sys.exit(3)
    elif name == "hangs-on-read" and cmd == "read":
        return None
    elif name == "wrong-seq" and "seq" in reply:
        reply["seq"] = reply["seq"] + 1
    elif name == "endpoint-null-as-none" and read_ok and reply["payload"]["metadata_endpoint"] == "":
        reply["payload"]["metadata_endpoint"] = None
    elif name == "garbage-output" and cmd == "read":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        return None
    elif name == "drops-unknown-dtype-tensors" and read_ok:
        reply["payload"]["tensors"] = [t for t in reply["payload"]["tensors"] if "float4" not in t["dtype"]]
    return reply


VERSION = "1.2.0"

if __name__ == "__main__":
    name = sys.argv[1]
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "stop":
            break
        faulty = fault(name, request, answer(request, VERSION))
        if faulty is None:
            if name == "hangs-on-read":
                time.sleep(3600)
            continue
        sys.stdout.write(json.dumps(faulty) + "\n")
        sys.stdout.flush()
