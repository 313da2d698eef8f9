"""One case each: send one request, classify the reply, decide the outcome.

Every function returns :class:`Result` records and never raises on anything a testee says.
Where a cell can tell which side is wrong it says so (``fault``): the reference reads every
blob a writer emits, so a bad blob is the writer's fault and a bad reading of a good blob
the reader's.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterator
from typing import Any

from refitwire import InvalidBlob, from_decoded, to_decoded, unwrap_rendezvous_blob, wrap_rendezvous_blob
from refitwire.compat._protocol import count, read, write
from refitwire.compat._results import (
    BYTES,
    NO_POINTER,
    NO_REFUSAL_RULE,
    NO_RULE,
    REASON,
    RECOMMENDED,
    REQUIRED,
    Broken,
    Decoded,
    Errored,
    Outcome,
    Rejected,
    Reply,
    Result,
    Skipped,
    Written,
    broken_cause,
    dumps_short,
    exchange,
    general,
    violation_text,
)
from refitwire.compat.cases import RefusalCase, _cases, _forms, first_repeated_name
from refitwire.compat.runner._causes import byte_cause, named_rules
from refitwire.wire import Registry, check, parse, show_pointer, version_key, writer_violations


def failed(base: dict[str, Any], fault: str, symptom: str, message: str) -> Result:
    """A failed case; ``symptom`` groups it with failures of the same cause."""
    return Result(**base, outcome=Outcome.FAILED, fault=fault, symptom=symptom, message=message)


def rejected_valid(reply: Rejected) -> str:
    """The headline of a valid blob rejected: the rule it named, never ``None``."""
    return (
        f"rejected a valid blob, naming {reply.rule}"
        if reply.rule
        else "rejected a valid blob (no rule given)"
    )


def _unwritten(reply: Reply, base: dict[str, Any], registry: Registry) -> Result:
    """The result of a write of a valid payload that produced no blob."""
    if isinstance(reply, Errored):
        named = reply.rule or next(
            (r for r in named_rules(reply.message, registry) if r != "WRITE_VALID"), None
        )
        return failed(
            base,
            "writer",
            f"refused a valid payload, naming {named}" if named else "refused a valid payload",
            f"refused to write a valid payload: {reply.message}",
        )
    return unusable(reply, base, "writer") or Result(**base, outcome=Outcome.ERRORED)


def unusable(reply: Reply, base: dict[str, Any], fault: str) -> Result | None:
    """The result for a reply that answers nothing (skipped, errored, broken), else None."""
    if isinstance(reply, Skipped):
        return Result(**base, outcome=Outcome.SKIPPED, message=reply.reason)
    if isinstance(reply, Errored):
        return Result(**base, outcome=Outcome.ERRORED, message=reply.message, symptom="errored", fault=fault)
    if isinstance(reply, Broken):
        outcome = Outcome.FAILED if reply.malformed else Outcome.ERRORED
        symptom = reply.symptom or (
            f"malformed reply at {show_pointer(general(reply.pointer or ''))}"
            if reply.malformed
            else broken_cause(reply.message)
        )
        return Result(**base, outcome=outcome, message=reply.message, symptom=symptom, fault=fault)
    return None


def ask_read(who: Any, blob: bytes, timeout_s: float | None = None, cmd: str = "read") -> Reply:
    """``who``'s read of ``blob`` (``cmd`` "count": its count-only read)."""
    request = (count if cmd == "count" else read)(0, base64.b64encode(blob).decode())
    return exchange(who.testee, request, timeout_s)


# -- reading the golden vectors ------------------------------------------------------------


