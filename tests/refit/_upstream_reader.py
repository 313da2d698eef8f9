"""Read our publishers' blobs with the released upstream code (run by the upstream python).

Stdlib + torch + ``modelexpress`` only. Input on stdin: ``{"blobs": [path...],
"data": [{"file", "dtype", "shape"}...]}``. Output on stdout: each blob as
upstream's ``unwrap_rendezvous_blob`` decodes it, upstream ``verify.tensor_digest``
of each data file, and how many tensors upstream ``merge_shard_tables`` yields.
"""

from __future__ import annotations

import base64
import json
import sys

import torch
from modelexpress.refit.reshard import rendezvous, verify  # type: ignore[import-not-found]


def main() -> None:
    req = json.load(sys.stdin)
    payloads, tables = [], []
    for path in req["blobs"]:
        with open(path, "rb") as fh:
            p = rendezvous.unwrap_rendezvous_blob(fh.read())
        tables.append(p.tensors)
        payloads.append({
            "agent_name": p.agent_name,
            "metadata_endpoint": p.metadata_endpoint,
            "agent_meta_b64": base64.b64encode(p.agent_metadata).decode("ascii"),
            "publisher_step": p.publisher_step,
            "tensors": [
                {"name": t.name, "dtype": t.dtype, "elsize": t.elsize, "full_shape": list(t.full_shape),
                 "shards": [{"agent_name": s.agent_name, "device_id": s.device_id, "addr": s.addr,
                             "shard_offset": list(s.shard_offset), "shape": list(s.shape), "digest": s.digest}
                            for s in t.shards]}
                for t in p.tensors
            ],
        })  # fmt: skip
    digests = []
    for d in req["data"]:
        with open(d["file"], "rb") as fh:
            raw = bytearray(fh.read())
        dtype = getattr(torch, d["dtype"].split(".")[-1])
        digests.append(
            verify.tensor_digest(torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(d["shape"]))
        )
    merged = rendezvous.merge_shard_tables(tables)
    json.dump({"payloads": payloads, "digests": digests, "merged_tensors": len(merged)}, sys.stdout)


if __name__ == "__main__":
    main()
