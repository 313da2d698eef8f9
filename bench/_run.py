"""One benchmark run: every figure beside its anchor, with ratios and the goals they meet.

Sections: decode and encode (three sizes), quorum (count-only read), schema validation,
digest, NIXL reads, and the compat matrix's throughput.
The released upstream is timed by its own interpreter (``_upstream_probe.py``) on the
same bytes and inputs; its columns say "not available" when its environment is absent.
"""

from __future__ import annotations

import datetime
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from refitwire import RendezvousPayload, latest, tensor_digest, to_decoded, wrap_rendezvous_blob
from refitwire import schema_document as schema
from refitwire.bench._codec import decode_section, encode_section, goal, quorum_section
from refitwire.bench._nixl import KiB, MiB, nixl_section
from refitwire.bench._table import ENTRIES, table_inputs
from refitwire.bench._timing import interleaved, timed
from refitwire.wire import default_registry, fast_validator

__all__ = ["Settings", "run_bench"]

UPSTREAM_VERSION = "0.7.0"
PROBE = Path(__file__).with_name("_upstream_probe.py")
NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class Settings:
    """What one run measures; :meth:`full` is the real benchmark, :meth:`tiny` proves it runs."""

    sizes: tuple[int, ...]
    reps: int
    big_reps: int  # for the 10x table and the slow pure-Python validator
    digest_bytes: int
    nixl_sizes: tuple[int, ...]
    nixl_descriptors: tuple[int, int]
    quick: bool = False
    at_limit: bool = False  # also decode the conformance suite's realistic table at the 64 MiB limit

    @classmethod
    def full(cls, reps: int | None = None) -> Settings:
        return cls(
            sizes=(ENTRIES // 10, ENTRIES, ENTRIES * 10),
            reps=reps or 9,
            big_reps=max(2, (reps or 9) // 3),
            digest_bytes=256 * MiB,
            nixl_sizes=(4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 256 * MiB),
            nixl_descriptors=(5000, 64 * KiB),
            at_limit=True,
        )

    @classmethod
    def tiny(cls, reps: int | None = None) -> Settings:
        return cls(
            sizes=(8, 80),
            reps=reps or 2,
            big_reps=1,
            digest_bytes=1 * MiB,
            nixl_sizes=(4 * KiB, 64 * KiB),
            nixl_descriptors=(50, 4 * KiB),
            quick=True,
        )


def run_bench(settings: Settings, log: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="refitwire-bench-") as tmp:
        return _run(settings, Path(tmp), log)


def _run(settings: Settings, tmp: Path, log: Callable[[str], None]) -> dict[str, Any]:
    anchor = settings.sizes[len(settings.sizes) // 2]
    log("building tables")
    inputs = {n: table_inputs(n) for n in settings.sizes}
    blobs = {n: wrap_rendezvous_blob(**args) for n, args in inputs.items()}
    labels: dict[int, str] = {}
    if settings.at_limit:  # the size case's table (kept on disk by the kit): growth per entry to the limit
        from refitwire.compat import count_tensors, size_cases
        from refitwire.wire import blob_limit

        table = size_cases(blob_limit(default_registry()))[0].blob
        labels[count_tensors(table)] = "size:at-limit (8 shards per entry)"
        blobs[count_tensors(table)] = table
    paths = []
    for n, blob in blobs.items():
        paths.append(str(tmp / f"table-{n}.json"))
        Path(paths[-1]).write_bytes(blob)
    wraps = []
    for n, args in inputs.items():
        wrap_inputs, wrap_out = tmp / f"wrap-inputs-{n}.json", tmp / f"upstream-wrap-{n}.bin"
        # The upstream writer's inputs in the decoded form (plain JSON data, for another process).
        wrap_inputs.write_bytes(orjson.dumps(to_decoded(RendezvousPayload(**args))))
        wraps.append({"inputs": str(wrap_inputs), "out": str(wrap_out)})
    digest_data = np.random.default_rng(7).integers(0, 256, size=settings.digest_bytes, dtype=np.uint8)
    digest_path = tmp / "digest.bin"
    digest_data.tofile(digest_path)

    log(f"upstream modelexpress {UPSTREAM_VERSION} in its own environment")
    upstream = _upstream(
        {
            "reps": settings.reps,
            "blobs": paths,
            "blob_reps": [settings.big_reps if n > anchor else settings.reps for n in blobs],
            "wraps": wraps,
            "digest": {"path": str(digest_path)},
        },
        tmp,
    )
    up = upstream if upstream.get("status") == "measured" else None
    upstream_bytes = {n: Path(w["out"]).read_bytes() if up else None for n, w in zip(inputs, wraps)}

    def reps(n: int) -> int:
        return settings.big_reps if n > anchor else settings.reps

    # What this process keeps alive (tables, blobs) goes to the permanent generation, so
    # the collector does not walk it during every timed call: the in-process figures then
    # cost what they would in a lean receiver, as the upstream figures do in their process.
    gc.collect()
    gc.freeze()
    try:
        sections: dict[str, Any] = {}
        log("decode")
        sections["decode"] = decode_section(reps, blobs, anchor, up, labels)
        log("quorum read")
        sections["quorum"] = quorum_section(settings.reps, blobs, anchor, up)
        log("encode")
        sections["encode"] = encode_section(reps, inputs, anchor, up, upstream_bytes)
        log("schema validation")
        sections["schema_validation"] = _schema_validation(settings, blobs[anchor], anchor)
        log("digest")
        sections["digest"] = _digest(settings, digest_data, up)
        del digest_data
        log("NIXL reads (two processes)")
        try:
            sections["nixl"] = nixl_section(
                list(settings.nixl_sizes), settings.nixl_descriptors, settings.reps
            )
        except Exception as exc:  # a broken transport is a result, not an abort
            sections["nixl"] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    finally:
        gc.unfreeze()
    sections["matrix"] = _matrix(settings)
    return {
        "schema": "refitwire.bench.v1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": settings.quick,
        "repetitions": settings.reps,
        "machine": _machine(),
        "versions": _versions(upstream),
        "upstream": {k: v for k, v in upstream.items() if k in ("status", "reason", "version", "python")},
        "sections": sections,
    }


# -- sections ----------------------------------------------------------------------------


def _schema_validation(settings: Settings, blob: bytes, anchor: int) -> dict[str, Any]:
    import jsonschema  # type: ignore[import-untyped]

    document = orjson.loads(blob)
    root = schema("rendezvous", latest())
    slow = jsonschema.validators.validator_for(root)(root)
    fast = fast_validator("rendezvous", latest(), default_registry())  # what the public reader uses
    assert slow.is_valid(document) and fast.is_valid(document)
    times = {
        "jsonschema": timed(lambda: slow.is_valid(document), settings.big_reps),
        "jsonschema_rs": timed(lambda: fast.is_valid(document), settings.reps),
    }
    return {
        "what": "one JSON Schema validation of an already-parsed blob",
        "entries": anchor,
        **times,
        "ratios": {
            "jsonschema_over_jsonschema_rs": times["jsonschema"]["best_s"] / times["jsonschema_rs"]["best_s"]
        },
    }


def _digest(settings: Settings, data: np.ndarray[Any, Any], up: dict[str, Any] | None) -> dict[str, Any]:
    n = data.nbytes
    copy_dst = np.empty_like(data)
    times = interleaved(
        {"refitwire_digest": lambda: tensor_digest(data), "memcpy": lambda: np.copyto(copy_dst, data)},
        settings.reps,
    )
    upstream = up.get("digest") if up else None
    ours = times["refitwire_digest"]["best_s"]
    same = (up["digest_value"] == tensor_digest(data)) if up and upstream else None

    def gbps(t: dict[str, Any] | None) -> float | None:
        return n / t["best_s"] / 1e9 if t else None

    vs_upstream = upstream["best_s"] / ours if upstream else None
    vs_memcpy = times["memcpy"]["best_s"] / ours
    return {
        "what": "per-shard digest of the same bytes (upstream: torch on the CPU, its own threads)",
        "bytes": n,
        "digests_equal": same,
        **{k: dict(v, gb_per_s=gbps(v)) for k, v in times.items()},
        "upstream_digest": dict(upstream, gb_per_s=gbps(upstream)) if upstream else NOT_AVAILABLE,
        "ratios": {
            "refitwire_over_upstream_throughput": vs_upstream,
            "refitwire_over_memcpy_throughput": vs_memcpy,
        },
        "goals": [
            goal("digest >= 3x upstream throughput", vs_upstream, 3.0),
            goal("digest >= 0.5x memcpy throughput", vs_memcpy, 0.5),
        ],
    }


def _matrix(settings: Settings) -> dict[str, Any]:
    """Cases per second through the protocol: the reference at each version and the frozen
    generations, every writer x every reader, one persistent process each, as ``refitwire
    matrix`` runs them: without the size cases (tables of up to 64 MiB for every reader), which
    took three quarters of the time and made this a figure of parsing instead."""
    from refitwire import compat

    registry = default_registry()  # the package's own versions: what `refitwire matrix` runs
    participants = compat.reference(registry) + compat.generations(registry)[0]
    plan = compat.Plan(
        participants, seed=1, examples=10 if settings.quick else 100, limits=False, registry=registry
    )
    lines = compat.run_matrix(plan)
    results = [line for line in lines if line["type"] == "result"]
    seconds = lines[-1]["seconds"]
    pairs = {(r.get("writer"), r.get("reader")) for r in results if r.get("writer") and r.get("reader")}
    return {
        "status": "measured",
        "participants": len(participants),
        "pairs": len(pairs),
        "cases": len(results),
        "seconds": seconds,
        "cases_per_second": round(len(results) / seconds, 1),
        "us_per_case": round(1e6 * seconds / len(results), 1),
        "required_failed": lines[-1]["required_failed"],
    }


# -- helpers -------------------------------------------------------------------------------


def _upstream(request: dict[str, Any], tmp: Path) -> dict[str, Any]:
    try:
        from refitwire.compat.upstream import UPSTREAM_OBJECTS
        from refitwire.compat.upstream.envs import find_env
    except ImportError as exc:  # pragma: no cover
        return {"status": NOT_AVAILABLE, "reason": str(exc)}
    python = find_env(UPSTREAM_VERSION)
    if python is None:
        return {
            "status": NOT_AVAILABLE,
            "reason": f"no built environment for modelexpress {UPSTREAM_VERSION}",
        }
    path = tmp / "upstream-request.json"
    path.write_text(json.dumps({**request, "objects": str(UPSTREAM_OBJECTS)}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    try:
        done = subprocess.run(
            [str(python), str(PROBE), str(path)],
            capture_output=True,
            text=True,
            timeout=1800,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": "the upstream probe timed out"}
    if done.returncode != 0:
        return {"status": "failed", "reason": done.stderr.strip()[-2000:]}
    return {"status": "measured", **json.loads(done.stdout)}


def _machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": load,
        "python": sys.version.split()[0],
    }


def _versions(upstream: dict[str, Any]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    names = (
        "refitwire",
        "orjson",
        "msgspec",
        "jsonschema",
        "jsonschema-rs",
        "pydantic",
        "numpy",
        "torch",
        "nixl-cu12",
    )
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    out["modelexpress (upstream)"] = upstream.get("version")
    return out