def read_vector(r: Any, case: _cases.ReadCase, registry: Registry) -> Iterator[Result]:
    """The verdict (at the vector's tier) and, for a rejection, whether it named the right rule
    and pointer (case ``ID#rule``, Recommended: a wrong reason is visible, never fatal)."""
    # A candidate version must treat every released vector as its base version does.
    known = [v for v in case.expect if version_key(v) <= version_key(r.version)]
    base_version = max(known, key=version_key) if known else None
    expect = case.expect[base_version] if base_version else None
    base = {
        "case": case.id,
        "tier": case.tier_for(base_version) if base_version else case.tier,
        "reader": r.label,
    }
    if expect is None:
        if base_version is None:
            yield Result(**base, outcome=Outcome.SKIPPED, message=f"no expectation for spec {r.version}")
        return  # (with a base version: the case asks nothing of this reader)
    reply = ask_read(r, case.blob, cmd=case.cmd)
    accepted = isinstance(reply, Decoded) or (  # a malformed answer of a read that accepted
        isinstance(reply, Broken) and (reply.pointer or "").startswith(("/payload", "/envelope", "/entries"))
    )
    if not expect["valid"] and accepted:
        where = show_pointer(expect["pointer"])
        yield failed(
            base,
            "reader",
            f"accepted: breaks {expect['rule']}",
            f"accepted a blob that breaks {expect['rule']} at {where} ({case.description})",
        )
        return
    broken = unusable(reply, base, "reader")
    if broken:
        yield broken
        return
    repeated = case.repeated_name  # SPEC 2.1: a reader MAY reject it, at that pointer
    if expect["valid"]:
        allowed = expect.get("or_reject") or (
            {"rule": "DUPLICATE_KEYS", "pointer": repeated} if repeated is not None else None
        )
        if isinstance(reply, Rejected) and allowed and reply.rule in (None, allowed["rule"]):
            # The spec lets a reader reject this blob (a MAY): either outcome passes; the reason
            # is checked like any rejection's.
            yield Result(**base, outcome=Outcome.PASSED)
            yield reason(case.id, r.label, reply, allowed["rule"], allowed["pointer"])
            return
        if isinstance(reply, Rejected):
            may = (
                f"; a reader MAY reject it only naming {allowed['rule']} at {show_pointer(allowed['pointer'])}"
                if allowed
                else ""
            )
            yield failed(
                base,
                "reader",
                rejected_valid(reply),
                f"rejected a valid blob ({case.description}): {reply.message}{may}",
            )
            return
        assert isinstance(reply, Decoded)
        wanted = expect["decoded"]
        if r.version not in case.expect:  # a later version: it also reports its own members, absent (null)
            wanted = _cases.project(wanted, r.version, registry)
        if case.cmd == "count":
            wanted = _forms.count_view(wanted, _cases.model_of(r.version, registry))
        yield decoded_result(base, wanted, reply.payload, case.description)
        return
    assert isinstance(reply, Rejected)
    yield Result(**base, outcome=Outcome.PASSED)
    if repeated is not None and reply.rule == "DUPLICATE_KEYS":  # the MAY, found before every other rule
        yield reason(case.id, r.label, reply, "DUPLICATE_KEYS", repeated)
        return
    yield reason(case.id, r.label, reply, expect["rule"], expect["pointer"])


def reason(case: str, reader: str, reply: Rejected, rule: str, pointer: str) -> Result:
    base = {"case": f"{case}{REASON}", "tier": RECOMMENDED, "reader": reader}
    if not reply.rule:
        return Result(
            **base, outcome=Outcome.SKIPPED, message=f"{NO_RULE} (the spec says {rule})", symptom=NO_RULE
        )
    spec_says = f"the spec says {rule} at {show_pointer(pointer)}"
    if reply.rule != rule:
        named = f"{reply.rule} at {show_pointer(reply.pointer)}" if reply.pointer is not None else reply.rule
        return failed(
            base,
            "reader",
            f"wrong rule: named {reply.rule}, the spec says {rule}",
            f"rejected for the wrong reason: named {named}, {spec_says}",
        )
    if reply.pointer is None:
        # The rule alone does not say which value broke it: as unchecked as no rule, and counted.
        return failed(base, "reader", NO_POINTER, f"named {rule} but no pointer; {spec_says}")
    if reply.pointer != pointer:
        return failed(
            base,
            "reader",
            f"wrong pointer for {rule}: named {show_pointer(general(reply.pointer))}, "
            f"the spec says {show_pointer(general(pointer))}"
            # (the same place but for an index: which item, dimension or object is the one due)
            + (" (another index)" if general(reply.pointer) == general(pointer) else ""),
            f"rejected at the wrong place: named {rule} at {show_pointer(reply.pointer)}, {spec_says}",
        )
    return Result(**base, outcome=Outcome.PASSED)


def decoded_result(base: dict[str, Any], expected: Any, got: Any, context: str = "") -> Result:
    diff = _cases.first_difference(expected, got)
    if diff is None:
        return Result(**base, outcome=Outcome.PASSED)
    symptom, account = diff
    return failed(base, "reader", symptom, f"{context}: {account}" if context else account)


# -- writing ----------------------------------------------------------------------------------


