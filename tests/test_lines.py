"""The one JSON-lines process driver: a reply line per request, timeouts, exits and stderr as errors of their own."""

from __future__ import annotations

import collections
import subprocess
import sys

import pytest
from refitwire.wire import REPLY_FD, LineProcess, NoReply, ProcessExited, ReplyTooLong

ECHO = "import sys\nfor line in sys.stdin:\n    print('err', line.strip(), file=sys.stderr, flush=True)\n    print(line.strip(), flush=True)\n"


def test_a_request_line_gets_its_reply_and_the_stderr_is_kept() -> None:
    kept: collections.deque[str] = collections.deque(maxlen=10)
    child = LineProcess([sys.executable, "-c", ECHO], stderr=kept)
    child.send(b'{"n": 1}')
    assert child.reply(20) == b'{"n": 1}\n'
    assert child.stop(None, 20) == 0
    assert kept[-1] == 'err {"n": 1}'


def test_silence_exit_and_an_overlong_line_are_errors_of_their_own() -> None:
    mute = LineProcess([sys.executable, "-c", "import time; time.sleep(30)"])
    with pytest.raises(NoReply, match=r"within 0\.2 s"):
        mute.reply(0.2)
    mute.kill()
    gone = LineProcess([sys.executable, "-c", "pass"])
    for _ in range(2):  # every later wait sees the end too, at once
        with pytest.raises(ProcessExited):
            gone.reply(20)
    long = LineProcess([sys.executable, "-c", "print('x' * 100); print('ok')"], max_line=50)
    with pytest.raises(ReplyTooLong, match="50 bytes"):
        long.reply(20)
    assert long.reply(20) == b"ok\n"  # the rest of the long line is skipped, the next one read


def test_a_child_can_answer_on_a_pipe_of_its_own() -> None:
    """Where its libraries print to stdout (NIXL): the pipe's number replaces REPLY_FD."""
    code = "import os, sys; print('noise'); os.write(int(sys.argv[1]), b'hello\\n')"
    child = LineProcess([sys.executable, "-c", code, REPLY_FD], stdout=subprocess.DEVNULL)
    assert child.reply(20) == b"hello\n"
    assert child.stop(None, 20) == 0


def test_what_an_ended_child_wrote_last_on_stderr_is_kept_before_stop_returns() -> None:
    """Its last lines (a traceback) are what a report shows: a line written after the child
    exited, by a process it left holding the pipe, is read before ``stop`` returns."""
    kept: collections.deque[str] = collections.deque(maxlen=10)
    late = "import subprocess, sys\nsys.stdin.read()\nsubprocess.Popen(['sh', '-c', 'sleep 0.3; echo last >&2'])\n"
    child = LineProcess([sys.executable, "-c", late], stderr=kept)
    assert child.stop(None, 20) == 0
    assert list(kept) == ["last"]
