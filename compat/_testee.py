"""A testee process: started once, spoken to line by line, restarted when it misbehaves.

A crash is data, never an abort: every failure becomes a ProtocolError that the runner
records as an errored case. Timeouts bound each request; restarts are bounded and replay
the handshake; stderr is kept (bounded) for the report.
"""

from __future__ import annotations

import collections
import json
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

import msgspec
import orjson
from refitwire import wire
from refitwire.compat import _protocol as proto
from refitwire.compat._errors import ProtocolError
from refitwire.wire import LineProcess, NoReply, ProcessExited, ReplyTooLong, blob_limit, no_gc

#: How many reply bytes one byte of a valid blob's text becomes at most in the answer to it:
#: a character of two (or four) UTF-8 bytes written as a ``\\u`` escape of six (or twelve) ASCII
#: bytes, a separator followed by a space (two). Integers are copied digit for digit
#: (INTEGER_LITERAL: a valid blob writes no exponent), the agent metadata is re-encoded in as many
#: base64 characters, whitespace and unknown members are dropped.
TEXT_EXPANSION = 3
#: The reply's own members around the blob or the decoded form (``seq``, the command's keys).
REPLY_ENVELOPE = 4096
#: The shortest JSON text of a value of each JSON type.
_SHORTEST = {"string": 2, "integer": 1, "number": 1, "boolean": 4, "null": 4, "array": 2, "object": 2}
STDERR_KEEP = 200  # lines
#: Non-blank stderr lines a message quotes from each end: a crash says why near its top (node's
#: "Cannot find module"), a traceback at its bottom; the lines between are counted.
STDERR_HEAD = STDERR_TAIL = 5


class Stderr(collections.deque[str]):
    """A testee's stderr: its last ``STDERR_KEEP`` lines, and its first non-blank ones, which stay
    however much it writes after them."""

    def __init__(self, keep: int = STDERR_KEEP, head: int = STDERR_HEAD) -> None:
        super().__init__(maxlen=keep)
        self.head_size = head
        self.first: list[str] = []  # the first ``head`` non-blank lines
        self.written = 0  # non-blank lines ever appended

    def append(self, line: str) -> None:
        if line.strip():
            self.written += 1
            if len(self.first) < self.head_size:
                self.first.append(line)
        super().append(line)


def excerpt(stderr: Iterable[str], head: int = STDERR_HEAD, tail: int = STDERR_TAIL) -> list[str]:
    """The first ``head`` and last ``tail`` non-blank lines of a testee's stderr, with one line
    saying how many lie between when some do (``[]``: it wrote nothing)."""
    kept = [line.rstrip() for line in stderr if line.strip()]
    if isinstance(stderr, Stderr) and stderr.written > len(kept):  # its first lines left the deque
        first = [line.rstrip() for line in stderr.first[:head]]
        after = stderr.written - len(first)  # how many came after them, the last ``kept`` among them
        last = kept[-min(tail, after) :] if after else []
        between = after - len(last)
    elif len(kept) <= head + tail:
        return kept
    else:
        first, last, between = kept[:head], kept[-tail:], len(kept) - head - tail
    if not between:
        return [*first, *last]
    return [*first, f"... {between} more line{'s' * (between != 1)} ...", *last]


def excerpt_text(stderr: Iterable[str]) -> str:
    """:func:`excerpt` as one line for a message: ``first | ... | last``, or ``(empty)``."""
    return " | ".join(excerpt(stderr)) or "(empty)"


def reply_limit(registry: wire.Registry) -> int:
    """The longest reply line a valid answer can take in a run over ``registry`` (its candidates
    included), from each version's blob size limit (SPEC.md section 5, ``blob_limit``) and its
    decoded form (section 6). A write is answered with the blob in base64; a read with the
    decoded form, which writes every optional member the blob leaves out as ``null`` in every
    object: a shard-level member on the hundreds of thousands of shards of a table at the limit
    makes that several MiB longer than the blob, so the limit follows the members."""
    return max(_reply_limit(registry.wire_model("rendezvous", v), blob_limit(registry, v))
               for v in registry.known_versions())  # fmt: skip


