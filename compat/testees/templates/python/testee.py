#!/usr/bin/env python3
"""A refitwire conformance testee template (protocol 1): Python 3.8+, standard library only.

Run it as is: refitwire conformance --testee "python3 testee.py" --no-upstream
Then put your reader and writer where it says YOUR CODE; README.md says more.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from typing import Any

IMPLEMENTATION = {"name": "my-implementation", "version": "0.0.0", "language": "python"}
SPEC_VERSION = "1.2.0"  # the newest spec version your reader and writer implement
ROLES = ["reader", "writer"]  # the runner sends only the requests of the roles you declare


class Rejected(Exception):
    """Raise it from read_blob for an invalid blob, from write_blob for a payload you refuse."""

    def __init__(self, rule: str, pointer: str, message: str) -> None:
        super().__init__(message)
        self.rule, self.pointer = rule, pointer


# ==== YOUR CODE: call your own reader and writer here ========================================
# json.loads keeps integers exact (an addr of 2^64 - 32 stays that integer), and 4096.0 a float.


def read_blob(blob: bytes) -> dict[str, Any]:
    """The decoded form (schema/protocol/decoded.json) of ``blob``, or raise Rejected."""
    raise NotImplementedError("no reader yet")


def write_blob(payload: dict[str, Any]) -> bytes:
    """The blob your writer writes for the decoded form ``payload``, or raise Rejected."""
    raise NotImplementedError("no writer yet")


# ==== end of YOUR CODE ========================================================================


def answer(request: dict[str, Any]) -> dict[str, Any]:
    cmd, seq = request.get("cmd"), request.get("seq")
    if cmd == "start":
        return {"implementation": IMPLEMENTATION, "spec_version": SPEC_VERSION, "roles": ROLES}
    if cmd not in ("read", "write"):  # count, merge and digest are optional: skipped, as is anything unknown
        return {"seq": seq, "skipped": True, "reason": f"unknown command {cmd!r}"}
    try:
        if cmd == "read":
            blob = base64.b64decode(request["blob_b64"], validate=True)
        elif not isinstance(request["payload"], dict):
            raise TypeError("payload is not an object")
    except (KeyError, TypeError, binascii.Error) as exc:
        return {"seq": seq, "errored": True, "message": f"bad {cmd} request: {exc!r}"}
    try:
        if cmd == "read":
            return {"seq": seq, "payload": read_blob(blob)}
        return {"seq": seq, "blob_b64": base64.b64encode(write_blob(request["payload"])).decode("ascii")}
    except NotImplementedError as exc:
        return {"seq": seq, "skipped": True, "reason": str(exc)}
    except Rejected as exc:
        why = {"rule": exc.rule, "message": str(exc)}
        if cmd == "read":
            return {"seq": seq, "rejected": True, "pointer": exc.pointer, **why}
        return {"seq": seq, "errored": True, **why}  # a writer's refusal names the rule it would break


def main() -> int:
    for line in sys.stdin.buffer:  # one request per line; a read of a 64 MiB blob is a ~90 MB line
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as exc:
            reply: dict[str, Any] = {"seq": None, "errored": True, "message": f"request is not JSON: {exc}"}
        else:
            request = request if isinstance(request, dict) else {}
            if request.get("cmd") == "stop":
                return 0
            reply = answer(request)
        sys.stdout.write(json.dumps(reply) + "\n")  # stdout carries protocol lines only: log to stderr
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
