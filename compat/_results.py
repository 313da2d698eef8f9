"""Typed results and replies: what a case ends as, and what a testee answered.

Outcomes form a closed set (:class:`Outcome`). A testee's answer is classified once into one
:class:`Reply` variant; the case checks then match on the variant instead of probing dicts.
"""

from __future__ import annotations

import base64
import binascii
import enum
import functools
import json
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from refitwire.compat._errors import KitCrash, ProtocolError
from refitwire.compat._protocol import explain, kinds, needs
from refitwire.compat._testee import excerpt_text
from refitwire.wire import general_pointer, pointer, protocol_validator, show_pointer

REQUIRED, RECOMMENDED = "required", "recommended"
#: The results derived from a case, named by its ID and a suffix: the reason a rejection gave
#: (``ID#rule``) and the bytes a writer wrote (``ID:bytes``). Each kind says which it derives
#: (``_kinds.Kind.derived``); the checks name their derived results with these, never as text.
REASON, BYTES = "#rule", ":bytes"
NO_RULE = "rejection gave no rule"  # the symptom of a rejection without a rule: counted, not failed
NO_POINTER = "rejection gave no pointer"  # a rule without a pointer: its #rule case fails, and is counted
NO_REFUSAL_RULE = "refusal gave no rule"  # a writer refusal naming no rule: failed (WRITE_VALID) and counted
NO_DIGEST = "computes no digest"  # a testee answering skipped to digest: counted, not failed
#: The symptom of a case the kit itself crashed on (fault "kit"): never a failure of the testee's
#: tier; counted apart, and any one makes the run errored (``_report.ok``).
KIT_CRASHED = "the kit crashed"
#: symptom -> what the summary line and the footer say of the results counted under it
COUNTED = {
    NO_RULE: ("no_rule", "rejections gave no rule: the suite could not check why they rejected"),
    NO_POINTER: ("no_pointer", "rejections gave a rule but no pointer: the suite could not check where"),
    NO_REFUSAL_RULE: (
        "refusal_no_rule",
        "writer refusals named no rule: the suite could not check why they refused",
    ),
    NO_DIGEST: ("no_digest", "digest cases were skipped: the testee computes no digest"),
    KIT_CRASHED: (
        "kit_crashed",
        "cases the kit crashed on (a bug in refitwire, not in the testee): the run is errored, tracebacks in the report",
    ),
}


#: Cases a page lists per group of one cell (the rest are counted): a run records the inputs of
#: these (``_run``), the page shows them (``_html``).
LISTED_PER_GROUP = 100


