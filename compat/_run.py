"""Run participants against each other and yield one result per case per cell.

A cell is (writer, reader). Writers write every payload once; every reader reads every
blob. Vector cases run per participant alone (a reader on the golden blobs, a writer on
the golden payloads). Outcomes form a closed set; a crash, hang or garbage reply costs
the errored cases, never the run.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from refitwire._spec import SPEC_VERSIONS, version_key
from refitwire._validate import check, parse, writer_violations
from refitwire.compat import _cases, _expected
from refitwire.compat._candidate import UnknownVersion
from refitwire.compat._candidate import load as load_candidate
from refitwire.compat._participants import Participant
from refitwire.compat._protocol import ProtocolError, read, write
from refitwire.compat._testee import Identity, Testee

OUTCOMES = ("passed", "failed", "skipped", "errored", "xfailed", "xpassed")


@dataclass(frozen=True)
class Result:
    case: str
    tier: str
    outcome: str
    writer: str | None = None
    reader: str | None = None
    message: str = ""
    expected_failure: str | None = None  # the reason, when the case is listed as expected to fail

    def as_json(self) -> dict[str, Any]:
        return {"type": "result", **{k: v for k, v in asdict(self).items() if v not in (None, "")}}


@dataclass
class Started:
    participant: Participant
    testee: Testee
    identity: Identity

    @property
    def label(self) -> str:
        return self.participant.label

    @property
    def version(self) -> str:
        return self.identity.spec_version


@dataclass
class Plan:
    """What a run covers. ``focus``: only cells with this participant on one side (conformance)."""

    participants: Sequence[Participant]
    seed: int = 0
    examples: int = 200
    focus: str | None = None
    timeout_s: float = 10.0
    check_messages: bool = True
    unavailable: list[str] = field(default_factory=list)
    schema_dir: Path | None = None  # where unreleased candidate versions live (the gate)


def start_all(plan: Plan) -> tuple[list[Started], list[Result]]:
    started, failures = [], []
    for p in plan.participants:
        testee = Testee(list(p.command), timeout_s=plan.timeout_s, check_messages=plan.check_messages)
        try:
            identity = testee.start()
        except (ProtocolError, OSError) as exc:
            testee.stop()
            failures.append(
                Result(
                    "handshake",
                    _cases.REQUIRED,
                    "errored",
                    p.label,
                    p.label,
                    f"{exc}; stderr: {_tail(testee)}",
                )
            )
            continue
        unknown = _unknown_version(identity.spec_version, plan.schema_dir)
        if unknown:
            testee.stop()
            failures.append(Result("handshake", _cases.REQUIRED, "errored", p.label, p.label, unknown))
            continue
        started.append(Started(p, testee, identity))
    return started, failures


def _unknown_version(version: str, schema_dir: Path | None) -> str | None:
    """Why a participant's declared spec version cannot be checked, or None when it can."""
    if version in SPEC_VERSIONS:
        return None
    if schema_dir is None:
        known = ", ".join(SPEC_VERSIONS)
        return f"declares spec version {version!r}, which this kit does not know (known: {known}; a candidate needs --schema-dir)"
    try:
        load_candidate(schema_dir, version)
    except (UnknownVersion, ValueError) as exc:
        return f"declares {exc}"
    return None


def run(plan: Plan, started: list[Started]) -> Iterator[Result]:
    xfails = _expected.load()
    payloads = _cases.generated_payloads(plan.seed, plan.examples)  # case id -> payload, drawn once
    writers = [s for s in started if "writer" in s.identity.roles]
    readers = [s for s in started if "reader" in s.identity.roles]
    asked = {w.label: _payloads_for(w, payloads, plan.schema_dir) for w in writers}

    def in_focus(*labels: str) -> bool:
        return plan.focus is None or plan.focus in labels

    def settle(result: Result, who: Started, role: str) -> Result:
        listed = xfails.get((who.identity.name, role, result.case))
        if listed is None:
            return result
        if result.outcome == "failed":
            return Result(**{**asdict(result), "outcome": "xfailed", "expected_failure": listed.reason})
        if result.outcome == "passed":
            return Result(**{**asdict(result), "outcome": "xpassed", "expected_failure": listed.reason,
                             "message": f"listed as an expected failure ({listed.link}) but passed"})  # fmt: skip
        return result

    for r in readers:
        if in_focus(r.label):
            for case in _cases.read_cases():
                yield settle(_read_vector(r, case), r, "reader")
    blobs: dict[str, dict[str, bytes | Result]] = {}
    for w in writers:
        if in_focus(w.label):
            for wcase in _cases.write_cases():
                if wcase.spec_version == w.version:
                    yield settle(_write_vector(w, wcase), w, "writer")
        blobs[w.label] = {}
        if not any(in_focus(w.label, r.label) for r in readers):
            continue
        for cid, payload in asked[w.label].items():
            outcome = _write_generated(w, cid, payload, plan.schema_dir)
            blobs[w.label][cid] = outcome
            if isinstance(outcome, Result):
                yield settle(outcome, w, "writer")
    for w in writers:
        for r in readers:
            if not in_focus(w.label, r.label):
                continue
            for cid, payload in asked[w.label].items():
                blob = blobs[w.label].get(cid)
                if isinstance(blob, bytes):
                    yield settle(_cross(w, r, cid, payload, blob), r, "reader")


def _payloads_for(w: Started, payloads: dict[str, Any], schema_dir: Path | None) -> dict[str, Any]:
    """What ``w`` is asked to write: a candidate's payloads exercise the members it changed."""
    if schema_dir is None or w.version in SPEC_VERSIONS:
        return payloads
    candidate = load_candidate(schema_dir, w.version)
    return {cid: candidate.exercise(payload) for cid, payload in payloads.items()}


