"""The JSON-lines report: written line by line as results come, read back into typed records.

A report is a header line, one line per result, and a footer line (``schema/report/1.json``).
Each line is flushed as it is written, so a run that dies leaves everything done so far;
:func:`read_report` then returns what is there with ``footer=None``, and the run counts as
incomplete, never as passed.
"""

from __future__ import annotations

import collections
import json
import platform
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from refitwire.compat._errors import ReportError
from refitwire.compat._results import COUNTED, RECOMMENDED, REQUIRED, Outcome, Result
from refitwire.compat._testee import excerpt

REPORT_SCHEMA = "urn:refitwire:schema:report:1"


@dataclass(frozen=True)
class Header:
    seed: int
    examples: int
    participants: tuple[dict[str, Any], ...]
    unavailable: tuple[str, ...]
    upstream: str  # "ran", "not built", "left out (--no-upstream)" or "not asked"
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Footer:
    seconds: float
    counts: dict[str, int]
    required_failed: int
    recommended_failed: int
    xpassed: int
    raw: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Report:
    header: Header
    results: tuple[Result, ...]
    footer: Footer | None  # None: the run stopped before it finished (crash, kill, full disk)

    @property
    def complete(self) -> bool:
        return self.footer is not None


# -- writing ---------------------------------------------------------------------------------


def header(started: Sequence[Any], plan: Any) -> dict[str, Any]:
    return {
        "type": "header",
        "schema": REPORT_SCHEMA,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seed": plan.seed,
        "examples": plan.examples,
        "focus": _focus(started, plan.focused),
        "python": platform.python_version(),
        "kit": kit_version(),
        "spec_versions": list(plan.registry.released_versions()),
        "participants": [
            {
                "label": s.label,
                "kind": s.participant.kind,
                "name": s.identity.name,
                "version": s.identity.version,
                "language": s.identity.language,
                "spec_version": s.identity.spec_version,
                "roles": list(s.identity.roles),
                "command": list(s.participant.command),
            }
            for s in started
        ],
        "unavailable": list(plan.unavailable),
        "upstream": plan.upstream,
    }


def _focus(started: Sequence[Any], focused: frozenset[str] | None) -> list[str] | None:
    """The labels under test as the results name them: a testee renamed by its start reply by its
    new label, one that did not start by the label it was asked under."""
    if not focused:
        return None
    renamed = {s.asked_as: s.label for s in started}
    return sorted(renamed.get(label, label) for label in focused)