def write_vector(w: Any, case: _cases.WriteCase, registry: Registry) -> Iterator[Result]:
    """A golden payload: the blob must keep every writer rule and carry the payload (at the
    vector's tier: a writer bug never rests on a byte comparison), then match the golden bytes
    (``ID:bytes``, Recommended: WRITE_FORMAT is a SHOULD)."""
    base = {"case": case.id, "tier": case.tier, "writer": w.label}
    reply = exchange(w.testee, write(0, case.payload))
    if isinstance(reply, Errored) and case.may_refuse is not None:
        named = (
            [reply.rule]
            if reply.rule
            else [r for r in named_rules(reply.message, registry) if r != "WRITE_VALID"]
        )
        if set(named) == {case.may_refuse}:
            yield Result(**base, outcome=Outcome.PASSED)
            return
    if not isinstance(reply, Written):
        yield _unwritten(reply, base, registry)
        return
    problem = written_problem(
        reply.blob, w.version, registry, _cases.project(case.payload, w.version, registry)
    )
    if problem:
        symptom, message = problem
        yield failed(base, "writer", symptom, f"{case.description}: {message}")
    else:
        yield Result(**base, outcome=Outcome.PASSED)
    if case.blob is not None:
        bytes_base = {**base, "case": f"{case.id}{BYTES}", "tier": RECOMMENDED}
        yield bytes_result(bytes_base, reply.blob, case.blob, case.description)


def bytes_result(base: dict[str, Any], blob: bytes, expected: bytes, context: str) -> Result:
    if blob == expected:
        return Result(**base, outcome=Outcome.PASSED)
    at = next((i for i, (x, y) in enumerate(zip(blob, expected)) if x != y), min(len(blob), len(expected)))
    wrote, wanted = (
        dumps_short(blob[max(0, at - 20) : at + 20]),
        dumps_short(expected[max(0, at - 20) : at + 20]),
    )
    symptom = f"bytes differ: {byte_cause(blob, expected)}"
    return failed(
        base,
        "writer",
        symptom,
        f"{context}: bytes differ from the reference writer at offset {at}: wrote {wrote}, expected {wanted}",
    )


def reference_blob(payload_json: str, version: str, registry: Registry) -> bytes | None:
    """What the reference writer of ``version`` in ``registry`` (default: the default registry)
    writes for a projected payload (None: it refuses)."""
    return _reference_blob(payload_json, version, registry)


@functools.lru_cache(maxsize=4096)
def _reference_blob(payload_json: str, version: str, registry: Registry) -> bytes | None:
    import json

    try:
        p = from_decoded(json.loads(payload_json), registry)
        return wrap_rendezvous_blob(
            *p[:4], p.publisher_step, spec_version=version, registry=registry, **p.optional_members
        )
    except InvalidBlob:  # a refusal; anything else is a crash of the reference writer, never "no bytes"
        return None


def write_generated(
    w: Any, cid: str, payload: dict[str, Any], registry: Registry
) -> tuple[list[Result], bytes | None]:
    """Write one generated payload: the blob must be valid, carry the payload (the reference
    reads it back), and match the reference writer's bytes (``ID:bytes``, Recommended)."""
    import json

    base = {"case": cid, "tier": REQUIRED, "writer": w.label}
    projected = _cases.project(payload, w.version, registry)
    reply = exchange(w.testee, write(0, projected))
    if not isinstance(reply, Written):
        return [_unwritten(reply, base, registry)], None
    blob = reply.blob
    problem = written_problem(blob, w.version, registry, projected)
    if problem:
        symptom, message = problem
        return [
            Result(**base, outcome=Outcome.FAILED, fault="writer", symptom=symptom, message=message)
        ], None
    results = [Result(**base, outcome=Outcome.PASSED)]
    if w.version in registry.released_versions():
        expected = reference_blob(json.dumps(projected), w.version, registry)
        if expected is not None:
            results.append(
                bytes_result(
                    {**base, "case": f"{cid}{BYTES}", "tier": RECOMMENDED}, blob, expected, "WRITE_FORMAT"
                )
            )
    return results, blob


def written_problem(
    blob: bytes, version: str, registry: Registry, projected: dict[str, Any]
) -> tuple[str, str] | None:
    """Why a written blob is not acceptable (WRITE_VALID and the writer rules), or None.
    ``registry`` holds ``version`` (default: the default registry; the run's has its candidates)."""
    try:
        document = parse(blob, version, registry=registry)
        repeated = first_repeated_name(blob)
        if repeated is not None:
            return (
                "wrote a blob breaking DUPLICATE_KEYS",
                f"wrote the member {show_pointer(repeated)} more than once (DUPLICATE_KEYS: writers MUST NOT repeat a name)",
            )
        check(document, "rendezvous", version, registry)
    except InvalidBlob as exc:
        return (
            f"wrote an invalid blob ({exc.rule})",
            f"wrote a blob that is invalid under {version}: {violation_text(exc.violations[0])}",
        )
    broken = writer_violations(document, version, registry=registry)
    if broken:
        return (
            f"wrote a blob breaking {broken[0].rule}",
            f"wrote {violation_text(broken[0])}{_declare_hint(broken[0].rule)}",
        )
    got = unwrap_rendezvous_blob(blob, spec_version=version, registry=registry)  # a candidate's too
    expected = _forms.decoded_document(projected, _cases.model_of(version, registry))
    diff = _cases.first_difference(expected, to_decoded(got, version, registry))
    if diff:
        return (
            f"blob does not carry the payload: {diff[0]}",
            f"the reference reads the blob back differently: {diff[1]}",
        )
    return None


