"""Shared helpers for the tests: loading the golden vectors."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).resolve().parent.parent / "schema" / "vectors"


def load_vectors() -> list[dict[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        if path.name != "vector.schema.json":
            out += json.loads(path.read_text(encoding="utf-8"))["vectors"]
    return out


def blob_of(vector: dict[str, Any]) -> bytes:
    if "blob" in vector:
        return vector["blob"].encode("utf-8")
    return base64.b64decode(vector["blob_b64"])
