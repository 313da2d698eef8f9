"""The disk the kit's caches take, and the build of one upstream environment, for tools/figures.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def du(path: Path) -> int:
    """The bytes ``path`` takes on disk (blocks, each file counted once however many links it has)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files, *([""] if root == str(path) else [])]:
            try:
                info = os.lstat(os.path.join(root, name) if name else root)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def measure_caches(refitwire: list[str], work: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*refitwire, "cache", "--json"], capture_output=True, text=True, check=True, cwd=work
    )
    listed = json.loads(done.stdout)
    sizes = {cache["name"]: cache["bytes"] for cache in listed["caches"]}
    envs = next(cache for cache in listed["caches"] if cache["name"] == "compat-envs")
    each = {Path(entry).name: du(Path(entry)) for entry in envs["entries"] if Path(entry).is_dir()}
    return {"sizes": sizes, "total": listed["bytes"], "envs": each}


def measure_env_build(work: Path) -> dict[str, Any]:
    version = "0.7.0"
    folder = work / "envs"
    argv = [
        sys.executable,
        "-m",
        "refitwire.compat.upstream.envs",
        "--versions",
        version,
        "--cache",
        str(folder),
    ]
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=3600
    )
    if done.returncode != 0:
        raise SystemExit(f"the environment build failed ({done.returncode}): {done.stderr[-2000:]}")
    wall = time.monotonic() - started
    return {"version": version, "wall": round(wall, 1), "bytes": du(folder / f"modelexpress-{version}")}
