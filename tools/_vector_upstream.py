"""What the released upstream readers do with a generated vector, measured, not guessed.

A generated vector's ``upstream`` (and so its tier, SPEC section 7) is what the released
``modelexpress`` readers really answer: ``tools/upstream-verdicts.json`` holds each verdict by
vector ID, measured by ``python tools/build_vectors.py --measure-upstream`` (needs the upstream
environments, ``REFITWIRE_ENVS``), which starts every released reader and sends it the blob.
A blob no reader was asked about yet reads as ``accepts`` (the lenient, Recommended guess)
and ``--check`` reports it as unmeasured. The same run hands every released writer each writer
refusal case of its version (``compat.cases._built_cases.refusal_cases``: one per break of each
keyword of each member) and records which it writes instead of refusing (``writes``). Last, the
kit's own checks run on the released participants alone (``_upstream_cases.py``, the matrix as
``refitwire matrix`` judges it) and every single-sided case they all fail is recorded
(``failures``, with the derived ``#rule`` and ``:bytes`` results): exactly those are the entries
of ``compat/expected-failures/modelexpress.json``, so a new kind of case, or a new check of an
old one, is listed by construction and never fails the conformance run unlisted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _clone

CACHE = Path(__file__).with_name("upstream-verdicts.json")
_ASKED: dict[str, bytes] = {}  # vector id -> blob: every generated blob this build asked about


def vector_id(document: str, blob: bytes) -> str:
    return "v-" + hashlib.sha256(document.encode() + b"\n" + blob).hexdigest()[:12]


_BODY: dict[str, Any] = json.loads(CACHE.read_text(encoding="utf-8")) if CACHE.exists() else {}
_KNOWN: dict[str, str] = _BODY.get("verdicts", {})
# refusal case id -> "writes" or "refuses" (every released writer)
_WRITES: dict[str, str] = _BODY.get("writes", {})
# case id -> role, tier, message (every release fails it); None: never measured
_FAILURES: dict[str, Any] | None = _BODY.get("failures")
# vector id -> what every released count-only read does with an invalid blob
_COUNTS: dict[str, str] = _BODY.get("counts", {})
_COUNTED: dict[str, bytes] = {}


def upstream_verdict(document: str, blob: bytes) -> str:
    """``rejects`` when every released reader rejects ``blob``, else ``accepts``."""
    key = vector_id(document, blob)
    _ASKED[key] = blob
    return _KNOWN.get(key, "accepts")


def upstream_count(document: str, blob: bytes) -> str:
    """``rejects`` when every released count-only read (``with_tensors=False``) rejects the
    invalid ``blob``, else ``accepts``: whether its ``count:`` case can be Required."""
    key = vector_id(document, blob)
    _COUNTED[key] = blob
    return _COUNTS.get(key, "accepts")


def unmeasured() -> list[str]:
    return sorted((set(_ASKED) - set(_KNOWN)) | (set(_COUNTED) - set(_COUNTS)))


def stale_entries() -> list[str]:
    return sorted((set(_KNOWN) - set(_ASKED)) | (set(_COUNTS) - set(_COUNTED)))


def refusal_ids() -> dict[str, Any]:
    """The writer refusal cases of the released writers' version, by case ID."""
    from refitwire.compat.cases._built_cases import refusal_cases
    from refitwire.compat.upstream.adapter_testee import SPEC_VERSION

    return {c.id: c for c in refusal_cases(SPEC_VERSION, _clone.registry())}


def unmeasured_refusals() -> list[str]:
    return sorted(set(refusal_ids()) - set(_WRITES))


def measure() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]], dict[str, str]]:
    """Ask every released reader about every generated blob (and its count-only read about every
    invalid one), and every released writer to write every refusal case; the verdicts by vector
    ID, ``writes``/``refuses`` by case ID, the :func:`measured_failures`, and the count verdicts."""
    from refitwire import compat
    from refitwire.compat._testee import Testee

    found, missing = compat.upstream()
    if not found or missing:
        raise SystemExit(f"the released upstream readers are needed: {'; '.join(missing) or 'none found'}")
    verdicts = dict.fromkeys(_ASKED, "rejects")
    counts = dict.fromkeys(_COUNTED, "rejects")
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
            for seq, (key, blob) in enumerate(sorted(_COUNTED.items()), start=len(_ASKED) + len(refusals)):
                asked = {"cmd": "count", "seq": seq, "blob_b64": base64.b64encode(blob).decode()}
                if not testee.request(asked).get("rejected"):
                    counts[key] = "accepts"
        finally:
            testee.stop()
    return verdicts, writes, measured_failures(), counts


