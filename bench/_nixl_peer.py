"""The publisher side of the NIXL benchmark, run as its own process.

Usage: python -m refitwire.bench._nixl_peer NBYTES FD

Registers NBYTES of seeded bytes with its progress thread off, writes one JSON line
(name, base64 metadata, addr) to file descriptor FD, then progresses its agent by hand
(a short sleep between polls, so it leaves the cores to the reader) until stdin says
"stop" or closes.
"""

from __future__ import annotations

import base64
import json
import os
import select
import sys

import numpy as np


def main(nbytes: str, fd: str) -> None:
    from refitwire.refit import Agent

    buf = np.random.default_rng(1).integers(0, 256, size=int(nbytes), dtype=np.uint8)
    with Agent(f"bench-publisher-{os.getpid()}", progress="off") as agent:
        agent.register([buf])
        hello = {
            "name": agent.name,
            "metadata": base64.b64encode(agent.metadata()).decode("ascii"),
            "addr": buf.ctypes.data,
        }
        with os.fdopen(int(fd), "w") as out:
            out.write(json.dumps(hello) + "\n")
        while True:
            ready, _, _ = select.select([sys.stdin], [], [], 0.002)
            if ready:
                line = sys.stdin.readline()
                if not line or line.strip() == "stop":
                    break
            agent.progress()  # with the progress thread off, this is what serves the reader


if __name__ == "__main__":
    main(*sys.argv[1:])
