"""Hostile testees: processes that break the protocol itself rather than the spec.

Run as ``python hostile_testees.py MODE``. Each answers the handshake correctly (except
``mute``) and then misbehaves on every request, so the runner's defences (per-request
timeouts, bounded restarts with the handshake replayed, bounded line reads, kept stderr)
are what stands between it and a hung or crashed run. Every mode first writes a line
starting with ``hostile:`` to stderr: the evidence the report must keep.

Modes:

* ``endless-line``: answers with one line that never ends (megabytes, no newline, forever).
* ``invalid-json``: answers with a line that is not JSON.
* ``repeated-seq``: answers every request twice, so the next request reads a stale seq.
* ``silence``: never answers a request (and ignores ``stop``).
* ``mute``: never answers, not even the handshake.
* ``exit-after-handshake``: exits with code 7 on the first request.
* ``stderr-only``: writes every answer to stderr instead of stdout.
* ``flood``: answers with an endless flood of short lines that are not replies.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from refitwire import wire
from refitwire.compat.testees.reference import answer

MODES = (
    "endless-line", "invalid-json", "repeated-seq", "silence", "mute",
    "exit-after-handshake", "stderr-only", "flood",
)  # fmt: skip
VERSION = "1.2.0"


def say(stream: Any, text: str) -> None:
    stream.write(text)
    stream.flush()


def main(mode: str) -> int:
    say(sys.stderr, f"hostile: {mode} testee started\n")
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "stop" and mode not in ("silence", "mute"):
            return 0
        if cmd == "start" and mode != "mute":
            say(out, json.dumps(answer(request, VERSION, wire.default_registry())) + "\n")
            continue
        say(sys.stderr, f"hostile: {mode} misbehaving on {cmd} seq {request.get('seq')}\n")
        if mode == "endless-line":
            chunk = "x" * (1 << 20)
            while True:
                say(out, chunk)
        elif mode == "invalid-json":
            say(out, '{"seq": ' + str(request.get("seq")) + ", this is not JSON\n")
        elif mode == "too-deep":  # JSON, nested deeper than a recursive parser reads
            say(out, '{"seq": ' + str(request.get("seq")) + ', "payload": ' + "[" * 5000 + "]" * 5000 + "}\n")
        elif mode == "repeated-seq":
            reply = json.dumps(answer(request, VERSION, wire.default_registry())) + "\n"
            say(out, reply + reply)
        elif mode in ("silence", "mute"):
            continue
        elif mode == "exit-after-handshake":
            return 7
        elif mode == "stderr-only":
            say(sys.stderr, json.dumps(answer(request, VERSION, wire.default_registry())) + "\n")
        elif mode == "flood":
            junk = json.dumps({"seq": -1, "flood": True}) + "\n"
            block = junk * 4096
            while True:
                say(out, block)
        else:
            say(sys.stderr, f"hostile: unknown mode {mode!r}\n")
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
