"""A trainer-rank publisher: owns its shards, registers them with NIXL, publishes its blob.

Run as ``python -m refitwire.refit._publisher --rank R --ranks N --store DIR|URL --fd FD``.
On the CPU its shards live in a numpy arena, so a publisher never imports torch
(a CUDA arena does).
It says hello on FD, then obeys JSON-line commands on stdin:

``{"cmd": "publish", "step": S, "inject": KIND|null}``
    fill the shards with step S's values, digest them, stamp S, post the blob;
``{"cmd": "stop"}`` (or end of input)
    deregister and exit.

Between commands the agent's progress thread keeps serving reads: the process
stays alive while it is read. Injections (misbehaviour on purpose, for tests
and the CLI) are listed in :data:`INJECTIONS`.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from refitwire import tensor_digest, wire
from refitwire.wire import Registry, classes_of, rendezvous_document

from ._layout import resolve_model
from ._model import Model, fill_truth
from ._open import open_store
from ._options import HOSTILE, INJECTIONS, PROGRESS_MODES, UpstreamWriter
from ._proc import answer, reply_channel, serve
from ._store import RendezvousStore

__all__ = ["HOSTILE", "INJECTIONS", "Publisher", "main"]

_ALIGN = 256
_HOSTILE_TENSOR = "embed.weight"  # split by publishers along dim 0
_CORRUPT_TENSOR = "lm_head.bias"  # every receiver reads every publisher's shard of it
_UPSTREAM_WRITER = Path(__file__).with_name("_upstream_writer.py")


def store_key(rank: int) -> str:
    return f"rank-{rank:05d}"


class Publisher:
    """One trainer rank's shards in one registered arena, and the blob that describes them."""

    def __init__(
        self,
        rank: int,
        ranks: int,
        model: Model,
        store: RendezvousStore,
        *,
        agent_name: str | None = None,
        device: str = "cpu",
        upstream: UpstreamWriter | None = None,
        progress: str = "poll",
        registry: Registry,
    ) -> None:
        from ._nixl import Agent

        self.rank, self.ranks, self.model, self.store = rank, ranks, model, store
        self.key = store_key(rank)
        self.upstream = upstream
        self.registry = registry  # where the blob's version is read: the process's one registry
        self.boxes = model.publisher_boxes(rank, ranks)
        offsets, total = {}, 0
        for name, (_, shape) in self.boxes.items():
            offsets[name] = total
            total += -(-math.prod(shape) * model[name].elsize // _ALIGN) * _ALIGN
        self.arena: Any  # numpy on the CPU, a torch tensor on a device
        if device == "cpu":
            self.arena = np.zeros(total, dtype=np.uint8)
            self.base, self.device_id = int(self.arena.ctypes.data), 0
        else:
            self.arena = _device_arena(total, device)
            self.base, self.device_id = int(self.arena.data_ptr()), int(self.arena.device.index or 0)
        #: Each shard's bytes in the arena: (offset, nbytes).
        self.spans = {name: (offsets[name], math.prod(shape) * model[name].elsize)
                      for name, (_, shape) in self.boxes.items()}  # fmt: skip
        self.agent = Agent(agent_name or f"refit-pub-{rank}-{os.getpid()}", progress=progress)
        self.agent.register([self.arena])
        self.agent_metadata = self.agent.metadata()

    def close(self) -> None:
        self.agent.close()

    def publish(self, step: int, inject: str | None = None) -> dict[str, Any]:
        """Fill, digest, stamp, post. Returns what was done (for the parent's log)."""
        if inject is not None and inject not in INJECTIONS:
            raise ValueError(f"unknown injection {inject!r}; known: {', '.join(INJECTIONS)}")
        for name in self.boxes:
            self._fill(name, step)
        if inject == "stale":  # the data moved on, the posted table did not
            return {"posted": False, "step": step, "inject": inject}
        stamp = None if inject == "no-stamp" else step
        with_digest = inject != "no-digest"
        if self.upstream is not None:
            blob = self._upstream_blob(self.upstream, stamp, with_digest)
            document = json.loads(blob)
        else:
            document = rendezvous_document(
                self.agent_metadata,
                self.agent.name,
                "",
                self._tensors(with_digest),
                stamp,
                registry=self.registry,
            )
        if inject == "corrupt":  # after digesting: the wire now disagrees with the table
            start, nbytes = self.spans[_CORRUPT_TENSOR]
            self.arena[start + nbytes // 2] ^= 0x5A
        if inject in HOSTILE:
            _make_hostile(document, inject, self.rank, self.ranks, self.base + len(self.arena))
            blob = json.dumps(document).encode()  # a broken writer: no codec check
        elif self.upstream is None:
            blob = json.dumps(document).encode("ascii")
        self.store.publish(self.key, blob)
        return {"posted": True, "step": step, "inject": inject, "bytes": len(blob)}

    def shard_bytes(self, name: str) -> Any:
        """The arena's bytes of one shard (a numpy or torch uint8 view)."""
        start, nbytes = self.spans[name]
        return self.arena[start : start + nbytes]

    def _fill(self, name: str, step: int) -> None:
        if isinstance(self.arena, np.ndarray):
            fill_truth(self.model[name], step, self.boxes[name], self.shard_bytes(name))
            return
        import torch  # a device arena: fill on the host, copy over

        host = np.empty(self.spans[name][1], dtype=np.uint8)
        fill_truth(self.model[name], step, self.boxes[name], host)
        self.shard_bytes(name).copy_(torch.from_numpy(host))

    def _tensors(self, with_digest: bool) -> list[Any]:
        classes = classes_of(self.registry)  # the registry's PublishedTensor and PublishedShard
        tensors = []
        for name in self.boxes:
            spec, (offset, shape) = self.model[name], self.boxes[name]
            shard = classes.shard(
                agent_name=self.agent.name,
                device_id=self.device_id,
                addr=self.base + self.spans[name][0],
                shard_offset=offset,
                shape=shape,
                digest=tensor_digest(self.shard_bytes(name)) if with_digest else None,
            )
            tensors.append(
                classes.tensor(
                    name=name,
                    dtype=f"torch.{spec.dtype}",
                    elsize=spec.elsize,
                    full_shape=spec.full_shape,
                    shards=(shard,),
                )
            )
        return tensors

    def _upstream_blob(self, upstream: UpstreamWriter, stamp: int | None, with_digest: bool) -> bytes:
        """Have the released upstream code digest these bytes and write the blob."""
        with tempfile.TemporaryDirectory(prefix="refit-upstream-") as tmp:
            request: dict[str, Any] = {
                "objects": upstream.objects,
                "agent_meta_b64": base64.b64encode(self.agent_metadata).decode("ascii"),
                "agent_name": self.agent.name,
                "metadata_endpoint": "",
                "publisher_step": stamp,
                "digest": with_digest,
                "tensors": [],
            }
            for i, name in enumerate(self.boxes):
                spec, (offset, shape) = self.model[name], self.boxes[name]
                data = Path(tmp) / f"{i}.bin"
                raw = self.shard_bytes(name)
                data.write_bytes(bytes(raw if isinstance(raw, np.ndarray) else raw.cpu().numpy()))
                request["tensors"].append({
                    "name": name, "dtype": f"torch.{spec.dtype}", "elsize": spec.elsize,
                    "full_shape": list(spec.full_shape),
                    "shards": [{"agent_name": self.agent.name, "device_id": self.device_id,
                                "addr": self.base + self.spans[name][0], "shard_offset": list(offset),
                                "shape": list(shape), "data_file": str(data)}],
                })  # fmt: skip
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
            done = subprocess.run(
                [upstream.python, str(_UPSTREAM_WRITER)],
                input=json.dumps(request).encode(),
                capture_output=True,
                env=env,
                timeout=120,
                check=False,
            )
        if done.returncode != 0:
            raise RuntimeError(f"upstream writer failed: {done.stderr.decode(errors='replace')[-2000:]}")
        return base64.b64decode(done.stdout.strip())


def _device_arena(nbytes: int, device: str) -> Any:
    import torch

    return torch.zeros(nbytes, dtype=torch.uint8, device=device)


def _make_hostile(document: dict[str, Any], kind: str, rank: int, ranks: int, arena_end: int) -> None:
    entry = next(t for t in document["tensors"] if t["name"] == _HOSTILE_TENSOR)
    shard = entry["shards"][0]
    last = rank == ranks - 1
    if kind == "overlap":
        if last and ranks > 1:
            shard["shard_offset"][0] -= 1
        shard["shape"][0] += 1
    elif kind == "out-of-bounds":
        shard["shard_offset"][0] = entry["full_shape"][0] - shard["shape"][0] + 1
    elif kind == "rank-mismatch":
        shard["shape"].append(1)
    elif kind == "gap":
        shard["shape"][0] -= 1
    elif kind == "disagree":
        entry["full_shape"][1] += 1
    elif kind == "foreign-agent":
        shard["agent_name"] = "someone-else"
    elif kind == "unregistered-addr":
        shard["addr"] = arena_end + (1 << 20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m refitwire.refit._publisher")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--model", default="default", help="a model name or <bytes>B")
    parser.add_argument("--layout", default=None, help="a layout preset or file (scaled to --model <bytes>B)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--progress", default="poll", choices=PROGRESS_MODES, help="how NIXL progresses")
    parser.add_argument("--agent-name", default=None)
    parser.add_argument("--upstream-python", default=None, help="write the blob with released upstream code")
    parser.add_argument("--upstream-objects", default=None, help="its shard table objects' builder (a file)")
    parser.add_argument("--fd", type=int, required=True, help="answer pipe (NIXL logs to stdout)")
    args = parser.parse_args(argv)
    if (args.upstream_python is None) != (args.upstream_objects is None):
        parser.error("--upstream-python and --upstream-objects go together")
    out = reply_channel(args.fd)
    pub = Publisher(
        args.rank,
        args.ranks,
        resolve_model(args.model, args.layout),
        open_store(args.store),
        agent_name=args.agent_name,
        device=args.device,
        upstream=UpstreamWriter(args.upstream_python, args.upstream_objects)
        if args.upstream_python
        else None,
        progress=args.progress,
        registry=wire.default_registry(),
    )
    answer(out, {"hello": pub.agent.name, "key": pub.key, "pid": os.getpid(), "arena": len(pub.arena)})

    def publish(msg: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"ok": True, **pub.publish(int(msg["step"]), msg.get("inject"))}
        except Exception as exc:  # a crash is data: report it and keep serving
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    try:
        # Without a progress thread the publisher progresses its agent between commands.
        idle = pub.agent.progress if args.progress == "off" else None
        serve(out, {"publish": publish}, idle=idle)
    finally:
        pub.close()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the agent is closed; skip tearing down the interpreter (torch's part of it is slow)