# -- one case each ------------------------------------------------------------------------


def _read_vector(r: Started, case: _cases.ReadCase) -> Result:
    # A candidate version must treat every released vector as its base version does.
    known = [v for v in case.expect if version_key(v) <= version_key(r.version)]
    expect = case.expect[max(known, key=version_key)] if known else None
    base = {"case": case.id, "tier": case.tier, "reader": r.label}
    if expect is None:
        return Result(**base, outcome="skipped", message=f"no expectation for spec {r.version}")
    reply = _ask(r, read(0, base64.b64encode(case.blob).decode()))
    if isinstance(reply, Result):
        return Result(**{**asdict(reply), **base})
    if expect["valid"]:
        if reply.get("rejected"):
            return Result(
                **base,
                outcome="failed",
                message=f"rejected a valid blob ({case.description}): {reply['message']}",
            )
        diff = _cases.first_difference(expect["decoded"], reply["payload"])
        return Result(
            **base,
            outcome="failed" if diff else "passed",
            message=f"{case.description}: {diff}" if diff else "",
        )
    if not reply.get("rejected"):
        return Result(
            **base,
            outcome="failed",
            message=f"accepted a blob that breaks {expect['rule']} at {expect['pointer'] or '/'} ({case.description})",
        )
    named = reply.get("rule")
    note = f"named {named}, the spec says {expect['rule']}" if named and named != expect["rule"] else ""
    return Result(**base, outcome="passed", message=note)


def _write_vector(w: Started, case: _cases.WriteCase) -> Result:
    base = {"case": case.id, "tier": _cases.RECOMMENDED, "writer": w.label}
    reply = _ask(w, write(0, case.payload))
    if isinstance(reply, Result):
        return Result(**{**asdict(reply), **base})
    blob = _blob_from(reply)
    if isinstance(blob, str):
        return Result(**base, outcome="failed", message=blob)
    if blob != case.blob:
        return Result(
            **base,
            outcome="failed",
            message=f"{case.description}: bytes differ from the upstream format at offset {_first_byte_diff(blob, case.blob)}",
        )
    return Result(**base, outcome="passed")


def _write_generated(
    w: Started, cid: str, payload: dict[str, Any], schema_dir: Path | None
) -> bytes | Result:
    base = {"case": cid, "tier": _cases.REQUIRED, "writer": w.label}
    reply = _ask(w, write(0, _cases.project(payload, w.version)))
    if isinstance(reply, Result):
        return Result(**{**asdict(reply), **base})
    blob = _blob_from(reply)
    if isinstance(blob, str):
        return Result(**base, outcome="failed", message=blob)
    candidate = (
        load_candidate(schema_dir, w.version) if schema_dir and w.version not in SPEC_VERSIONS else None
    )
    try:  # WRITE_VALID: the blob conforms to the writer's own version
        document = parse(blob)
        if candidate:
            candidate.check(document)
        else:
            check(document, "rendezvous", w.version)
    except ValueError as exc:
        return Result(
            **base, outcome="failed", message=f"wrote a blob that is invalid under {w.version}: {exc}"
        )
    broken = candidate.writer_violations(document) if candidate else writer_violations(document, w.version)
    if broken:
        return Result(**base, outcome="failed", message=f"wrote {broken[0]}")
    return blob


def _cross(w: Started, r: Started, cid: str, payload: dict[str, Any], blob: bytes) -> Result:
    base = {"case": cid, "tier": _cases.REQUIRED, "writer": w.label, "reader": r.label}
    reply = _ask(r, read(0, base64.b64encode(blob).decode()))
    if isinstance(reply, Result):
        return Result(**{**asdict(reply), **base})
    if reply.get("rejected"):
        return Result(**base, outcome="failed", message=f"rejected {w.label}'s blob: {reply['message']}")
    expected = _cases.expected_read(payload, w.version, r.version)
    diff = _cases.first_difference(expected, reply["payload"])
    return Result(**base, outcome="failed" if diff else "passed", message=diff or "")


# -- plumbing -----------------------------------------------------------------------------


def _ask(who: Started, message: dict[str, Any]) -> dict[str, Any] | Result:
    """The reply, or a Result for a skipped, errored or broken exchange."""
    try:
        reply = who.testee.request(message)
    except ProtocolError as exc:
        return Result("", "", "errored", message=f"{exc}; stderr: {_tail(who.testee)}")
    if reply.get("skipped"):
        return Result("", "", "skipped", message=str(reply.get("reason", "")))
    if reply.get("errored"):
        return Result("", "", "errored", message=str(reply.get("message", "")))
    if message["cmd"] == "read" and "payload" not in reply and not reply.get("rejected"):
        return Result(
            "", "", "errored", message=f"a read answered with neither payload nor rejection: {reply!r:.200}"
        )
    return reply


def _blob_from(reply: dict[str, Any]) -> bytes | str:
    try:
        return base64.b64decode(reply["blob_b64"], validate=True)
    except (KeyError, TypeError, binascii.Error) as exc:
        return f"a write answered without a valid blob_b64: {exc!r}"


def _first_byte_diff(a: bytes, b: bytes) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"{at}: wrote {a[max(0, at - 20) : at + 20]!r}, expected {b[max(0, at - 20) : at + 20]!r}"


def _tail(testee: Testee) -> str:
    return " | ".join(list(testee.stderr)[-5:]) or "(empty)"


def stop_all(started: list[Started]) -> None:
    for s in started:
        s.testee.stop()