class Outcome(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERRORED = "errored"
    XFAILED = "xfailed"  # failed, and listed as an expected failure
    XPASSED = "xpassed"  # listed as an expected failure, but passed: fails the run (strict)

    @property
    def bad(self) -> bool:
        return self in (Outcome.FAILED, Outcome.ERRORED, Outcome.XPASSED)


@dataclass(frozen=True)
class Result:
    """One case in one cell. ``symptom`` groups failures with one cause; ``fault`` names the
    side that is wrong where the run can know it ("writer" or "reader")."""

    case: str
    tier: str
    outcome: Outcome
    writer: str | None = None
    reader: str | None = None
    message: str = ""
    symptom: str = ""
    fault: str | None = None
    expected_failure: str | None = None  # the reason, when the case is listed as expected to fail
    #: The case's inputs as the run recorded them (``_rebuild.Inputs.recorded``), on the first
    #: failing or expected-failing result of a case only: what the page shows. Not a verdict.
    input: Any = field(default=None, compare=False)  # a JSON object, or None (Any: built from **base dicts)

    def as_json(self) -> dict[str, Any]:
        """The report's record of this result (``schema/report/1.json``), a copy of :attr:`record`."""
        return dict(self.record)

    @functools.cached_property
    def record(self) -> dict[str, Any]:
        """The report's record of this result, made once (do not change it: :attr:`line` is its text)."""
        record: dict[str, Any] = {"type": "result", "case": self.case, "tier": self.tier}
        record["outcome"] = self.outcome.value
        for key in ("writer", "reader", "message", "symptom", "fault", "expected_failure", "input"):
            value = getattr(self, key)
            if value not in (None, ""):
                record[key] = value
        return record

    @functools.cached_property
    def line(self) -> str:
        """The report's line of this result: :attr:`record` as JSON, serialised once."""
        return json.dumps(self.record)


def blamed(r: Result) -> str:
    """The participant a result counts against: the side at fault, else the writer, else the reader."""
    side = r.writer if r.fault == "writer" else r.reader if r.fault == "reader" else None
    return side or r.writer or r.reader or ""


def listing(r: Result) -> tuple[str, str, str, str] | None:
    """The group a result is listed under in its cell, (tier, outcome, symptom, side at fault): a
    failure's by its symptom, as the text report groups them, an expected failure's by its listed
    reason; None for a result no report lists (passed, skipped)."""
    if r.outcome.bad:
        return (r.tier, r.outcome.value, r.symptom or r.message[:80], blamed(r))
    if r.outcome == Outcome.XFAILED:
        return (r.tier, r.outcome.value, r.symptom or r.expected_failure or "", blamed(r))
    return None


# -- replies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    blob: bytes


@dataclass(frozen=True)
class Decoded:
    payload: dict[str, Any]


@dataclass(frozen=True)
class Digested:
    digest: str


@dataclass(frozen=True)
class Rejected:
    message: str
    rule: str | None
    pointer: str | None


@dataclass(frozen=True)
class Skipped:
    reason: str


@dataclass(frozen=True)
class Errored:
    """The testee answered ``errored``: it could not handle the request (or, for a write, refused)."""

    message: str
    rule: str | None = None  # the optional ``rule`` member (a writer's refusal)


@dataclass(frozen=True)
class Broken:
    """No usable answer: the exchange failed (``malformed`` False) or the answer broke its schema."""

    message: str
    pointer: str | None = None
    malformed: bool = False
    symptom: str | None = None  # a headline that says more than "malformed reply at POINTER"


Reply = Written | Decoded | Digested | Rejected | Skipped | Errored | Broken


def classify(cmd: str, reply: dict[str, Any]) -> Reply:
    """The typed form of a testee's answer to ``cmd`` ("read", "count", "merge", "write" or "digest"),
    checked in full."""
    if any(flag in reply for kind in kinds("response") for flag in kind.flags):  # skipped, errored, rejected
        bad = explain(reply, "response")  # the member missing or wrong, in response.json's words
        if bad:
            return Broken(bad[1], bad[0], True)
    if reply.get("skipped") is True:
        return Skipped(_text(reply.get("reason")))
    if reply.get("errored") is True:
        rule = reply.get("rule")
        return Errored(_text(reply.get("message")), rule if isinstance(rule, str) else None)
    if cmd == "digest":
        if not isinstance(reply.get("digest"), str):
            return Broken(
                f"a digest answered without a digest string: {dumps_short(reply)} ({needs('digest')})",
                pointer("digest"),
                True,
            )
        return Digested(reply["digest"])
    if cmd in ("read", "count", "merge") and reply.get("rejected") is True:
        return Rejected(reply["message"], reply.get("rule"), reply.get("pointer"))
    if cmd == "count":
        return _counted(reply)
    if cmd == "merge":
        return _merged(reply)
    if cmd == "read":
        if "payload" not in reply:
            return Broken(
                f"a read answered with neither payload nor rejection: {dumps_short(reply)} ({needs('payload')})",
                "",
                True,
            )
        bad = _first_error("decoded", reply["payload"])
        if bad:
            where = pointer("payload") + bad[0]  # a pointer into the payload, under its member
            return Broken(
                f"the decoded form breaks the protocol at {show_pointer(where)}: {bad[1]}", where, True
            )
        return Decoded(reply["payload"])
    if reply.get("rejected") is True:
        return Broken(
            f"answered a write with rejected ({dumps_short(reply)}): a writer refuses a payload with errored",
            pointer("rejected"),
            True,
            "answered a write with rejected (a refusal is errored)",
        )
    blob_b64 = reply.get("blob_b64")
    if not isinstance(blob_b64, str):
        return Broken(
            f"a write answered without blob_b64: {dumps_short(reply)} ({needs('blob_b64')})",
            "/blob_b64",
            True,
        )
    try:
        return Written(base64.b64decode(blob_b64, validate=True))
    except (binascii.Error, ValueError) as exc:
        return Broken(f"blob_b64 is not standard base64: {exc}", "/blob_b64", True)


def _counted(reply: dict[str, Any]) -> Reply:
    """A count-only read's answer, as :class:`Decoded` ``{"envelope", "entries"}`` (the view the
    case expects), checked against its schema like a read's decoded form."""
    if "envelope" not in reply or "entries" not in reply:
        return Broken(
            f"a count answered with neither envelope and entries nor rejection: {dumps_short(reply)} "
            f"({needs('envelope', 'entries')})",
            "",
            True,
        )
    bad = _first_error("envelope", reply["envelope"])
    where = pointer("envelope") + bad[0] if bad else pointer("entries")
    entries = reply["entries"]
    if bad is None and (type(entries) is not int or entries < 0):
        bad = ("", f"{dumps_short(entries)} is not a count (an integer, at least 0)")
    if bad:
        return Broken(
            f"the count's answer breaks the protocol at {show_pointer(where)}: {bad[1]}", where, True
        )
    return Decoded({"envelope": reply["envelope"], "entries": reply["entries"]})


def _merged(reply: dict[str, Any]) -> Reply:
    """A merge's answer, as :class:`Decoded` ``{"merged": [...]}``, its tensors checked as a decoded form's."""
    if "merged" not in reply:
        return Broken(
            f"a merge answered with neither merged nor rejection: {dumps_short(reply)} ({needs('merged')})",
            "",
            True,
        )
    bad = _first_error("decoded", {"agent_name": "", "agent_meta_b64": "", "metadata_endpoint": "",
                                   "tensors": reply["merged"]})  # fmt: skip
    if bad:
        where = pointer("merged") + bad[0].removeprefix(pointer("tensors"))
        return Broken(f"the merged table breaks the protocol at {show_pointer(where)}: {bad[1]}", where, True)
    return Decoded({"merged": reply["merged"]})


#: What broke an exchange, by the words the testee driver's error starts with -> a headline.
_CAUSES = (
    ("none so far", "no reply at all (a testee must flush stdout after each line)"),
    ("no reply within", "no reply in time"),
    ("reply is not JSON", "a reply line that is not JSON (stdout carries protocol lines only)"),
    ("reply is not a JSON object", "a reply that is not a JSON object"),
    ("the testee exited", "the testee exited"),
    ("reply has seq", "a reply with another seq"),
    ("over the line limit", "a reply line over the line limit"),
    ("gave up after", "nothing: the restarts are used up"),  # last: the cause that used them up wins
)


def broken_cause(message: str) -> str:
    """The headline of a broken exchange: what the testee did, not what the case was about (a
    non-JSON line is never "too slow", an unflushed handshake never just "failed")."""
    return next((cause for words, cause in _CAUSES if words in message), "protocol broken")


def exchange(testee: Any, message: dict[str, Any], timeout_s: float | None = None) -> Reply:
    """Send ``message`` and classify the answer; a failed exchange is :class:`Broken`."""
    try:
        reply = testee.request(message) if timeout_s is None else testee.request(message, timeout_s=timeout_s)
    except ProtocolError as exc:
        return Broken(f"{exc}; stderr: {excerpt_text(testee.stderr)}")
    return classify(message["cmd"], reply)


def _first_error(kind: str, instance: Any) -> tuple[str, str] | None:
    validator = protocol_validator(kind)
    if validator.is_valid(instance):
        return None
    errors = list(validator.iter_errors(instance))
    first = min(errors, key=lambda e: [(isinstance(p, str), p) for p in e.instance_path])
    return pointer_of(first.instance_path), first.message


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -- speaking JSON ---------------------------------------------------------------------------


def pointer_of(path: Any) -> str:
    return pointer(*path)


def dumps_short(value: Any, limit: int = 120) -> str:
    """``value`` as JSON text (bytes as UTF-8 text or base64), cut to ``limit`` characters."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(bytes(value)).decode()[:limit]
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def violation_text(v: Any) -> str:
    """A reference ``Violation`` as the reports print it: the value as JSON, the root as ``""``."""
    return f"{dumps_short(v.value, 60)} at {show_pointer(v.pointer)}: {v.detail} [{v.rule}]"


def general(at: str) -> str:
    """The pointer with array indices replaced by ``*``, so one bug at many indices groups as one."""
    return general_pointer(at)


# -- the kit's own crashes: errored cases, never a verdict -----------------------------------


def crashed(
    exc: BaseException, case: str, tier: str, writer: str | None = None, reader: str | None = None
) -> Result:
    """An exception inside the kit's own code (a rule, the reference reader or writer, the case
    arithmetic) while judging a case: the case is errored and carries the traceback, never a verdict."""
    trace = str(exc) if isinstance(exc, KitCrash) else "".join(traceback.format_exception(exc))
    return Result(case, tier, Outcome.ERRORED, writer, reader, symptom=KIT_CRASHED, fault="kit",
                  message=f"the kit crashed judging this case (a bug in refitwire, not in the testee):\n{trace}")  # fmt: skip


def judged(
    check: Callable[[], Iterable[Result] | Result],
    case: str,
    tier: str,
    writer: str | None = None,
    reader: str | None = None,
) -> list[Result]:
    """The results of one check, or the errored case of :func:`crashed` when the kit raises."""
    try:
        found = check()
        return [found] if isinstance(found, Result) else list(found)
    except Exception as exc:
        return [crashed(exc, case, tier, writer, reader)]
