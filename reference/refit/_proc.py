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
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

__all__ = ["Child", "ChildDied", "reply_channel"]


class ChildDied(RuntimeError):
    """A child exited, or did not answer in time."""


class Child:
    """A refit child process (``python -m <module> ... --fd N``) driven by JSON lines."""

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
        read_fd, write_fd = os.pipe()
        child_env = {**os.environ, **(env or {})}
        child_env.setdefault("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
        self.proc = subprocess.Popen(
            [*prefix, python or sys.executable, "-m", module, *args, "--fd", str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL if quiet else None,  # NIXL's own logging
            pass_fds=[write_fd],
            env=child_env,
        )
        os.close(write_fd)
        self._answers: IO[bytes] = os.fdopen(read_fd, "rb", buffering=0)
        self._buf = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        if self.proc.stdin is None or self.proc.stdin.closed or not self.alive():
            raise ChildDied(f"{self.name} is not running (exit status {self.proc.returncode})")
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ChildDied(f"{self.name} stopped reading commands: {exc}") from None

    def recv(self, timeout_s: float) -> dict[str, Any]:
        """The next answer line, or ChildDied after ``timeout_s`` or at EOF."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildDied(f"{self.name} did not answer within {timeout_s:g} s")
            ready, _, _ = select.select([self._answers], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._answers.fileno(), 65536)
            if not chunk:
                code = self.proc.wait(timeout=10)
                raise ChildDied(f"{self.name} exited with status {code} before answering")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout_s)

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()

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
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
        self._answers.close()


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
