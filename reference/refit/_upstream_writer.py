"""Write a rendezvous blob with the *released* upstream code (run by the upstream python).

Stdlib + torch + ``modelexpress`` only (refitwire is not installed there). Reads a
JSON request on stdin: the blob's fields, per shard a ``data_file`` holding the
shard's bytes, and ``objects``: the path of the one builder of upstream's objects
(``refitwire.compat.upstream.UPSTREAM_OBJECTS``). Digests each shard with upstream
``verify.tensor_digest`` over a tensor of the shard's dtype and shape, has the builder
make upstream ``PublishedTensor`` / ``PublishedShard`` and prints
``base64(wrap_rendezvous_blob(...))`` on stdout.
"""

from __future__ import annotations

import base64
import json
import runpy
import sys

import torch
from modelexpress.refit.reshard import rendezvous, verify


def main() -> None:
    req = json.load(sys.stdin)
    for t in req["tensors"]:
        dtype = getattr(torch, t["dtype"].split(".")[-1])
        for s in t["shards"]:
            with open(s["data_file"], "rb") as fh:
                raw = bytearray(fh.read())
            view = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(s["shape"])
            s["digest"] = verify.tensor_digest(view) if req["digest"] else None
    tensors = runpy.run_path(req["objects"])["published_tensors"](rendezvous, req["tensors"])
    blob = rendezvous.wrap_rendezvous_blob(
        base64.b64decode(req["agent_meta_b64"]),
        req["agent_name"],
        req["metadata_endpoint"],
        tensors,
        publisher_step=req["publisher_step"],
    )
    sys.stdout.write(base64.b64encode(blob).decode("ascii") + "\n")


if __name__ == "__main__":
    main()
