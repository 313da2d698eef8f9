"""What the released upstream readers do with a generated vector, measured, not guessed.

A generated vector's ``upstream`` (and so its tier, SPEC section 7) is what the released
``modelexpress`` readers really answer: ``tools/upstream-verdicts.json`` holds each verdict by
vector ID, measured by ``python tools/build_vectors.py --measure-upstream`` (needs the upstream
environments, ``REFITWIRE_ENVS``), which starts every released reader and sends it the blob.
A blob no reader was asked about yet reads as ``accepts`` (the lenient, Recommended guess)
and ``--check`` reports it as unmeasured. The same run hands every released writer each writer
refusal case of its version (``compat._built_cases.refusal_cases``: one per break of each
keyword of each member) and records which it writes instead of refusing (``writes``): those are
the writer entries of ``compat/expected-failures/modelexpress.json``.
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


def _cache(key: str = "verdicts") -> dict[str, str]:
    if not CACHE.exists():
        return {}
    loaded: dict[str, str] = json.loads(CACHE.read_text(encoding="utf-8")).get(key, {})
    return loaded


_KNOWN = _cache()
_WRITES = _cache("writes")  # refusal case id -> "writes" or "refuses" (every released writer)


def upstream_verdict(document: str, blob: bytes) -> str:
    """``rejects`` when every released reader rejects ``blob``, else ``accepts``."""
    key = vector_id(document, blob)
    _ASKED[key] = blob
    return _KNOWN.get(key, "accepts")


def unmeasured() -> list[str]:
    return sorted(set(_ASKED) - set(_KNOWN))


def stale_entries() -> list[str]:
    return sorted(set(_KNOWN) - set(_ASKED))


def refusal_ids() -> dict[str, Any]:
    """The writer refusal cases of the released writers' version, by case ID."""
    from refitwire.compat._built_cases import refusal_cases
    from refitwire.compat.upstream.adapter_testee import SPEC_VERSION

    return {c.id: c for c in refusal_cases(SPEC_VERSION)}


def unmeasured_refusals() -> list[str]:
    return sorted(set(refusal_ids()) - set(_WRITES))


def measure() -> tuple[dict[str, str], dict[str, str]]:
    """Ask every released reader about every generated blob, and every released writer to write
    every refusal case; the verdicts by vector ID, and ``writes``/``refuses`` by case ID."""
    from refitwire import compat
    from refitwire.compat._testee import Testee

    found, missing = compat.upstream()
    if not found or missing:
        raise SystemExit(f"the released upstream readers are needed: {'; '.join(missing) or 'none found'}")
    verdicts = dict.fromkeys(_ASKED, "rejects")
    refusals = refusal_ids()
    writes = dict.fromkeys(refusals, "refuses")
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
            for seq, (key, case) in enumerate(sorted(refusals.items()), start=len(_ASKED)):
                if "blob_b64" in testee.request({"cmd": "write", "seq": seq, "payload": case.payload}):
                    writes[key] = "writes"
        finally:
            testee.stop()
    return verdicts, writes


def write(verdicts: dict[str, str], writes: dict[str, str]) -> None:
    body = {
        "description": "What the released modelexpress readers (every one) do with each generated vector, by vector ID, and whether its writers write each writer refusal case instead of refusing it (writes), by case ID; written by tools/build_vectors.py --measure-upstream.",
        "verdicts": dict(sorted(verdicts.items())),
        "writes": dict(sorted(writes.items())),
    }
    CACHE.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


EXPECTED = Path(__file__).resolve().parent.parent / "compat" / "expected-failures" / "modelexpress.json"


def expected_failures(vectors: list[dict[str, Any]]) -> str:
    """``modelexpress.json`` with one reader entry per invalid rendezvous vector the released
    readers accept (its ``upstream``) and one writer entry per refusal case they write (measured),
    entries of vectors and cases that are gone dropped, the rest kept."""
    data = json.loads(EXPECTED.read_text(encoding="utf-8"))
    ids = {v["id"]: v for v in vectors if v["document"] == "rendezvous"}
    tolerated = {
        i
        for i, v in ids.items()
        if v["upstream"] == "accepts" and not all(o["valid"] for o in v["expect"].values())
    }

    refusals = refusal_ids()
    written = {i for i, said in _WRITES.items() if said == "writes" and i in refusals}

    def keep(entry: dict[str, Any]) -> bool:
        if entry["case"].startswith("refuse:") and _WRITES:
            return entry["case"] in written
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
    for case_id in sorted(written - listed):
        case = refusals[case_id]
        kept.append({"case": case_id, "role": "writer",
                     "reason": f"writes whatever it is given: {case.description} is written, not refused ({case.rule})",
                     "link": "schema/SPEC.md#WRITE_VALID"})  # fmt: skip
    data["expected_failures"] = sorted(kept, key=lambda e: (e["case"].split(":")[0], e["case"]))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
