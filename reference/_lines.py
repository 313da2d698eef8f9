"""The one driver of a child process spoken to in JSON lines: a request line out, a reply line in.

Every kit process that talks to another one this way uses it (the matrix's testees, the
refit's publishers and receivers, the bench's NIXL peer, the tests' protocol client): each
reply is awaited with a timeout, a child that exits or stops reading is an error of its own
kind (never a hang), a reply line is bounded, and the child's stderr is kept (its last
lines) for the report. Replies come on the child's stdout, or, for a child whose libraries
print to stdout (NIXL, UCX), on a pipe of their own whose number replaces ``{reply_fd}`` in
its command line. What a line means (its JSON, its ``seq``) is the caller's business.
"""

from __future__ import annotations

import collections
import os
import queue
import subprocess
import threading
from collections.abc import Sequence
from typing import IO

from refitwire._errors import LinesError, NoReply, ProcessExited, ReplyTooLong

__all__ = ["LineProcess", "LinesError", "NoReply", "ProcessExited", "REPLY_FD", "ReplyTooLong"]

#: In a command line: the number of the reply pipe (a child that answers on a pipe of its own).
REPLY_FD = "{reply_fd}"
#: How long an ended child's stderr is waited for, to its end: its last lines (a traceback) are
#: what a report shows of it; a process it left behind holding the pipe open is not waited out.
STDERR_DRAIN_S = 2.0


class LineProcess:
    """One child process and its two line streams (requests to its stdin, replies from it)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        stdout: int | None = None,
        stderr: collections.deque[str] | None = None,
        max_line: int = 64 * 1024 * 1024,
    ) -> None:
        """``stdout``: where the child's stdout goes when it answers on a pipe of its own
        (``REPLY_FD`` in ``argv``), e.g. ``subprocess.DEVNULL``; ``stderr``: a deque its stderr
        lines are appended to (kept: its ``maxlen``), else the child shares this one's."""
        self.max_line = max_line
        self._replies: queue.Queue[bytes | ReplyTooLong | None] = queue.Queue()
        write_fd = None
        if REPLY_FD in argv:
            read_fd, write_fd = os.pipe()
            argv = [str(write_fd) if arg == REPLY_FD else arg for arg in argv]
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=stdout if write_fd is not None else subprocess.PIPE,
            stderr=subprocess.PIPE if stderr is not None else None,
            pass_fds=[write_fd] if write_fd is not None else [],
            env=env,
        )
        if write_fd is not None:
            os.close(write_fd)
            replies: IO[bytes] = os.fdopen(read_fd, "rb")
        else:
            assert self.proc.stdout is not None
            replies = self.proc.stdout
        threading.Thread(target=self._pump_replies, args=(replies,), daemon=True).start()
        self._stderr_pump: threading.Thread | None = None
        if stderr is not None:
            assert self.proc.stderr is not None
            self._stderr_pump = threading.Thread(
                target=_pump_text, args=(self.proc.stderr, stderr), daemon=True
            )
            self._stderr_pump.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, line: bytes) -> None:
        """One request line (the newline is added); OSError when the child stopped reading."""
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            raise BrokenPipeError("the child's stdin is closed")
        stdin.write(line + b"\n")
        stdin.flush()

    def reply(self, timeout_s: float) -> bytes:
        """The next reply line (its newline kept); NoReply, ProcessExited or ReplyTooLong."""
        try:
            got = self._replies.get(timeout=timeout_s)
        except queue.Empty:
            raise NoReply(f"no reply within {timeout_s:g} s") from None
        if got is None:
            self._replies.put(None)  # every later wait sees the end too
            self._drain_stderr()
            raise ProcessExited("the child exited before replying")
        if isinstance(got, ReplyTooLong):
            raise got
        return got

    def stop(self, line: bytes | None, timeout_s: float) -> int:
        """Send ``line`` (the stop request, if any), close stdin, and wait; kill it if it does
        not exit in ``timeout_s``. The exit status."""
        try:
            if line is not None and self.alive():
                self.send(line)
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            status = self.proc.wait(timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            status = self.proc.wait()
        self._drain_stderr()
        return status

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()
        self._drain_stderr()

    def _drain_stderr(self) -> None:
        """Let the stderr pump read what the ended child wrote last, up to ``STDERR_DRAIN_S``."""
        if self._stderr_pump is not None:
            self._stderr_pump.join(STDERR_DRAIN_S)

    def _pump_replies(self, stream: IO[bytes]) -> None:
        with stream:
            while line := stream.readline(self.max_line + 1):
                if len(line) > self.max_line:
                    self._replies.put(
                        ReplyTooLong(f"a reply line is over the line limit ({self.max_line} bytes)")
                    )
                    while line and not line.endswith(b"\n"):
                        line = stream.readline(self.max_line)
                    continue
                self._replies.put(line)
        self._replies.put(None)


def _pump_text(stream: IO[bytes], into: collections.deque[str]) -> None:
    with stream:
        for line in iter(lambda: stream.readline(64 * 1024), b""):
            into.append(line.decode("utf-8", "replace").rstrip("\n"))