def _reply_limit(model: wire.WireModel, limit: int) -> int:
    """Each byte of a blob of ``limit`` bytes takes at most ``TEXT_EXPANSION`` bytes of the
    answer; the top object adds its nulls once, and every object of a table (a tensor, a
    shard) at most its level's nulls per the fewest bytes its own members (the required ones,
    at their shortest) take in the blob: objects do not share those bytes, so the nulls of all
    of them are at most the worst level's ratio times the blob. (A write's answer, the blob in
    base64, is 4/3 of it: less than the first term alone.)"""
    worst = max(
        (Fraction(_nulls(level), _shortest_object(level)) for path, level in model.levels.items() if path),
        default=Fraction(0),
    )
    return REPLY_ENVELOPE + math.ceil(limit * (TEXT_EXPANSION + worst)) + _nulls(model.top)


def _nulls(level: wire.Level) -> int:
    """What a decoded object of ``level`` adds to a blob's one that holds none of its optional
    members: ``, "name": null`` for each."""
    return sum(len(json.dumps(m.name)) + len(": null, ") for m in level.optional if m.in_decoded_form)


def _shortest_object(level: wire.Level) -> int:
    """The fewest bytes an object of ``level`` takes in a valid blob, leaving out what nests in it
    (``{}``, its required members' names, colons, commas and shortest values)."""
    required = [m for m in level.members if m.required and m.name != "*"]
    values = [
        len(json.dumps(m.const, separators=(",", ":")))
        if m.const is not wire.NO_CONST
        else min((_SHORTEST.get(t, 1) for t in (*m.types, *(("null",) if m.nullable else ()))), default=1)
        for m in required
    ]
    names = sum(len(json.dumps(m.name)) + 1 for m in required)
    return 2 + names + sum(values) + max(0, len(required) - 1)


@dataclass(frozen=True)
class Identity:
    """What a testee said about itself in the handshake."""

    name: str
    version: str
    language: str
    spec_version: str
    roles: tuple[str, ...]


