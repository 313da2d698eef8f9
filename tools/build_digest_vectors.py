"""Build schema/vectors/digest/digest.json: per-shard digests computed by the RELEASED upstream code.

Run: python tools/build_digest_vectors.py [--upstream 0.7.0] [--check]

The inputs (bytes, dtype, shape, box) are chosen here to cover SPEC.md section 4: every dtype
label of its table, with and without ``torch.``; sizes around the digest's internal
boundaries (the 4-byte word, the 4 KiB row); empty and odd-length inputs; words that are
negative as int32 and sums that need 64 bits; and boxes that are not contiguous in their
tensor. The expected digest of each is whatever the released ``verify.tensor_digest`` of
``modelexpress`` answers through the upstream adapter's ``digest`` command (after its own
``verify.shard_region`` for a box), run in the environment
``python -m refitwire.compat.upstream.envs`` builds. Nothing here computes a digest.

``--check`` rebuilds in memory and fails (exit 1) when the committed file differs: the
file, its builder and the released code have not drifted apart.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import _clone
from refitwire._spec import dtype_sizes
from refitwire.compat.cases._digest import digest_request
from refitwire.compat.upstream import ADAPTER_SCRIPT, envs

OUT = Path(__file__).resolve().parent.parent / "schema" / "vectors" / "digest" / "digest.json"
ROW = 4096  # bytes in one digest row (SPEC.md section 4)


def vector(
    description: str, dtype: str, shape: list[int], data: bytes, box: Any = None, repeat: int = 1
) -> dict[str, Any]:
    """A digest input; ``repeat``: the tensor is ``data`` that many times over (kept once here)."""
    key = json.dumps([dtype, shape, box, base64.b64encode(data).decode()], sort_keys=True)
    if repeat > 1:
        key = json.dumps([key, repeat])
    v: dict[str, Any] = {
        "id": "d-" + hashlib.sha256(key.encode()).hexdigest()[:12],
        "description": description,
    }
    v.update(dtype=dtype, shape=shape)
    if box is not None:
        v["box"] = {"shard_offset": box[0], "shape": box[1]}
    v["data_b64"] = base64.b64encode(data).decode()
    if repeat > 1:
        v["repeat"] = repeat
    return v


def inputs() -> list[dict[str, Any]]:
    rng = random.Random(18)
    found = []
    # Sizes around the word and the row: the scalars the digest takes change at each.
    for n in (0, 1, 2, 3, 4, 5, 7, 8, 1023, ROW - 4, ROW - 3, ROW - 1, ROW, ROW + 1, ROW + 3, ROW + 4,
              2 * ROW - 1, 2 * ROW, 2 * ROW + 5, 3 * ROW + 4 * 7 + 3):  # fmt: skip
        found.append(vector(f"{n} random bytes as uint8", "uint8", [n], rng.randbytes(n)))
    words = 3 * ROW // 4
    found.append(
        vector("3 rows of int32 -1 (every word negative)", "torch.int32", [words], b"\xff" * 3 * ROW)
    )
    found.append(
        vector(
            "3 rows of int32 2^31-1 (row sums past 32 bits)",
            "int32",
            [3, ROW // 4],
            b"\xff\xff\xff\x7f" * words,
        )
    )
    found.append(
        vector(
            "3 rows of int32 -2^31 and 3 ragged bytes above 127",
            "int8",
            [3 * ROW + 3],
            b"\x00\x00\x00\x80" * words + b"\x80\x81\xff",
        )
    )
    # One row whose words sum to R = 2^41 - 1025, odd, repeated. Over 128 rows S2 is R * 8256, past
    # 2^53 but a multiple of 64: a double holds it, so a sum kept in one is not caught here.
    row = b"\xff\xff\xff\x7f" * (ROW // 4 - 1) + b"\xfe\xff\xff\x7f"
    described = (
        "128 rows of int32 near 2^31-1, odd row sums (S2 past 2^53, a multiple of 64: a double holds it)"
    )
    found.append(vector(described, "int32", [128, ROW // 4], row, repeat=128))
    # Each sum that can pass 2^53, odd and past it, where a double holds no integer: a sum kept in a
    # double (JavaScript's Number, a float64 accumulator) gives another digest. Over 125 rows S2 is
    # R * 7875; S1 is at most 2^41 a row, so it passes 2^53 only past 4096 rows: over 4097, S1 is
    # 4097 * R, and S2 (R * 4097 * 2049) passes 2^64 and wraps. The tail's sums stay under 2^51.
    for rows, past in ((125, "S2 odd past 2^53"), (4097, "S1 odd past 2^53, S2 past 2^64 (wraps)")):
        described = f"{rows} rows of int32 near 2^31-1, odd row sums ({past}: a double cannot hold it)"
        found.append(vector(described, "int32", [rows, ROW // 4], row, repeat=rows))
    # Every dtype label of the table, as written on the wire (with and without torch.).
    for i, (label, size) in enumerate(sorted(dtype_sizes(_clone.registry()).items())):
        written = f"torch.{label}" if i % 2 == 0 else label
        data = bytes(rng.randrange(2) for _ in range(15)) if label == "bool" else rng.randbytes(15 * size)
        found.append(vector(f"every dtype: {written}, shape [3, 5]", written, [3, 5], data))
    # Boxes that are not contiguous in their tensor: the digest is of the box's bytes, row-major.
    boxes: list[tuple[str, str, int, list[int], list[int], list[int]]] = [
        ("the upstream test's box", "torch.bfloat16", 2, [4, 6], [1, 2], [2, 3]),
        ("a box crossing a row boundary", "torch.float32", 4, [64, 48], [3, 5], [40, 30]),
        ("a box of int8 with a ragged tail", "int8", 1, [9, 1100], [2, 1], [6, 1097]),
        ("a 3-d box", "torch.int16", 2, [5, 7, 130], [1, 2, 3], [3, 4, 127]),
        ("a box with an empty dimension", "torch.float16", 2, [4, 6], [1, 6], [2, 0]),
        ("a box of complex128", "torch.complex128", 16, [6, 5], [2, 1], [3, 3]),
        ("the whole tensor as a box", "torch.int64", 8, [3, 4], [0, 0], [3, 4]),
        ("a box of one column", "torch.uint8", 1, [4099, 2], [0, 1], [4099, 1]),
        # whole in its trailing dimensions and partial before them: rows adjacent, not the tensor's start
        ("a 3-d box whole in its last dimension only", "torch.int16", 2, [5, 7, 130], [1, 2, 0], [3, 4, 130]),
        ("a box of whole rows past the first", "torch.float32", 4, [64, 48], [5, 0], [10, 48]),
    ]
    for description, dtype, size, shape, offset, extent in boxes:
        count = 1
        for d in shape:
            count *= d
        found.append(
            vector(f"box: {description}", dtype, shape, rng.randbytes(count * size), (offset, extent))
        )
    found.append(vector("a 0-d tensor (shape [])", "torch.float32", [], rng.randbytes(4)))
    return found


def digests(version: str, cases: list[dict[str, Any]]) -> list[str]:
    """Each case's digest as the released ``modelexpress`` ``version`` computes it."""
    python = envs.find_env(version)
    if python is None:
        raise SystemExit(
            f"build_digest_vectors: no environment for modelexpress {version} under {envs.cache_dir()}: "
            "build it with `python -m refitwire.compat.upstream.envs`"
        )
    requests = [{"cmd": "start", "protocol": 1}]
    for seq, case in enumerate(cases, 1):
        requests.append({"cmd": "digest", "seq": seq, **digest_request(case)})
    text = "".join(json.dumps(r) + "\n" for r in requests + [{"cmd": "stop"}])
    proc = subprocess.run(
        [str(python), str(ADAPTER_SCRIPT)], input=text.encode(), capture_output=True, timeout=600, check=False
    )
    answers = [json.loads(line) for line in proc.stdout.decode().splitlines()][1:]
    if proc.returncode != 0 or len(answers) != len(cases):
        raise SystemExit(f"build_digest_vectors: the adapter failed: {proc.stderr.decode()[-2000:]}")
    found = []
    for case, answer in zip(cases, answers):
        if "digest" not in answer:
            raise SystemExit(
                f"build_digest_vectors: upstream did not digest {case['id']}: {json.dumps(answer)}"
            )
        found.append(answer["digest"])
    return found


def document(version: str) -> str:
    cases = inputs()
    for case, digest in zip(cases, digests(version, cases)):
        case["digest"] = digest
        case["tier"] = "required"
    doc = {
        "description": (
            "Per-shard digests (SPEC.md section 4) computed by the released modelexpress "
            f"{version} (verify.tensor_digest, after verify.shard_region for a box); "
            "written by tools/build_digest_vectors.py. data_b64 is the whole tensor, row-major; "
            "the digest is of the box (the whole tensor when there is no box)."
        ),
        "upstream": f"modelexpress {version}",
        "vectors": cases,
    }
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--upstream", default=envs.UPSTREAM_VERSIONS[-1], help="the release whose digests to record"
    )
    parser.add_argument("--check", action="store_true", help="fail when the committed file differs")
    args = parser.parse_args()
    text = document(args.upstream)
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.name} differs from what the released code gives: rebuild it", file=sys.stderr)
            return 1
        print(f"{OUT.name}: up to date ({len(json.loads(text)['vectors'])} vectors)")
        return 0
    _clone.writable()
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(json.loads(text)['vectors'])} vectors)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
