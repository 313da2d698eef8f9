"""Discovery at fleet scale: N real tables in a real store, read as a receiver reads them each step.

``python -m refitwire.bench._fleet [--ranks 16 64 256] [--layout moe-30b-a3b] [--model-bytes 1GiB]
[--loaders 2] [--reps 5] [--json FILE]``

For each N, N publishers' tables shaped by the layout at N ranks (each rank's boxes,
as ``Layout``'s engine sharding gives them: experts dealt out, dense projections
split, norms replicated; fake addresses and 4 KiB of agent metadata, real digests'
length) are written with the codec to a real ``redis-server`` (started here, on a
free loopback port, nothing saved) and to a directory store. Then, per store, what
one receiver's discovery costs in one step: listing the keys, the count-only quorum
read of every blob (read and ``with_tensors=False``), the decode of every blob of
the quorum (the receiver decodes all of them, as it does: checked whole, no models
built, ``lazy=True``) and the bytes read from the store;
first alone, then while ``--loaders`` other processes run the same discovery in a
loop against the same store (the other receivers). Then a receiver's own discovery
(``KnownTables``): its first step, and its steady state, the tables unchanged for longer
than the directory's settle time (``settle_ns``, two seconds: at a 152 ms step, from the
fourteenth step after a publish), where the store vouches for every blob and none is
fetched, and a step after one publisher posted its table again (the same bytes: a directory
fetches that one blob, Redis every blob, since its stamp is one per namespace). Medians of
``--reps``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from refitwire import PublishedShard, PublishedTensor, unwrap_rendezvous_blob, wrap_rendezvous_blob
from refitwire.refit import (
    DirectoryStore,
    KnownTables,
    Model,
    RendezvousStore,
    open_store,
    parse_bytes,
    resolve_model,
)
from refitwire.wire import no_gc

__all__ = ["discover_once", "main", "publish_tables", "receiver_discovery"]

_META = 4096  # bytes of agent metadata per blob (NIXL's UCX metadata is a few KiB)


def publish_tables(store: RendezvousStore, model: Model, ranks: int) -> list[int]:
    """Write ``ranks`` publishers' tables of ``model``; the blob sizes."""
    sizes = []
    for rank in range(ranks):
        agent = f"refit-pub-{rank}"
        base, tensors = 0x7F0000000000 + (rank << 36), list[PublishedTensor]()
        for name, (offset, shape) in model.publisher_boxes(rank, ranks).items():
            spec = model[name]
            shard = PublishedShard(agent_name=agent, device_id=0, addr=base, shard_offset=offset, shape=shape,
                                   digest=f"{rank:08x}{len(tensors):024x}")  # fmt: skip
            tensors.append(PublishedTensor(name=name, dtype=f"torch.{spec.dtype}", elsize=spec.elsize,
                                           full_shape=spec.full_shape, shards=(shard,)))  # fmt: skip
            base += -(-spec.elsize * max(1, _volume(shape)) // 256) * 256
        blob = wrap_rendezvous_blob(os.urandom(_META), agent, "", tensors, 1)
        store.publish(f"rank-{rank:05d}", blob)
        sizes.append(len(blob))
    return sizes


def _volume(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def discover_once(store: RendezvousStore) -> dict[str, float]:
    """One receiver's discovery in one step, timed by part (seconds) and bytes read."""
    t0 = time.perf_counter()
    keys = store.keys()
    t1 = time.perf_counter()
    blobs, nbytes, quorum_s = [], 0, 0.0
    for key in keys:
        blob = store.read(key)
        if blob is None:
            continue
        nbytes += len(blob)
        q = time.perf_counter()
        if unwrap_rendezvous_blob(blob, with_tensors=False).entry_count():
            blobs.append(blob)
        quorum_s += time.perf_counter() - q
    t2 = time.perf_counter()
    entries = sum(len(unwrap_rendezvous_blob(blob, lazy=True).tensors) for blob in blobs)
    t3 = time.perf_counter()
    return {"list_s": t1 - t0, "read_s": t2 - t1 - quorum_s, "quorum_s": quorum_s, "decode_s": t3 - t2,
            "total_s": t3 - t0, "bytes": nbytes, "tables": len(blobs), "entries": entries}  # fmt: skip


def receiver_discovery(tables: KnownTables) -> dict[str, float]:
    """One step's discovery as the receiver does it (``KnownTables``): every blob the store does
    not vouch for read and compared with the bytes kept, the changed ones counted, the quorum
    (every non-empty table) decoded unless it is the table decoded before, with the collector
    paused as the receiver pauses it for a step. Seconds by part, and how many tables the store
    vouched for (not fetched) and were reused."""
    tables.reset_counts()
    with no_gc():
        t0 = time.perf_counter()
        scan = tables.scan()
        t1 = time.perf_counter()
        entries = sum(len(tables.payload(key).tensors) for key in scan.ready)
        t2 = time.perf_counter()
    return {"scan_s": t1 - t0, "decode_s": t2 - t1, "total_s": t2 - t0, "entries": entries,
            "vouched": scan.vouched, "reused": tables.reused, "decoded": tables.decoded}  # fmt: skip


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _redis(workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH (Debian: apt-get install redis-server)")
    port = _free_port()
    log = workdir / "redis.log"
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
                             "--save", "", "--appendonly", "no", "--logfile", str(log)])  # fmt: skip
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if log.exists() and "Ready to accept connections" in log.read_text(errors="replace"):
            return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.02)
    proc.kill()
    raise SystemExit(f"redis-server did not start: {log.read_text(errors='replace')[-500:]}")


