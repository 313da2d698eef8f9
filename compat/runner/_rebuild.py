"""Each case kind's inputs found again from its ID, and its ``--case`` display.

The table of kinds (``_kinds.KINDS``) binds one ``inputs_*`` and one ``show_*`` here to each
kind. A run records the inputs of every case it reports as failing (the report's ``input``
member, :meth:`Inputs.recorded`); ``--case`` rebuilds them from the ID and the seed, and shows
every participant's raw answer to them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from refitwire.compat._errors import ProtocolError
from refitwire.compat._protocol import count, read, write
from refitwire.compat.cases import _built_cases, _cases, _digest, _merge, _sizes, _write_unknown
from refitwire.compat.runner import _probes, _size_budget
from refitwire.compat.runner._plan import Plan, Started
from refitwire.wire import Registry, blob_limit

TEXT_LIMIT = 4000  # characters of a blob or payload shown (and recorded) as text


@dataclass(frozen=True)
class Inputs:
    """What a case hands the participants: a description, and a payload and/or a blob."""

    description: str
    payload: Any = None
    blob: bytes | None = None

    def recorded(self) -> dict[str, Any]:
        """The form a report records (the ``input`` member of a result): the payload as JSON text
        and the blob as text and base64, each cut to ``TEXT_LIMIT``; a longer blob by its size."""
        entry: dict[str, Any] = {"description": self.description}
        if self.payload is not None:
            entry["payload"] = _cut(json.dumps(self.payload, ensure_ascii=False))
        if self.blob is not None:
            entry["blob_bytes"] = len(self.blob)
            if len(self.blob) <= TEXT_LIMIT:
                try:
                    entry["blob_text"] = self.blob.decode("utf-8")
                except UnicodeDecodeError:
                    entry["blob_text"] = None
                entry["blob_b64"] = base64.b64encode(self.blob).decode()
        return entry


@dataclass(frozen=True)
class Source:
    """Where inputs are found again: the run's registry and its generated payloads (drawn on
    first need: a run hands its own, ``--case`` draws them from the seed)."""

    registry: Registry
    drawn: Callable[[], dict[str, dict[str, Any]]]


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 3] + "..."


# -- inputs, per kind -----------------------------------------------------------------------------


def inputs_read(case: str, source: Source) -> Inputs | None:
    return next((Inputs(c.description, None, c.blob) for c in _cases.read_cases() if c.id == case), None)


def inputs_count(case: str, source: Source) -> Inputs | None:
    found = (c for c in _cases.count_cases(source.registry) if c.id == case)
    return next((Inputs(f"{c.description} (a count-only read)", None, c.blob) for c in found), None)


def inputs_merge(case: str, source: Source) -> Inputs | None:
    found = (m for m in _merge.merge_cases() if m.id == case)
    return next((Inputs(f"{m.description} ({m.rule})", {"tables": m.tables}) for m in found), None)


def inputs_size(case: str, source: Source) -> Inputs | None:
    limit = blob_limit(source.registry)
    if case == _size_budget.GROWTH_CASE:  # the small table (size:at-limit shows the one at the limit)
        return Inputs(
            f"the realistic table at a sixteenth of the limit (shown here) and at the limit "
            f"({_size_budget.AT_LIMIT}), timed",
            None,
            _size_budget.small_table(limit),
        )
    return next((Inputs(c.description, None, c.blob) for c in _sizes.size_cases(limit) if c.id == case), None)


#: The protocol probes (``_probes``), by case ID.
PROBES = {
    "protocol:unknown-command": f"a command no testee knows ({_probes.UNKNOWN_COMMAND!r}): the answer must be skipped",
    "protocol:unknown-member": f"a request carrying a member no testee knows ({_probes.UNKNOWN_MEMBER!r}): served as "
    "without it",
    "protocol:long-request": f"a read request past {_probes.LONG_REQUEST_BYTES:,} bytes on one line (a valid blob "
    "with a long unknown member): read as one request",
}


def inputs_protocol(case: str, source: Source) -> Inputs | None:
    return Inputs(PROBES[case]) if case in PROBES else None


def inputs_digest(case: str, source: Source) -> Inputs | None:
    found = (d for d in _digest.digest_cases() if d.id == case)
    return next((Inputs(f"{d.description} (SPEC.md section 4)") for d in found), None)


def inputs_write(case: str, source: Source) -> Inputs | None:
    for wc in _cases.write_cases():
        if wc.id == case:
            return Inputs(wc.description, wc.payload, wc.blob)
    for version in source.registry.known_versions():
        for wc in _write_unknown.unknown_member_cases(version, source.registry):
            if wc.id == case:
                return Inputs(wc.description, wc.payload, wc.blob)
    return None


def inputs_refuse(case: str, source: Source) -> Inputs | None:
    for version in source.registry.known_versions():
        for refusal in _built_cases.refusal_cases(version, source.registry):
            if refusal.id == case:
                return Inputs(f"{refusal.description} (must be refused: {refusal.rule})", refusal.payload)
    return None


def inputs_generated(case: str, source: Source) -> Inputs | None:
    payload = source.drawn().get(case)
    return Inputs("a generated payload", payload) if payload is not None else None


def inputs_none(case: str, source: Source) -> Inputs | None:
    return None


# -- --case: every participant's answer to the inputs, per kind -------------------------------------


def _testees_and_peers(plan: Plan, started: list[Started]) -> list[Started]:
    """The participants under test, then the reference of their version (``--case`` shows the
    reference's answer beside the testee's)."""
    focus = plan.focused or frozenset(s.asked_as for s in started)
    testees = [s for s in started if s.asked_as in focus]
    version = testees[0].version if testees else None
    peers = [s for s in started if s.label == f"reference@{version}"] or [
        s for s in started if s.label.startswith("reference@")
    ][-1:]
    return testees + [p for p in peers if p not in testees]


def show_digest(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    """Every participant is asked; each answer beside upstream's digest."""
    digest = next(d for d in _digest.digest_cases() if d.id == case)
    yield f"request: {reply_text({'cmd': 'digest', **digest.request})}"
    yield f"upstream's digest: {digest.digest}"
    for s in started:
        yield f"{s.label} answers: {reply_text(_ask(s, {'cmd': 'digest', 'seq': 0, **digest.request}))}"


