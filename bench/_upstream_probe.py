"""Timing script run by the *released* modelexpress's own interpreter (stdlib + its deps only).

Usage: python _upstream_probe.py REQUEST.json  ->  one JSON object on stdout.

REQUEST: {"reps": N, "blobs": [path, ...], "wraps": [{"inputs": path, "out": path}, ...],
          "digest": {"path": path} | null, "objects": path}  (objects: the one builder of
          upstream's shard table objects, refitwire.compat.upstream.UPSTREAM_OBJECTS)
Never imports refitwire: it must measure upstream exactly as a receiver would run it.
"""

from __future__ import annotations

import base64
import functools
import json
import runpy
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def _timed(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    fn()
    samples, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.thread_time()
        fn()
        samples.append(time.perf_counter() - start)
        cpu.append(time.thread_time() - start_cpu)
    best, median = min(samples), statistics.median(samples)
    return {"best_s": best, "median_s": median, "worst_s": max(samples),
            "spread": (median / best - 1.0) if best > 0 else 0.0, "reps": len(samples),
            "cpu_best_s": min(cpu)}  # fmt: skip


def _writer_call(rdv: Any, inputs: dict[str, Any], objects: str) -> Callable[[], bytes]:
    """Upstream's writer on the neutral inputs, its own dataclasses built beforehand (as the
    reference's models are built before its writer is timed) by the one builder at ``objects``."""
    tensors = runpy.run_path(objects)["published_tensors"](rdv, inputs["tensors"])
    args = (base64.b64decode(inputs["agent_meta_b64"]), inputs["agent_name"], inputs["metadata_endpoint"])
    return functools.partial(rdv.wrap_rendezvous_blob, *args, tensors, inputs["publisher_step"])


def main(request_path: str) -> None:
    import importlib.metadata

    from modelexpress.refit.reshard import rendezvous as rdv

    with open(request_path) as fh:
        request = json.load(fh)
    reps = request["reps"]
    out: dict[str, Any] = {
        "version": importlib.metadata.version("modelexpress"),
        "python": sys.version.split()[0],
    }
    out["unwrap"], out["count_only"] = [], []
    blob_reps = request.get("blob_reps") or [reps] * len(request["blobs"])  # fewer for the largest tables
    for path, decode_reps in zip(request["blobs"], blob_reps):
        with open(path, "rb") as raw:
            blob = raw.read()
        out["unwrap"].append(_timed(functools.partial(rdv.unwrap_rendezvous_blob, blob), decode_reps))
        count = rdv.unwrap_rendezvous_blob(blob, with_tensors=False).entry_count()
        t = _timed(functools.partial(rdv.unwrap_rendezvous_blob, blob, with_tensors=False), reps)
        out["count_only"].append(dict(t, entries=count))
    out["wrap"] = []
    for wrap_request in request.get("wraps", []):
        with open(wrap_request["inputs"]) as fh:
            inputs = json.load(fh)
        wrap = _writer_call(rdv, inputs, request["objects"])
        out["wrap"].append(_timed(wrap, reps))
        with open(wrap_request["out"], "wb") as sink:
            sink.write(wrap())
    if request.get("digest"):
        import numpy as np
        import torch
        from modelexpress.refit.reshard import verify

        data = torch.from_numpy(np.fromfile(request["digest"]["path"], dtype=np.uint8))
        out["digest"] = _timed(lambda: verify.tensor_digest(data), reps)
        out["digest_value"] = verify.tensor_digest(data)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
