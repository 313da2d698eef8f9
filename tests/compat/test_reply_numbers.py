"""A testee's reply is read exactly: an integer past 64 bits stays an integer (orjson, the fast
path, would make it a double, so a reader that decodes 2**64 would be misreported)."""

from __future__ import annotations

import pytest
from refitwire.compat._testee import _loads


@pytest.mark.parametrize("number", [2**64, 2**64 - 1, -(2**63) - 1, -(2**63), 10**30])
def test_an_integer_of_any_width_is_read_exactly(number: int) -> None:
    got = _loads(b'{"seq": 0, "payload": {"addr": [%d]}}' % number)
    assert got["payload"]["addr"] == [number] and type(got["payload"]["addr"][0]) is int


def test_digits_inside_a_string_stay_a_string() -> None:
    digest = "0" * 31 + "1"
    assert _loads(b'{"digest": "%s", "x": 1.5}' % digest.encode()) == {"digest": digest, "x": 1.5}