def _declare_hint(rule: str) -> str:
    """What to do about a member no version has: declare the version that adds it."""
    if rule != "WRITE_KNOWN_MEMBERS":
        return ""
    return (
        "; to add a member, declare a new spec version that has it (refitwire schema export DIR if the "
        "kit is pip-installed, refitwire schema new VERSION --schema-dir DIR, then run with --schema-dir DIR: "
        "a --testee declares VERSION in its start reply; an --upstream-src tree declares DIR's newest "
        "candidate, or --upstream-spec-version VERSION, and is handed the members VERSION adds where its "
        "writer takes them)"
    )


def refusal(w: Any, case: RefusalCase, registry: Registry) -> Iterator[Result]:
    """WRITE_VALID: the only right answer to a payload that breaks a rule is a refusal, and it
    reports that rule (``ID#rule``: the ``rule`` member, else the rule IDs its message names)."""
    # Recommended: a MUST, but the released upstream writers write whatever they are given.
    base = {"case": case.id, "tier": RECOMMENDED, "writer": w.label}
    reply = exchange(w.testee, write(0, case.payload))
    if isinstance(reply, Errored):
        yield Result(**base, outcome=Outcome.PASSED)
        yield refusal_reason({**base, "case": f"{case.id}{REASON}"}, reply, case.rule, registry)
        return
    if isinstance(reply, Written):
        # Which wrong answer it is, so that a writer that starts repairing payloads it used to
        # copy shows as a change against a base report (the symptom is compared), not the same failure.
        try:
            unwrap_rendezvous_blob(reply.blob, spec_version=w.version, registry=registry)
        except InvalidBlob as exc:
            what = f"wrote an invalid blob ({exc.rule})"
        else:
            what = "repaired it: wrote a valid blob that does not carry it"
        # The symptom is the writer's behaviour, not the rule the case breaks (its ID names that):
        # one wrong behaviour (a step written as a string) is one group however many rules it meets.
        yield failed(
            base,
            "writer",
            f"given a payload it must refuse, {what}",
            f"given a payload that breaks {case.rule} ({case.description}), {what}; a writer must refuse it (errored)",
        )
        return
    yield unusable(reply, base, "writer") or Result(**base, outcome=Outcome.ERRORED)


def refusal_reason(base: dict[str, Any], reply: Errored, rule: str, registry: Registry) -> Result:
    named = (
        [reply.rule]
        if reply.rule
        else [r for r in named_rules(reply.message, registry) if r != "WRITE_VALID"]
    )
    if not named:  # WRITE_VALID: a refusal MUST report the rule; one that names none fails (and is counted)
        return failed(
            base, "writer", NO_REFUSAL_RULE, f"{NO_REFUSAL_RULE} (the spec says {rule}): {reply.message}"
        )
    if set(named) != {rule}:
        said = ", ".join(dict.fromkeys(named))
        return failed(
            base,
            "writer",
            f"refused for the wrong reason: named {said}, the spec says {rule}",
            f"refused naming {said}, the spec says {rule}: {reply.message}",
        )
    return Result(**base, outcome=Outcome.PASSED)


def cross(w: Any, r: Any, cid: str, expected: dict[str, Any], blob: bytes) -> Result:
    """``r`` reads the blob ``w`` wrote (already checked valid) and must decode ``expected``
    (:func:`_cases.expected_read`): a failure is the reader's."""
    base = {"case": cid, "tier": REQUIRED, "writer": w.label, "reader": r.label}
    reply = ask_read(r, blob)
    if isinstance(reply, Rejected):
        return failed(
            base,
            "reader",
            rejected_valid(reply),
            f"rejected {w.label}'s valid blob: {reply.message}",
        )
    if not isinstance(reply, Decoded):
        return unusable(reply, base, "reader") or Result(**base, outcome=Outcome.ERRORED)
    return decoded_result(base, expected, reply.payload)