@dataclass
class Testee:
    """One testee command, run as a persistent process."""

    command: list[str]
    env: dict[str, str] | None = None
    timeout_s: float = 10.0
    # The handshake waits this long (not --timeout), counted from this process's own start: starting an
    # interpreter (and importing torch) is slow on a busy host.
    start_timeout_s: float = 120.0
    max_restarts: int = 3
    check_messages: bool = True  # validate every request and reply against schema/protocol/
    # The longest reply line read: reply_limit() of the run's registry, whose candidates may add
    # members; None: of the package's own schemas.
    max_reply: int | None = None
    identity: Identity | None = None
    restarts: int = 0
    stderr: Stderr = field(default_factory=Stderr)
    _proc: LineProcess | None = None  # the one JSON-lines driver: timeouts, line limit, stderr kept
    _seq: int = 0
    _answered: bool = False  # whether any request after the handshake was ever answered

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> Identity:
        env = {**os.environ, **(self.env or {})}
        if self.max_reply is None:
            self.max_reply = reply_limit(wire.default_registry())
        self._proc = LineProcess(self.command, env=env, stderr=self.stderr, max_line=self.max_reply)
        reply = self._exchange(proto.start(), seq=None, timeout_s=self.start_timeout_s)
        proto.check_message(reply, "response")
        if "implementation" not in reply:
            raise ProtocolError(f"handshake answered with {json.dumps(reply)[:200]}")
        impl = reply["implementation"]
        identity = Identity(
            impl["name"], impl["version"], impl["language"], reply["spec_version"], tuple(reply["roles"])
        )
        if self.identity is not None and identity != self.identity:
            raise ProtocolError(
                f"restarted testee changed identity: {json.dumps(asdict(identity))} != {json.dumps(asdict(self.identity))}"
            )
        self.identity = identity
        return identity

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop(json.dumps(proto.stop()).encode(), self.timeout_s)

    def request(
        self, message: dict[str, Any], *, probe: bool = False, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Send one request with a fresh seq and return the reply; restart on failure, then re-raise.

        ``probe``: a request outside the protocol's schema on purpose (an unknown command), sent
        unchecked. ``timeout_s``: this request's allowance, when it is not the testee's timeout."""
        self._seq += 1
        message = {**message, "seq": self._seq}
        try:
            if self._proc is None or not self._proc.alive():
                self._restart("the process had exited")
            reply = self._exchange(message, seq=self._seq, timeout_s=timeout_s, check=not probe)
        except ProtocolError as exc:
            self._restart(str(exc), quiet=True)
            raise
        return reply

    def _restart(self, why: str, quiet: bool = False) -> None:
        # Killed, not asked to stop: a testee that just failed an exchange (no reply in time,
        # a broken line) is busy or confused, and a polite stop would wait out --timeout again.
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
        if self.restarts >= self.max_restarts:
            if quiet:
                return
            raise ProtocolError(f"{why}; gave up after {self.restarts} restarts")
        self.restarts += 1
        self.stderr.append(f"[refitwire] restart {self.restarts}: {why}")
        try:
            self.start()
        except (ProtocolError, OSError) as exc:
            self._proc = None
            if not quiet:
                raise ProtocolError(f"{why}; restart failed: {exc}") from None

    # -- one exchange -----------------------------------------------------------------------

    def _exchange(
        self, message: dict[str, Any], seq: int | None, timeout_s: float | None = None, check: bool = True
    ) -> dict[str, Any]:
        proc, timeout_s = self._proc, self.timeout_s if timeout_s is None else timeout_s
        assert proc is not None
        if self.check_messages and check:
            proto.check_message(message, "request")
        try:
            proc.send(_dumps(message))
        except OSError as exc:
            raise ProtocolError(f"cannot write to the testee: {exc}") from None
        try:
            line = proc.reply(timeout_s)
        except NoReply:
            hint = "" if self._answered else " (none so far: a testee must flush stdout after each line)"
            raise ProtocolError(f"no reply within {timeout_s:g} s{hint}") from None
        except ReplyTooLong as exc:
            raise ProtocolError(str(exc)) from None
        except ProcessExited:
            raise ProtocolError(
                f"the testee exited (status {json.dumps(proc.proc.poll())}) without replying"
            ) from None
        try:
            reply = _loads(line)
        except ValueError:
            raise ProtocolError(f"reply is not JSON: {_as_text(line)}") from None
        except RecursionError:  # (a testee that echoes a blob's deepest unknown member, say)
            raise ProtocolError(f"reply nested too deep for the runner to read: {_as_text(line)}") from None
        if not isinstance(reply, dict):
            raise ProtocolError(f"reply is not a JSON object: {_as_text(line)}")
        self._answered = True
        if seq is not None and reply.get("seq") != seq:
            raise ProtocolError(f"reply has seq {json.dumps(reply.get('seq'))}, expected {seq}")
        return reply  # in step with the testee; the runner checks the reply against its schema


def _dumps(message: dict[str, Any]) -> bytes:
    """A request line. A read request (a command, a seq and base64: ASCII, small integers) is
    written by orjson, which takes a tenth of the time on a blob at the size limit (85 MB of
    base64); every other request as before, by the standard library."""
    blob = message.get("blob_b64")
    if message.get("cmd") == "read" and isinstance(blob, str) and blob.isascii():
        try:
            return orjson.dumps(message)
        except TypeError:  # e.g. an integer past 64 bits in a hand-made request
            pass
    return json.dumps(message).encode("utf-8")


def _loads(line: bytes) -> Any:
    """A reply line as Python values: msgspec first (a decoded table at the limit is ~10^6
    values, parsed with the collector paused; unlike orjson it keeps an integer past 64 bits an
    integer, not a double), and the standard library's reading, which also takes NaN and lone
    surrogates, for what msgspec refuses."""
    try:
        with no_gc():
            return msgspec.json.decode(line)
    except msgspec.DecodeError:
        return json.loads(line)


def _as_text(line: bytes) -> str:
    """A line as JSON text for a message: never a Python bytes literal."""
    return json.dumps(line[:200].decode("utf-8", "replace").rstrip("\n"))