def show_read(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    yield from _read_lines(plan, started, given, read)


def show_count(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    yield from _read_lines(plan, started, given, count)


def _read_lines(plan: Plan, started: list[Started], given: Inputs, ask: Callable[..., Any]) -> Iterator[str]:
    if given.blob is None:
        return
    yield from blob_lines("blob", given.blob)
    for s in _testees_and_peers(plan, started):
        if "reader" in s.identity.roles:
            yield f"{s.label} reads it: {reply_text(_ask(s, ask(0, base64.b64encode(given.blob).decode())))}"


def show_merge(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    yield "tables: " + reply_text(given.payload["tables"])
    for s in _testees_and_peers(plan, started):
        if "reader" in s.identity.roles:
            yield f"{s.label} merges them: {reply_text(_ask(s, {'cmd': 'merge', 'seq': 0, **given.payload}))}"


def show_write(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    yield from _write_lines(plan, started, given, 0)


def show_generated(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    """As :func:`show_write`, each writer asked the payload as the run asked it (by its ordinal)."""
    generated = list(_cases.generated_payloads(plan.seed, plan.examples, plan.registry))
    yield from _write_lines(plan, started, given, generated.index(case) if case in generated else 0)


def _write_lines(plan: Plan, started: list[Started], given: Inputs, ordinal: int) -> Iterator[str]:
    """Each writer writes the payload (as its version is asked it), each side reads the other's blob."""
    yield "payload: " + reply_text(given.payload)
    if given.blob is not None:
        yield from blob_lines("blob", given.blob)
    shown = _testees_and_peers(plan, started)
    blobs: dict[str, bytes] = {}
    for s in shown:
        if "writer" in s.identity.roles:
            asked = _cases.conform(given.payload, s.version, ordinal, plan.registry)
            reply = _ask(s, write(0, _cases.project(asked, s.version, plan.registry)))
            yield f"{s.label} writes: {reply_text(reply)}"
            written = _blob(reply)
            if written is not None:
                blobs[s.label] = written
                yield from blob_lines(f"  {s.label}'s blob", written)
    for s in shown:  # each side reads the other side's blob
        for writer, written in blobs.items():
            if writer != s.label and "reader" in s.identity.roles:
                yield f"{s.label} reads {writer}'s blob: {reply_text(_ask(s, read(0, base64.b64encode(written).decode())))}"


def show_nothing(plan: Plan, started: list[Started], case: str, given: Inputs) -> Iterator[str]:
    return iter(())


# -- speaking to a participant, and showing what it said --------------------------------------------


def reply_text(reply: Any) -> str:
    text = json.dumps(
        {k: v for k, v in reply.items() if k != "blob_b64"} if isinstance(reply, dict) else reply
    )
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 3] + "..."


def blob_lines(title: str, blob: bytes) -> Iterator[str]:
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
