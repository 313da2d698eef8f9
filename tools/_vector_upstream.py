"""What the released upstream readers do with a generated vector, measured, not guessed.

A generated vector's ``upstream`` (and so its tier, SPEC section 7) is what the released
``modelexpress`` readers really answer: ``tools/upstream-verdicts.json`` holds each verdict by
vector ID, measured by ``python tools/build_vectors.py --measure-upstream`` (needs the upstream
environments, ``REFITWIRE_ENVS``), which starts every released reader and sends it the blob.
A blob no reader was asked about yet reads as ``accepts`` (the lenient, Recommended guess)
and ``--check`` reports it as unmeasured.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

CACHE = Path(__file__).with_name("upstream-verdicts.json")
_ASKED: dict[str, bytes] = {}  # vector id -> blob: every generated blob this build asked about


def vector_id(document: str, blob: bytes) -> str:
    return "v-" + hashlib.sha256(document.encode() + b"\n" + blob).hexdigest()[:12]


def _cache() -> dict[str, str]:
    if not CACHE.exists():
        return {}
    loaded: dict[str, str] = json.loads(CACHE.read_text(encoding="utf-8"))["verdicts"]
    return loaded


_KNOWN = _cache()


def upstream_verdict(document: str, blob: bytes) -> str:
    """``rejects`` when every released reader rejects ``blob``, else ``accepts``."""
    key = vector_id(document, blob)
    _ASKED[key] = blob
    return _KNOWN.get(key, "accepts")


def unmeasured() -> list[str]:
    return sorted(set(_ASKED) - set(_KNOWN))


def stale_entries() -> list[str]:
    return sorted(set(_KNOWN) - set(_ASKED))


def measure() -> dict[str, str]:
    """Ask every released reader about every generated blob; the verdicts by vector ID."""
    from refitwire import compat
    from refitwire.compat._testee import Testee

    found, missing = compat.upstream()
    if not found or missing:
        raise SystemExit(f"the released upstream readers are needed: {'; '.join(missing) or 'none found'}")
    verdicts = dict.fromkeys(_ASKED, "rejects")
    for participant in found:
        testee = Testee(list(participant.command), timeout_s=30.0)
        testee.start()
        try:
            for seq, (key, blob) in enumerate(sorted(_ASKED.items())):
                reply = testee.request(
                    {"cmd": "read", "seq": seq, "blob_b64": base64.b64encode(blob).decode()}
                )
                if not reply.get("rejected"):  # a decoded payload, or one it cannot carry (it accepted)
                    verdicts[key] = "accepts"
        finally:
            testee.stop()
    return verdicts


def write(verdicts: dict[str, str]) -> None:
    body = {
        "description": "What the released modelexpress readers (every one) do with each generated vector, by vector ID; written by tools/build_vectors.py --measure-upstream.",
        "verdicts": dict(sorted(verdicts.items())),
    }
    CACHE.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


EXPECTED = Path(__file__).resolve().parent.parent / "compat" / "expected-failures" / "modelexpress.json"


def expected_failures(vectors: list[dict[str, Any]]) -> str:
    """``modelexpress.json`` with one reader entry per invalid rendezvous vector the released
    readers accept (its ``upstream``), entries of vectors that are gone dropped, the rest kept."""
    data = json.loads(EXPECTED.read_text(encoding="utf-8"))
    ids = {v["id"]: v for v in vectors if v["document"] == "rendezvous"}
    tolerated = {
        i
        for i, v in ids.items()
        if v["upstream"] == "accepts" and not all(o["valid"] for o in v["expect"].values())
    }

    def keep(entry: dict[str, Any]) -> bool:
        if not entry["case"].startswith("read:"):
            return True
        found = entry["case"][5:]
        return found in tolerated or (
            found in ids and not entry["reason"].startswith("released readers tolerate it")
        )

    kept = [e for e in data["expected_failures"] if keep(e)]
    listed = {e["case"] for e in kept}
    for v in vectors:
        bad = [o for o in v["expect"].values() if not o["valid"]]
        case = f"read:{v['id']}"
        if v["id"] in ids and bad and v["upstream"] == "accepts" and case not in listed:
            rule = bad[0]["rule"]
            kept.append({"case": case, "role": "reader",
                         "reason": f"released readers tolerate it ({rule}): {v['description']}",
                         "link": f"schema/SPEC.md#{rule}"})  # fmt: skip
    data["expected_failures"] = sorted(kept, key=lambda e: (e["case"].split(":")[0], e["case"]))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
