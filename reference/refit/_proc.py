"""Parent/child plumbing for refit processes: JSON lines over a dedicated pipe.

NIXL and UCX log to stdout, so a child answers on its own file descriptor
(``--fd``) and reads commands from stdin. Every answer is one JSON object per
line; the parent waits for each with a timeout and treats a dead child as data.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from refitwire.wire import REPLY_FD, LineProcess, LinesError, NoReply

from ._errors import ChildDied

__all__ = ["Child", "ChildDied", "reply_channel"]


class Child:
    """A refit child process (``python -m <module> ... --fd N``) driven by JSON lines, through
    the kit's one JSON-lines driver (``refitwire.wire.LineProcess``): commands on stdin,
    answers on the ``--fd`` pipe (NIXL's logging keeps stdout), stderr shared with this process."""

    def __init__(
        self,
        name: str,
        module: str,
        args: Sequence[str],
        *,
        python: str | None = None,
        env: dict[str, str] | None = None,
        quiet: bool = True,
        prefix: Sequence[str] = (),
    ) -> None:
        self.name = name
        child_env = {**os.environ, **(env or {})}
        child_env.setdefault("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
        self.lines = LineProcess(
            [*prefix, python or sys.executable, "-m", module, *args, "--fd", REPLY_FD],
            env=child_env,
            stdout=subprocess.DEVNULL if quiet else None,  # NIXL's own logging
        )
        self.proc = self.lines.proc

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.lines.alive()

    def send(self, message: dict[str, Any]) -> None:
        if self.proc.stdin is None or self.proc.stdin.closed or not self.alive():
            raise ChildDied(f"{self.name} is not running (exit status {self.proc.returncode})")
        try:
            self.lines.send(json.dumps(message).encode())
        except OSError as exc:
            raise ChildDied(f"{self.name} stopped reading commands: {exc}") from None

    def recv(self, timeout_s: float) -> dict[str, Any]:
        """The next answer line, or ChildDied after ``timeout_s`` or at EOF."""
        try:
            line = self.lines.reply(timeout_s)
        except NoReply:
            raise ChildDied(f"{self.name} did not answer within {timeout_s:g} s") from None
        except LinesError:  # the pipe closed: it exited
            code = self.proc.wait(timeout=10)
            raise ChildDied(f"{self.name} exited with status {code} before answering") from None
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout_s)

    def kill(self) -> None:
        self.lines.kill()

    def ask_to_stop(self) -> None:
        """Send the stop command without waiting (stop several children in parallel)."""
        if self.alive() and self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)  # resume a frozen one first
                self.send({"cmd": "stop"})
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except (ChildDied, OSError):
                pass

    def stop(self, timeout_s: float = 20.0) -> None:
        """Ask it to stop and wait; kill it if it does not."""
        self.ask_to_stop()
        self.lines.stop(None, timeout_s)


def reply_channel(fd: int) -> IO[str]:
    """The child's side: a line-buffered text stream on the answer pipe."""
    return os.fdopen(fd, "w", buffering=1)


def answer(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def _commands(idle: Callable[[], None] | None, idle_s: float) -> Iterator[bytes]:
    # stdin lines; while none is waiting, ``idle`` runs every ``idle_s``.
    fd = sys.stdin.fileno()
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line
        if idle is not None and not select.select([fd], [], [], idle_s)[0]:
            idle()
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk


def serve(
    out: IO[str],
    handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]],
    *,
    idle: Callable[[], None] | None = None,
    idle_s: float = 0.001,
) -> None:
    """The child's loop: one command per stdin line, one answer each, until ``stop`` or EOF."""
    for line in _commands(idle, idle_s):
        msg = json.loads(line)
        cmd = msg.get("cmd")
        if cmd == "stop":
            return
        handler = handlers.get(cmd)
        answer(out, handler(msg) if handler else {"ok": False, "error": f"unknown command {cmd!r}"})
