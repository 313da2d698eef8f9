"""The one JUnit XML writer, shared by the matrix, the conformance suite and the gate.

Renderers build :class:`Suite` and :class:`Case` records and call :func:`render`; nothing
else writes JUnit. Text from testees (stderr, replies) can hold anything, so every string is
reduced to what XML 1.0 can carry before it is written: the output always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Case", "Suite", "render", "xml_safe"]

Status = Literal["passed", "failed", "errored", "skipped"]

# Characters XML 1.0 cannot hold at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F),
# and ANSI escape sequences, which are control characters plus noise once the ESC is gone.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with ANSI escapes dropped and characters XML 1.0 forbids shown as ``\\xNN``."""
    text = _ANSI.sub("", text)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass(frozen=True)
class Case:
    """One test case; ``message`` is the one-line reason, ``detail`` the body."""

    name: str
    classname: str
    status: Status = "passed"
    message: str = ""
    detail: str = ""
    type: str = ""
    seconds: float | None = None
    stdout: str = ""


@dataclass(frozen=True)
class Suite:
    name: str
    cases: Sequence[Case] = field(default_factory=tuple)


_ELEMENT = {"failed": "failure", "errored": "error", "skipped": "skipped"}


def render(suites: Sequence[Suite], *, name: str, seconds: float | None = None) -> str:
    """A ``<testsuites>`` document; counts are computed from the cases, never passed in."""
    root = ET.Element("testsuites", name=xml_safe(name))
    if seconds is not None:
        root.set("time", f"{seconds:.3f}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        counts = {
            "tests": len(suite.cases),
            "failures": sum(c.status == "failed" for c in suite.cases),
            "errors": sum(c.status == "errored" for c in suite.cases),
            "skipped": sum(c.status == "skipped" for c in suite.cases),
        }
        for k, v in counts.items():
            totals[k] += v
        node = ET.SubElement(
            root, "testsuite", {"name": xml_safe(suite.name), **{k: str(v) for k, v in counts.items()}}
        )
        for case in suite.cases:
            attrs = {"classname": xml_safe(case.classname), "name": xml_safe(case.name)}
            if case.seconds is not None:
                attrs["time"] = f"{case.seconds:.3f}"
            element = ET.SubElement(node, "testcase", attrs)
            if case.status in _ELEMENT:
                outcome = ET.SubElement(element, _ELEMENT[case.status], message=xml_safe(case.message))
                if case.type:
                    outcome.set("type", xml_safe(case.type))
                if case.detail:
                    outcome.text = xml_safe(case.detail)
            if case.stdout:
                ET.SubElement(element, "system-out").text = xml_safe(case.stdout)
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
