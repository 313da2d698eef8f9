"""The digest cases: every participant digests the golden inputs, and must give upstream's digest.

The expected digests in ``schema/vectors/digest/digest.json`` were computed by the released
``modelexpress`` code (``tools/build_digest_vectors.py``), so a third party's digest and a
change to upstream's algorithm both show here. A testee that computes no digest answers
``skipped``: its digest cases are skipped and counted (SPEC.md section 4), never failed.
"""

from __future__ import annotations

import base64
import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from refitwire.compat._results import (
    NO_DIGEST,
    Broken,
    Digested,
    Errored,
    Outcome,
    Result,
    Skipped,
    dumps_short,
    exchange,
)


@dataclass(frozen=True)
class DigestCase:
    id: str
    description: str
    tier: str
    request: dict[str, Any]  # the digest request's members besides cmd and seq
    digest: str


@functools.cache
def digest_cases() -> tuple[DigestCase, ...]:
    text = (
        resources.files("refitwire.schema").joinpath("vectors/digest/digest.json").read_text(encoding="utf-8")
    )
    return tuple(
        DigestCase(f"digest:{v['id']}", v["description"], v["tier"], digest_request(v), v["digest"])
        for v in json.loads(text)["vectors"]
    )


def tensor_bytes(vector: dict[str, Any]) -> bytes:
    """A digest vector's whole tensor: ``data_b64``'s bytes, ``repeat`` times over (once without it)."""
    repeat: int = vector.get("repeat", 1)
    return base64.b64decode(vector["data_b64"]) * repeat


def digest_request(vector: dict[str, Any]) -> dict[str, Any]:
    """The members of the protocol's digest request for ``vector`` besides ``cmd`` and ``seq``."""
    request: dict[str, Any] = {k: vector[k] for k in ("dtype", "shape", "box") if k in vector}
    data = vector["data_b64"] if "repeat" not in vector else base64.b64encode(tensor_bytes(vector)).decode()
    return {"data_b64": data, **request}


def check_digest(who: Any, case: DigestCase) -> Result:
    """Ask ``who`` for the digest of ``case``; it must equal the released upstream's."""
    base = {"case": case.id, "tier": case.tier, "reader": who.label}
    reply = exchange(who.testee, {"cmd": "digest", "seq": 0, **case.request})
    if isinstance(reply, Digested):
        if reply.digest == case.digest:
            return Result(**base, outcome=Outcome.PASSED)
        kind = "a box" if "box" in case.request else "a whole tensor"
        return Result(
            **base,
            outcome=Outcome.FAILED,
            fault="reader",
            symptom=f"digest differs from upstream's (for {kind})",
            message=f"{case.description}: digest {dumps_short(reply.digest)}, upstream's is {json.dumps(case.digest)}",
        )
    if isinstance(reply, Skipped):
        return Result(**base, outcome=Outcome.SKIPPED, symptom=NO_DIGEST, message=reply.reason)
    if isinstance(reply, Errored):
        return Result(
            **base,
            outcome=Outcome.ERRORED,
            fault="reader",
            symptom="errored on a digest",
            message=f"{case.description}: {reply.message}",
        )
    assert isinstance(reply, Broken)
    outcome = Outcome.FAILED if reply.malformed else Outcome.ERRORED
    symptom = "malformed digest answer" if reply.malformed else "protocol broken"
    return Result(**base, outcome=outcome, fault="reader", symptom=symptom, message=reply.message)
