"""Write a rendezvous blob with the *released* upstream code (run by the upstream python).

Stdlib + torch + ``modelexpress`` only (refitwire is not installed there). Reads a
JSON request on stdin: the blob's fields, and per shard a ``data_file`` holding
the shard's bytes. Digests each shard with upstream ``verify.tensor_digest`` over
a tensor of the shard's dtype and shape, builds upstream ``PublishedTensor`` /
``PublishedShard`` and prints ``base64(wrap_rendezvous_blob(...))`` on stdout.
"""

from __future__ import annotations

import base64
import json
import sys

import torch
from modelexpress.refit.reshard import rendezvous, verify


def main() -> None:
    req = json.load(sys.stdin)
    tensors = []
    for t in req["tensors"]:
        dtype = getattr(torch, t["dtype"].split(".")[-1])
        shards = []
        for s in t["shards"]:
            with open(s["data_file"], "rb") as fh:
                raw = bytearray(fh.read())
            view = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(s["shape"])
            digest = verify.tensor_digest(view) if req["digest"] else None
            shards.append(rendezvous.PublishedShard(
                agent_name=s["agent_name"], device_id=s["device_id"], addr=s["addr"],
                shard_offset=tuple(s["shard_offset"]), shape=tuple(s["shape"]), digest=digest,
            ))  # fmt: skip
        tensors.append(rendezvous.PublishedTensor(
            name=t["name"], dtype=t["dtype"], elsize=t["elsize"],
            full_shape=tuple(t["full_shape"]), shards=shards,
        ))  # fmt: skip
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
