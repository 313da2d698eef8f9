"""The per-shard digest, asked of the upstream participants: their ``tensor_digest`` must equal ours.

A shard's ``digest`` is on the wire: a reader recomputes it over the bytes it pulled and
refuses a mismatch, so a writer and a reader of two versions whose digests differ refuse
every digested shard. Each case sends a few deterministic tensors (whole 4 KiB rows, a tail
that is not a word multiple, bf16, empty) and compares the answer with the reference's
:func:`refitwire.tensor_digest` of the same bytes: Required, the participant at fault.

The question travels as the upstream adapter's ``digest`` command (``adapter_testee.py``),
which protocol 1 does not list, so the request is not checked against ``schema/protocol/``.
Participants that do not answer it are not asked: only the ``upstream`` and
``upstream-source`` kinds.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from refitwire import tensor_digest
from refitwire.compat._protocol import ProtocolError
from refitwire.compat._results import REQUIRED, Outcome, Result

#: The participant kinds whose testee answers the ``digest`` command.
ASKED_KINDS = ("upstream", "upstream-source")


@dataclass(frozen=True)
class DigestCase:
    id: str
    dtype: str
    shape: tuple[int, ...]
    data: bytes


def digest_cases() -> list[DigestCase]:
    rng = np.random.default_rng(20261201)

    def case(name: str, dtype: str, shape: tuple[int, ...], itemsize: int) -> DigestCase:
        count = int(np.prod(shape)) if shape else 0
        return DigestCase(f"digest:{name}", dtype, shape, rng.bytes(count * itemsize))

    return [
        case("int32-rows", "int32", (4, 1024), 4),
        case("int32-odd", "int32", (3, 1409), 4),
        case("int16-tail", "int16", (1031,), 2),
        case("bf16-small", "bfloat16", (17,), 2),
        case("uint8-row-and-3", "uint8", (4099,), 1),
        case("empty", "int32", (0,), 4),
    ]


def check_digests(who: Any) -> Iterator[Result]:
    """One Required result per case for participant ``who`` (a started testee)."""
    for case in digest_cases():
        base = {"case": case.id, "tier": REQUIRED, "writer": who.label}
        request = {
            "cmd": "digest",
            "data_b64": base64.b64encode(case.data).decode("ascii"),
            "dtype": case.dtype,
            "shape": list(case.shape),
        }
        try:
            reply = who.testee.request(request, check=False)
        except ProtocolError as exc:
            yield Result(**base, outcome=Outcome.ERRORED, message=str(exc), symptom="protocol broken")
            continue
        if reply.get("skipped"):
            yield Result(**base, outcome=Outcome.SKIPPED, message=str(reply.get("reason", "")))
            continue
        got, want = reply.get("digest"), tensor_digest(case.data)
        if reply.get("errored") or not isinstance(got, str):
            message = str(reply.get("message") or f"no digest in {reply!r}"[:200])
            yield Result(**base, outcome=Outcome.ERRORED, message=message, symptom="errored", fault="writer")
        elif got != want:
            message = f"{case.dtype}{list(case.shape)}: expected digest {want}, got {got}"
            yield Result(
                **base, outcome=Outcome.FAILED, fault="writer", symptom="digest differs", message=message
            )
        else:
            yield Result(**base, outcome=Outcome.PASSED)
