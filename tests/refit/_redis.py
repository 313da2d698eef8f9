"""A real ``redis-server`` for one test: a free port, a temporary directory, nothing saved.

No test talks to a server it did not start. Tests that need one skip, with the
reason, only when ``redis-server`` is not on PATH (CI installs it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

READY = "Ready to accept connections"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        pytest.skip("redis-server is not on PATH (Debian: apt-get install redis-server; .ci/run does)")
    return found


class RedisServer:
    """``redis-server --port N --bind HOST --dir TMP --save "" --appendonly no`` and its log."""

    def __init__(
        self,
        workdir: Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        password: str | None = None,
        tls: tuple[Path, Path] | None = None,  # (certificate, key): serve TLS only
        prefix: Sequence[str] = (),  # e.g. ``ip netns exec NS``
    ) -> None:
        self.binary = redis_server_binary()
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.host, self.password, self.tls, self.prefix = host, password, tls, list(prefix)
        self.port = port if port is not None else free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start()

    @property
    def log(self) -> Path:
        return self.workdir / f"redis-{self.starts}.log"

    def url(self, namespace: str | None = None, *, with_password: bool = True) -> str:
        auth = f":{self.password}@" if self.password and with_password else ""
        scheme = "rediss" if self.tls else "redis"
        query = f"?namespace={namespace}" if namespace else ""
        return f"{scheme}://{auth}{self.host}:{self.port}/0{query}"

    def start(self, timeout_s: float = 15.0) -> None:
        self.starts += 1
        args = [self.binary, "--port", str(self.port), "--bind", self.host, "--dir", str(self.workdir),
                "--save", "", "--appendonly", "no", "--protected-mode", "no",
                "--logfile", str(self.log), "--daemonize", "no"]  # fmt: skip
        if self.password:
            args += ["--requirepass", self.password]
        if self.tls:
            cert, key = self.tls
            args[1:3] = ["--port", "0", "--tls-port", str(self.port)]
            args += ["--tls-cert-file", str(cert), "--tls-key-file", str(key),
                     "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]  # fmt: skip
        self.proc = subprocess.Popen([*self.prefix, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.log.exists() and READY in self.log.read_text(errors="replace"):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
        log = self.log.read_text(errors="replace") if self.log.exists() else ""
        self.stop()
        raise RuntimeError(f"redis-server did not start on {self.host}:{self.port}: {err}{log[-2000:]}")

    def stop(self) -> None:
        """SIGKILL: a crash, not a shutdown (nothing is saved either way)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


def served(workdir: Path) -> Iterator[RedisServer]:
    """The body of a fixture of any scope: ``yield from served(path)`` starts one, kills it after."""
    server = RedisServer(workdir)
    yield server
    server.stop()