def _loaders(spec: str, count: int) -> list[subprocess.Popen[bytes]]:
    code = ("import sys\nfrom refitwire.bench._fleet import discover_once\nfrom refitwire.refit import open_store\n"
            "store = open_store(sys.argv[1])\nwhile True:\n    discover_once(store)\n")  # fmt: skip
    return [
        subprocess.Popen([sys.executable, "-c", code, spec], stderr=subprocess.DEVNULL) for _ in range(count)
    ]


def measure(spec: str, ranks: int, model: Model, reps: int, loaders: int) -> dict[str, Any]:
    store = open_store(spec)
    sizes = publish_tables(store, model, ranks)
    published = time.time()
    discover_once(store)  # warm the page cache and the connection
    quiet = _median([discover_once(store) for _ in range(reps)])
    first = _median([receiver_discovery(KnownTables(store)) for _ in range(reps)])  # a receiver's first step
    settle_s = store.settle_ns / 1e9 if isinstance(store, DirectoryStore) else 0.0  # Redis vouches at once
    time.sleep(max(0.0, published + settle_s - time.time()))
    known = KnownTables(store)
    receiver_discovery(known)
    steady = _median([receiver_discovery(known) for _ in range(reps)])  # later steps, tables unchanged
    reposted = []  # one publisher posts its table again, the same bytes
    for _ in range(reps):
        store.publish("rank-00000", store.read("rank-00000") or b"")
        reposted.append(receiver_discovery(known))
    running = _loaders(spec, loaders)
    try:
        time.sleep(0.5)  # let them start
        loaded = _median([discover_once(store) for _ in range(reps)])
    finally:
        for proc in running:
            proc.kill()
            proc.wait()
    return {"ranks": ranks, "blob_bytes_median": statistics.median(sizes), "quiet": quiet, "loaded": loaded,
            "receiver_first": first, "receiver_steady": steady, "receiver_one_reposted": _median(reposted)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m refitwire.bench._fleet", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--ranks", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--layout", default="moe-30b-a3b")
    parser.add_argument("--model-bytes", default="1GiB")
    parser.add_argument("--loaders", type=int, default=2, help="other receivers loading the store")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    model = resolve_model(f"{parse_bytes(args.model_bytes)}B", args.layout)
    work = Path(tempfile.mkdtemp(prefix="refitwire-fleet-"))
    server, url = _redis(work)
    rows = []
    try:
        for n in args.ranks:
            for store, spec in (
                ("directory", str(work / f"dir-{n}")),
                ("redis", f"{url}?namespace=fleet-{n}"),
            ):
                row = {"store": store, **measure(spec, n, model, args.reps, args.loaders)}
                rows.append(row)
                q, ld = row["quiet"], row["loaded"]
                print(f"N={n:4d} {store:9s} blob {row['blob_bytes_median'] / 1e3:7.1f} kB  entries {q['entries']:6.0f}  "
                      f"read {q['bytes'] / 1e6:6.1f} MB  list {q['list_s'] * 1e3:6.2f}  read {q['read_s'] * 1e3:7.1f}  "
                      f"quorum {q['quorum_s'] * 1e3:6.1f}  decode {q['decode_s'] * 1e3:7.1f}  total {q['total_s'] * 1e3:7.1f} ms"
                      f"  | loaded total {ld['total_s'] * 1e3:7.1f} ms", flush=True)  # fmt: skip
                f, st, rp = row["receiver_first"], row["receiver_steady"], row["receiver_one_reposted"]
                print(f"       receiver: first step {f['total_s'] * 1e3:7.1f} ms (decode {f['decode_s'] * 1e3:7.1f}, "
                      f"{f['decoded']:.0f} decoded)  steady {st['total_s'] * 1e3:7.1f} ms (scan {st['scan_s'] * 1e3:6.1f}, "
                      f"decode {st['decode_s'] * 1e3:6.1f}; {st['vouched']:.0f} not fetched, {st['reused']:.0f} reused, "
                      f"{st['decoded']:.0f} decoded)  one re-posted {rp['total_s'] * 1e3:6.1f} ms "
                      f"({rp['vouched']:.0f} not fetched)", flush=True)  # fmt: skip
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    if args.json is not None:
        report = {"layout": args.layout, "model_bytes": model.nbytes, "loaders": args.loaders, "reps": args.reps,
                  "load_average": os.getloadavg(), "rows": rows}  # fmt: skip
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
