"""The writer's fast path takes a string for safe text (no "," ":" '"' or backslash, printable
ASCII) only when its schema pattern allows nothing else; every other string is looked at."""

from __future__ import annotations

import pytest
from refitwire import wire
from refitwire._dumps import _pinned_safe


def test_the_released_patterns_pin_their_members_to_safe_text() -> None:
    patterns = {m.pattern for m in wire.default_registry().newest_model().members() if m.pattern is not None}
    assert patterns and all(map(_pinned_safe, patterns)), patterns


@pytest.mark.parametrize(
    "pattern",
    [
        "^[a-z]",  # no end anchor: anything may follow
        "[a-z]+$",  # no begin anchor
        "^.*$",  # any character
        "^[^,]*$",  # a negated class: ":" and the rest
        "^a|b$",  # an alternative escaping the anchors
        "^(?:a|,)$",  # an alternative inside
        r"^\w+$",  # a category: Unicode letters
        "^[ -~]*$",  # a range holding "," and ":"
        "^[a-z,]+$",  # a literal ","
        '^x"$',  # a quotation mark
        "^é$",  # not ASCII
        None,
    ],
)
def test_any_other_pattern_leaves_its_strings_to_be_looked_at(pattern: str | None) -> None:
    assert not _pinned_safe(pattern)
