"""The protocol's promises, probed once per testee per run.

The protocol grows by adding commands and request members (``schema/protocol/request.json``),
so a testee MUST answer a command it does not know with ``skipped`` and MUST ignore request
members it does not know (compat/IMPLEMENTERS.md). Both are Required: a testee that exits on
a new command or refuses a new member breaks the day the kit adds one.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

from refitwire.compat._errors import ProtocolError
from refitwire.compat._protocol import check_message
from refitwire.compat._results import (
    REQUIRED,
    Broken,
    Decoded,
    Outcome,
    Result,
    Skipped,
    Written,
    broken_cause,
    dumps_short,
    exchange,
)
from refitwire.compat._testee import excerpt_text
from refitwire.compat.cases import _cases

UNKNOWN_COMMAND = "refitwire-probe-unknown-command"
UNKNOWN_MEMBER = "refitwire_probe_unknown_member"


def probe(who: Any) -> Iterator[Result]:
    yield unknown_command(who)
    for found in (unknown_member(who), long_request(who)):
        if found is not None:
            yield found


def unknown_command(who: Any) -> Result:
    base = {"case": "protocol:unknown-command", "tier": REQUIRED, "reader": who.label}
    try:
        reply = who.testee.request({"cmd": UNKNOWN_COMMAND, UNKNOWN_MEMBER: [1]}, probe=True)
    except ProtocolError as exc:
        tail = excerpt_text(who.testee.stderr)
        return Result(  # errored, as any broken exchange: a testee that never answers errs everywhere
            **base,
            outcome=Outcome.ERRORED,
            fault="reader",
            # with the stderr tail, as every exchange: once the restarts are used up, the cause
            # that used them up is the tail's last restart line
            symptom=_unanswered(broken_cause(f"{exc}; stderr: {tail}")),
            message=f"sent {UNKNOWN_COMMAND!r}: {exc}; stderr: {tail}",
        )
    try:
        check_message(reply, "response")
    except ProtocolError as exc:
        bad = str(exc)
    else:
        bad = "" if reply.get("skipped") is True else "not skipped"
    if bad:
        return Result(
            **base,
            outcome=Outcome.FAILED,
            fault="reader",
            symptom="answered an unknown command with something other than skipped",
            message=f"sent {UNKNOWN_COMMAND!r}, answered {dumps_short(reply)} ({bad}); the protocol says: skipped",
        )
    return Result(**base, outcome=Outcome.PASSED)


def _unanswered(cause: str) -> str:
    """The headline of an unknown command that got no usable answer: no answer, or what came."""
    if cause.startswith("no reply"):
        return f"no answer to an unknown command: {cause} (the protocol says: answer skipped)"
    return f"answered an unknown command with {cause} (the protocol says: skipped)"


def unknown_member(who: Any) -> Result | None:
    """A request the testee can serve, with one member it cannot know: served as without it."""
    base = {"case": "protocol:unknown-member", "tier": REQUIRED, "reader": who.label}
    extra = {UNKNOWN_MEMBER: {"added": "in a later protocol", "n": 1}}
    if "reader" in who.identity.roles:
        case = next(c for c in _cases.read_cases() if (c.expect.get("1.0.0") or {}).get("valid"))
        request = {"cmd": "read", "seq": 0, "blob_b64": base64.b64encode(case.blob).decode(), **extra}
        reply = exchange(who.testee, request)
        good = isinstance(reply, Decoded)
    elif "writer" in who.identity.roles:
        case_w = next(c for c in _cases.write_cases() if c.spec_version == who.version)
        request = {"cmd": "write", "seq": 0, "payload": case_w.payload, **extra}
        reply = exchange(who.testee, request)
        good = isinstance(reply, Written)
    else:
        return None
    if good:
        return Result(**base, outcome=Outcome.PASSED)
    if isinstance(reply, Skipped) and _skips_without(who, request, UNKNOWN_MEMBER):
        return _skipped(base, reply)
    said = reply.message if hasattr(reply, "message") else dumps_short(reply)
    kind = "no answer" if isinstance(reply, Broken) and not reply.malformed else type(reply).__name__.lower()
    broken = isinstance(reply, Broken) and not reply.malformed
    return Result(
        **base,
        outcome=Outcome.ERRORED if broken else Outcome.FAILED,
        fault="reader",
        symptom=f"refused a request carrying an unknown member ({kind}; the protocol says: ignore it)",
        message=f"a request with the extra member {UNKNOWN_MEMBER!r} was not served: {said}",
    )


#: Bytes of the string a long request carries: far past a pipe's buffer (64 KiB on Linux), so a
#: testee receives the line in many pieces and must join them; under a megabyte of blob, so it is
#: no size case.
LONG_REQUEST_BYTES = 768 << 10


def long_request(who: Any) -> Result | None:
    """A read request far longer than a pipe buffer, on one line: read as one request."""
    base = {"case": "protocol:long-request", "tier": REQUIRED, "reader": who.label}
    case = next((c for c in _cases.read_cases() if (c.expect.get(who.version) or {}).get("valid")), None)
    if "reader" not in who.identity.roles or case is None:
        return None
    blob = case.blob[:-1] + b', "refitwire_probe_padding": "' + b"p" * LONG_REQUEST_BYTES + b'"}'
    reply = exchange(who.testee, {"cmd": "read", "seq": 0, "blob_b64": base64.b64encode(blob).decode()})
    expected = (case.expect[who.version] or {}).get("decoded")
    if isinstance(reply, Decoded) and reply.payload == expected:
        return Result(**base, outcome=Outcome.PASSED)
    plain = {"cmd": "read", "seq": 0, "blob_b64": base64.b64encode(case.blob).decode()}
    if isinstance(reply, Skipped) and isinstance(exchange(who.testee, plain), Skipped):
        return _skipped(base, reply)
    said = reply.message if hasattr(reply, "message") else dumps_short(getattr(reply, "payload", reply))
    broken = isinstance(reply, Broken) and not reply.malformed
    return Result(
        **base,
        outcome=Outcome.ERRORED if broken else Outcome.FAILED,
        fault="reader",
        symptom="did not read a request line longer than a pipe buffer as one request",
        message=f"a valid blob of {len(blob):,} bytes (an unknown member holding a long string), "
        f"{case.id} otherwise, was not read as that case: {said}",
    )


def _skips_without(who: Any, request: dict[str, Any], member: str) -> bool:
    """Whether the testee answers ``request`` without ``member`` with skipped too (a reader or
    writer that skips every such request: the probe cannot tell, so it is skipped)."""
    return isinstance(exchange(who.testee, {k: v for k, v in request.items() if k != member}), Skipped)


def _skipped(base: dict[str, Any], reply: Skipped) -> Result:
    return Result(**base, outcome=Outcome.SKIPPED,
                  message=f"the testee skips this request with or without the probe ({reply.reason})")  # fmt: skip