def kit_version() -> str:
    """The installed refitwire's version (what a report says made it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("refitwire")
    except PackageNotFoundError:
        return "unknown"


def counts(results: Iterable[Result]) -> dict[str, int]:
    """``tier.outcome`` -> number of results."""
    found = collections.Counter(f"{r.tier}.{r.outcome.value}" for r in results)
    return dict(sorted(found.items()))


def footer(results: Sequence[Result], started: Sequence[Any], seconds: float) -> dict[str, Any]:
    return {
        "type": "footer",
        "seconds": round(seconds, 3),
        "counts": counts(results),
        # a case the kit crashed on is the kit's (``kit_crashed``, below), never the testee's tier
        "required_failed": sum(1 for r in results if r.tier == REQUIRED and _charged(r)),
        "recommended_failed": sum(1 for r in results if r.tier == RECOMMENDED and _charged(r)),
        "xpassed": sum(1 for r in results if r.outcome == Outcome.XPASSED),
        **{key: sum(1 for r in results if r.symptom == symptom) for symptom, (key, _) in COUNTED.items()},
        "stderr": {s.label: excerpt(s.testee.stderr, tail=20) for s in started if s.testee.stderr},
    }


def _charged(result: Result) -> bool:
    return result.outcome in (Outcome.FAILED, Outcome.ERRORED) and result.fault != "kit"


def errored_run(foot: dict[str, Any] | Footer | None) -> int:
    """How many cases the kit itself crashed on: any makes the run errored, not a verdict."""
    raw = {} if foot is None else foot.raw if isinstance(foot, Footer) else foot
    return int(raw.get("kit_crashed", 0))


class Writer:
    """Writes report lines to ``stream`` (if any), one flushed line each, and keeps the records:
    each serialised once, and the typed report built from them without reading them back."""

    def __init__(self, stream: IO[str] | None) -> None:
        self.stream = stream
        self.lines: list[dict[str, Any]] = []  # the records, as written
        self.results: list[Result] = []
        self.head: dict[str, Any] | None = None
        self.foot: dict[str, Any] | None = None

    def put(self, line: dict[str, Any]) -> None:
        """A header or footer record."""
        if line.get("type") == "header":
            self.head = line
        elif line.get("type") == "footer":
            self.foot = line
        self._write(line, json.dumps(line))

    def put_result(self, result: Result) -> None:
        self.results.append(result)
        self._write(result.record, result.line)

    def _write(self, record: dict[str, Any], text: str) -> None:
        self.lines.append(record)
        if self.stream is not None:
            self.stream.write(text + "\n")
            self.stream.flush()

    def report(self) -> Report:
        """The report written so far, as :func:`read_report` would read it back."""
        if self.head is None:
            raise ReportError("no header line: not a refitwire report")
        foot = None if self.foot is None else footer_of(self.foot)
        return Report(header_of(self.head), tuple(self.results), foot)


def ok(foot: dict[str, Any] | Footer | None, *, enforce_recommended: bool = False) -> bool:
    """The exit verdict: no Required failure, no unexpected pass (and, enforced, no Recommended failure)."""
    if foot is None:
        return False
    raw = foot.raw if isinstance(foot, Footer) else foot
    bad = raw["required_failed"] + raw["xpassed"] + (raw["recommended_failed"] if enforce_recommended else 0)
    bad += errored_run(raw)  # the kit crashed: no verdict can be given
    return bool(bad == 0)


# -- reading ---------------------------------------------------------------------------------


def read_report(source: str | Path | Iterable[str]) -> Report:
    """Parse a JSON-lines report (a path, or its lines) into typed records.

    Raises :class:`ReportError` for a line that is not a report record, or a report with no
    header. A missing footer is not an error: ``Report.footer`` is then None.
    """
    lines: Iterable[str] = (
        Path(source).read_text(encoding="utf-8").splitlines() if isinstance(source, (str, Path)) else source
    )
    head: Header | None = None
    results: list[Result] = []
    foot: Footer | None = None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
            kind = record["type"]
            if kind == "header":
                head = header_of(record)
            elif kind == "result":
                results.append(_result(record))
            elif kind == "footer":
                foot = footer_of(record)
            else:
                raise ReportError(f"line {number}: unknown record type {json.dumps(kind)}")
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, ReportError):
                raise
            raise ReportError(f"line {number}: not a report record: {exc}") from None
    if head is None:
        raise ReportError("no header line: not a refitwire report")
    return Report(head, tuple(results), foot)


def header_of(record: dict[str, Any]) -> Header:
    return Header(
        record["seed"],
        record["examples"],
        tuple(record["participants"]),
        tuple(record.get("unavailable", ())),
        record.get("upstream", "not asked"),
        record,
    )


def footer_of(record: dict[str, Any]) -> Footer:
    return Footer(
        record["seconds"],
        dict(record["counts"]),
        record["required_failed"],
        record["recommended_failed"],
        record["xpassed"],
        record,
    )


def _result(record: dict[str, Any]) -> Result:
    return Result(
        case=record["case"],
        tier=record["tier"],
        outcome=Outcome(record["outcome"]),
        writer=record.get("writer"),
        reader=record.get("reader"),
        message=record.get("message", ""),
        symptom=record.get("symptom", ""),
        fault=record.get("fault"),
        expected_failure=record.get("expected_failure"),
        input=record.get("input"),
    )
