"""Rebuild ``fuzz/corpus/`` from the golden vectors (``schema/vectors/*.json``).

One file per vector blob, named by the vector id; run from the repository root:
``python fuzz/make_corpus.py``. The corpus is small on purpose (< 200 files, < 2 MB):
libFuzzer grows its own working corpus from it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    out = ROOT / "fuzz" / "corpus"
    out.mkdir(exist_ok=True)
    for old in out.glob("v-*"):
        old.unlink()
    count = 0
    for path in sorted((ROOT / "schema" / "vectors").glob("*.json")):
        vectors = json.loads(path.read_text()).get("vectors", [])
        for vector in vectors:
            if "blob_b64" in vector:
                blob = base64.b64decode(vector["blob_b64"])
            elif "blob" in vector:
                blob = vector["blob"].encode("utf-8")
            else:
                continue
            (out / vector["id"]).write_bytes(blob)
            count += 1
    print(f"{count} seed files in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
