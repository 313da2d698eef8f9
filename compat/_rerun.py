"""``--case ID``: one case alone, with everything needed to see why it failed.

It prints the case's input (payload and/or blob, as text and as base64), the raw answer of
every participant in the cell, and the verdicts of the normal run restricted to that case.
Generated cases are found again from the seed and the number of examples.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator
from typing import Any

from refitwire.compat import (
    _built_cases,
    _cases,
    _digest,
    _probes,
    _run,
    _size_budget,
    _sizes,
    _write_unknown,
)
from refitwire.compat._protocol import ProtocolError, read, write
from refitwire.compat._run import Plan, Started
from refitwire.engine import blob_limit
from refitwire.wire import Registry

TEXT_LIMIT = 4000  # characters of a blob shown as text


def known(plan: Plan, case_id: str) -> bool:
    return _inputs(plan, case_id) is not None


def describe(plan: Plan, started: list[Started], case_id: str) -> Iterator[str]:
    """The case's input and each participant's raw answer to it."""
    inputs = _inputs(plan, case_id)
    if inputs is None:
        yield f"no case {case_id} (with seed {plan.seed} and {plan.examples} examples)"
        return
    description, payload, blob = inputs
    yield f"case {case_id}: {description}"
    digest = next((d for d in _digest.digest_cases() if d.id == case_id), None)
    if digest is not None:  # every participant is asked; show each answer beside upstream's digest
        yield f"request: {_reply_text({'cmd': 'digest', **digest.request})}"
        yield f"upstream's digest: {digest.digest}"
        for s in started:
            yield f"{s.label} answers: {_reply_text(_ask(s, {'cmd': 'digest', 'seq': 0, **digest.request}))}"
        return
    if payload is not None:
        yield "payload: " + _reply_text(payload)
    if blob is not None:
        yield from _blob_lines("blob", blob)
    focus = plan.focused or frozenset(s.asked_as for s in started)
    testees = [s for s in started if s.asked_as in focus]
    version = testees[0].version if testees else None
    peers = [s for s in started if s.label == f"reference@{version}"] or [
        s for s in started if s.label.startswith("reference@")
    ][-1:]
    shown = testees + [p for p in peers if p not in testees]
    if payload is None:
        for s in shown:
            if blob is not None and "reader" in s.identity.roles:
                yield f"{s.label} reads it: {_reply_text(_ask(s, read(0, base64.b64encode(blob).decode())))}"
        return
    blobs: dict[str, bytes] = {}
    generated = list(_cases.generated_payloads(plan.seed, plan.examples, plan.registry))
    ordinal = generated.index(_run.bare(case_id)) if _run.bare(case_id) in generated else 0
    for s in shown:
        if "writer" in s.identity.roles:
            asked = _cases.conform(payload, s.version, ordinal, plan.registry)
            reply = _ask(s, write(0, _cases.project(asked, s.version, plan.registry)))
            yield f"{s.label} writes: {_reply_text(reply)}"
            written = _blob(reply)
            if written is not None:
                blobs[s.label] = written
                yield from _blob_lines(f"  {s.label}'s blob", written)
    for s in shown:  # each side reads the other side's blob
        for writer, written in blobs.items():
            if writer != s.label and "reader" in s.identity.roles:
                yield f"{s.label} reads {writer}'s blob: {_reply_text(_ask(s, read(0, base64.b64encode(written).decode())))}"


def _reply_text(reply: Any) -> str:
    text = json.dumps(
        {k: v for k, v in reply.items() if k != "blob_b64"} if isinstance(reply, dict) else reply
    )
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 3] + "..."


def _inputs(plan: Plan, case_id: str) -> tuple[str, dict[str, Any] | None, bytes | None] | None:
    return inputs(plan.seed, plan.examples, case_id, plan.registry)


def inputs(
    seed: int, examples: int, case_id: str, registry: Registry
) -> tuple[str, dict[str, Any] | None, bytes | None] | None:
    """A case's description and input (payload and/or blob), found again from its ID and the seed
    (the versions and the blob size limit of ``registry``)."""
    bare = _run.bare(case_id)
    for dc in _digest.digest_cases():
        if dc.id == bare:
            return f"{dc.description} (SPEC.md section 4)", None, None
    if bare == "protocol:unknown-command":
        return (
            f"a command no testee knows ({_probes.UNKNOWN_COMMAND!r}): the answer must be skipped",
            None,
            None,
        )
    if bare == "protocol:unknown-member":
        return (
            f"a request carrying a member no testee knows ({_probes.UNKNOWN_MEMBER!r}): served as without it",
            None,
            None,
        )
    if bare == "protocol:long-request":
        return (
            f"a read request past {_probes.LONG_REQUEST_BYTES:,} bytes on one line (a valid blob with a long "
            "unknown member): read as one request",
            None,
            None,
        )
    for rc in _cases.read_cases():
        if rc.id == bare:
            return rc.description, None, rc.blob
    for wc in _cases.write_cases():
        if wc.id == bare:
            return wc.description, wc.payload, wc.blob
    for version in registry.released_versions():
        for wc in _write_unknown.unknown_member_cases(version, registry):
            if wc.id == bare:
                return wc.description, wc.payload, wc.blob
        for refusal in _built_cases.refusal_cases(version, registry):
            if refusal.id == bare:
                return f"{refusal.description} (must be refused: {refusal.rule})", refusal.payload, None
    if bare == "size:growth":  # the small table (size:at-limit shows the one at the limit)
        return (
            "the realistic table at a sixteenth of the limit (shown here) and at the limit (size:at-limit), timed",
            None,
            _size_budget.small_table(blob_limit(registry)),
        )
    for size in (
        _sizes.size_cases(blob_limit(registry)) if bare.startswith("size:") else ()
    ):  # 64 MiB blobs: built only when asked
        if size.id == bare:
            return size.description, None, size.blob
    payload = _generated(seed, examples, registry).get(bare)
    if payload is not None:
        return "a generated payload", payload, None
    return None


@functools.lru_cache(maxsize=2)
def _generated(seed: int, examples: int, registry: Registry) -> dict[str, dict[str, Any]]:
    return _cases.generated_payloads(seed, examples, registry)


def _blob_lines(title: str, blob: bytes) -> Iterator[str]:
    if len(blob) > TEXT_LIMIT:
        yield f"{title}: {len(blob)} bytes (too long to show)"
        return
    try:
        yield f"{title} as text: {json.dumps(blob.decode('utf-8'), ensure_ascii=False)}"
    except UnicodeDecodeError:
        yield f"{title} as text: (not UTF-8)"
    yield f"{title} as base64: {base64.b64encode(blob).decode()}"


def _ask(s: Started, message: dict[str, Any]) -> Any:
    try:
        return s.testee.request(message)
    except ProtocolError as exc:
        return {"protocol_error": str(exc)}


def _blob(reply: Any) -> bytes | None:
    try:
        return base64.b64decode(reply["blob_b64"], validate=True)
    except (KeyError, TypeError, ValueError):
        return None
