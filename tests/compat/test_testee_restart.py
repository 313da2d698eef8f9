"""A testee that failed an exchange is killed and started again, never asked to stop first.

A testee that gave no reply in time is busy or hung: a polite ``stop`` would wait out the
testee's whole timeout again before the kill (``--timeout``, 10 s by default, once per timed-out
case), which is what a run against a slow reader spent most of its time on.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from refitwire.compat import _testee
from refitwire.compat._errors import ProtocolError

HOSTILE = Path(__file__).with_name("hostile_testees.py")


def test_a_testee_that_did_not_reply_in_time_is_killed_not_sent_stop() -> None:
    # ``silence`` answers the handshake, then nothing; a stop line it logs to stderr and ignores.
    testee = _testee.Testee([sys.executable, str(HOSTILE), "silence"], timeout_s=60.0, max_restarts=1)
    testee.start()
    with pytest.raises(ProtocolError, match=r"no reply within 0\.2 s"):
        testee.request({"cmd": "read", "blob_b64": "e30="}, timeout_s=0.2)
    # Restarted (the handshake answered again); a stop sent to the first process would have
    # been logged (and, with a testee that keeps its stdin open, waited out its 60 s timeout).
    deadline = time.monotonic() + 5.0
    while not any("restart 1" in line for line in testee.stderr) and time.monotonic() < deadline:
        time.sleep(0.05)
    kept = list(testee.stderr)
    testee.timeout_s = 0.1  # the second process ignores stop too
    testee.stop()
    assert any("[refitwire] restart 1: no reply within 0.2 s" in line for line in kept), kept
    assert not [line for line in kept if "misbehaving on stop" in line], kept