def measured_failures() -> dict[str, dict[str, str]]:
    """Case ID -> role, tier and message of each single-sided case (one side: a read, a write, a
    refusal, a Recommended size case, a digest case, a probe) that every released participant
    fails, as the kit's own checks judge it. Run in a fresh process: it reads the vectors this build just wrote."""
    from refitwire.compat._results import Outcome
    from refitwire.compat.report._report import read_report

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(Path(__file__).with_name("_upstream_cases.py")), tmp], check=True)
        reports = [read_report(out) for out in sorted(Path(tmp).glob("*.jsonl"))]
    if not reports or not all(report.complete for report in reports):
        raise SystemExit("a run of the released participants stopped before its footer: nothing measured")
    labels = {p["label"] for p in reports[0].header.participants}
    failing: dict[str, dict[str, str]] = {}
    by: dict[str, set[str]] = {}
    for r in (r for report in reports for r in report.results):
        if (r.writer is None) == (r.reader is None) or r.outcome not in (Outcome.FAILED, Outcome.XFAILED):
            continue
        by.setdefault(r.case, set()).add(r.writer or r.reader or "")
        failing[r.case] = {"role": "writer" if r.writer else "reader", "tier": r.tier, "message": r.message}
    split = sorted(c for c, who in by.items() if who != labels)
    if split:  # an entry applies to every release alike (the list's own promise)
        print(f"{len(split)} cases fail for some released participants only, not listed (first: {split[0]})")
    return {c: failing[c] for c in sorted(failing) if c not in split}


def write(
    verdicts: dict[str, str],
    writes: dict[str, str],
    failures: dict[str, dict[str, str]],
    counts: dict[str, str],
) -> None:
    body = {
        "description": "What the released modelexpress readers (every one) do with each generated vector, by vector ID (and their count-only read with each invalid one: counts), and whether its writers write each writer refusal case instead of refusing it (writes), by case ID, and each single-sided case every released participant fails as the kit judges it (failures: the entries of compat/expected-failures/modelexpress.json); written by tools/build_vectors.py --measure-upstream.",
        "verdicts": dict(sorted(verdicts.items())),
        "writes": dict(sorted(writes.items())),
        "failures": failures,
        "counts": dict(sorted(counts.items())),
    }
    CACHE.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


EXPECTED = Path(__file__).resolve().parent.parent / "compat" / "expected-failures" / "modelexpress.json"


def expected_failures(vectors: list[dict[str, Any]]) -> str:
    """``modelexpress.json`` with one entry per measured failure (``failures``): an entry already
    listed keeps its reason; a new one says what the check found (a tolerated invalid vector, its
    rule and description). A Required case is never listed: the released participants define
    Required (SPEC section 7), so one they fail is a wrong tier or expectation, shown, not excused."""
    text = EXPECTED.read_text(encoding="utf-8")
    if _FAILURES is None:
        return text  # never measured: the list stays as it is (--measure-upstream fills it)
    data = json.loads(text)
    described = {
        f"{kind}:{v['id']}": v for v in vectors if v["document"] == "rendezvous" for kind in ("read", "count")
    }
    reasons = {e["case"]: e for e in data["expected_failures"]}
    entries = []
    from refitwire.compat.runner import _kinds  # the case kinds' table reads an ID

    for case, found in sorted(_FAILURES.items()):
        parsed = _kinds.parse(case)
        if parsed is not None and parsed.kind in ("read", "count") and parsed.bare not in described:
            continue  # measured on a vector an earlier pass built and this one does not keep
        if found["tier"] != "recommended":
            print(f"{case}: every released participant fails this Required case ({found['message'][:200]})")
            continue
        entry = reasons.get(case) or _entry(case, found, described.get(case))
        entries.append({**entry, "role": found["role"]})
    data["expected_failures"] = sorted(entries, key=lambda e: (e["case"].split(":")[0], e["case"]))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _entry(case: str, found: dict[str, str], vector: dict[str, Any] | None) -> dict[str, str]:
    """A new entry's reason and link: the vector's rule and description for a tolerated invalid
    vector, else the check's own message (its rule, when it names one)."""
    from refitwire.compat.runner import _kinds  # the case kinds' table reads an ID

    parsed = _kinds.parse(case)
    bad = [o for o in vector["expect"].values() if not o["valid"]] if vector else []
    if vector is not None and bad and parsed is not None and not parsed.derived:
        rule = bad[0]["rule"]
        who = (
            "the released count-only read tolerates"
            if parsed.kind == "count"
            else "released readers tolerate"
        )
        return {"case": case, "reason": f"{who} it ({rule}): {vector['description']}",
                "link": f"schema/SPEC.md#{rule}"}  # fmt: skip
    from refitwire.compat.runner._causes import named_rules

    named = [r for r in named_rules(found["message"], _clone.registry()) if r != "WRITE_VALID"]
    link = f"schema/SPEC.md#{named[0]}" if named else "schema/SPEC.md#7-conformance-tiers"
    return {"case": case, "reason": f"every release: {found['message']}", "link": link}
