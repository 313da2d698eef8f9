"""The digest cases: every participant digests the golden inputs, and must give upstream's digest.

The expected digests in ``schema/vectors/digest/digest.json`` were computed by the released
``modelexpress`` code (``tools/build_digest_vectors.py``), so a third party's digest and a
change to upstream's algorithm both show here. A testee that computes no digest answers
``skipped``: its digest cases are skipped and counted (SPEC.md section 4), never failed.
"""

from __future__ import annotations

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
        DigestCase(
            f"digest:{v['id']}",
            v["description"],
            v["tier"],
            {k: v[k] for k in ("data_b64", "dtype", "shape", "box") if k in v},
            v["digest"],
        )
        for v in json.loads(text)["vectors"]
    )


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
