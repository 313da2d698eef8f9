"""The shared JUnit writer: counts come from the cases, and any text yields parseable XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from refitwire.compat.report._junit import Case, Suite, render, xml_safe


def test_counts_are_derived_from_cases() -> None:
    doc = render(
        [
            Suite("a -> b", [Case("c1", "required"), Case("c2", "required", "failed", "boom")]),
            Suite(
                "b -> a", [Case("c3", "recommended", "skipped", "no"), Case("c4", "required", "errored", "x")]
            ),
        ],
        name="refitwire",
    )
    root = ET.fromstring(doc)
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "4",
        "1",
        "1",
        "1",
    )
    first = root.find("testsuite")
    assert first is not None and first.get("failures") == "1" and first.get("tests") == "2"
    failure = root.find(".//testcase[@name='c2']/failure")
    assert failure is not None and failure.get("message") == "boom"


def test_hostile_text_still_parses() -> None:
    nasty = "\x1b[31mred\x1b[0m \x00\x07\x1f \ud800 \ufffe ]]> <&>"
    doc = render([Suite(nasty, [Case(nasty, nasty, "failed", nasty, nasty, stdout=nasty)])], name=nasty)
    root = ET.fromstring(doc)  # raises on invalid XML
    case = root.find(".//testcase")
    assert case is not None and case.get("name") == xml_safe(nasty)
    assert "\x1b" not in doc and "[31m" not in doc and "\\x00" in doc
