"""A real NIXL publisher process for the transfer tests.

Usage: python _publisher.py NAME NBYTES SEED FD

Registers NBYTES of known bytes (``pattern(NBYTES, SEED)``), writes one JSON
line (name, base64 metadata, addr, nbytes) to file descriptor FD, then keeps
its agent alive, progressing on its own thread, until stdin says "stop" or
closes. NIXL logs to stdout, which is why the hello goes to its own pipe.
"""

from __future__ import annotations

import base64
import json
import os
import sys

import numpy as np


def pattern(nbytes: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=nbytes, dtype=np.uint8)


def main(name: str, nbytes: str, seed: str, fd: str) -> None:
    from refitwire.refit._nixl import Agent

    buf = pattern(int(nbytes), int(seed))
    with Agent(name) as agent:
        agent.register([buf])
        hello = {
            "name": agent.name,
            "metadata": base64.b64encode(agent.metadata()).decode("ascii"),
            "addr": buf.ctypes.data,
            "nbytes": buf.nbytes,
        }
        with os.fdopen(int(fd), "w") as out:
            out.write(json.dumps(hello) + "\n")
        for line in sys.stdin:  # EOF (parent gone) ends us too
            if line.strip() == "stop":
                break


if __name__ == "__main__":
    main(*sys.argv[1:])
