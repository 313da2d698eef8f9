"""The adapter testee's process plumbing: its protocol stdout, the collector around each
request, and the text of an answer. Standard library only (it runs inside the upstream
environments, beside ``adapter_testee.py``)."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["adapter_options", "answer_text", "collector", "protocol_stdout"]


def protocol_stdout() -> io.TextIOWrapper:
    """Keep fd 1 for protocol lines only; anything else printing to stdout
    (Python or native code) lands on stderr instead."""
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return io.TextIOWrapper(os.fdopen(proto_fd, "wb"), encoding="utf-8", newline="\n", write_through=True)


@contextlib.contextmanager
def collector(*, on: bool) -> Iterator[None]:
    """The cyclic collector on or off for a block, and as it was after it.

    ``main`` turns it off for each request: this file's own work (reading the request, the image
    of what upstream returned, the reply) makes millions of acyclic objects at the limit, and
    collections walking them and upstream's live result took 3.7 of a read's 7.6 s. Upstream's
    own calls turn it back on, so upstream's time is its own. It frees cycles only, so no answer
    changes."""
    was = gc.isenabled()
    if on:
        gc.enable()
    else:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def answer_text(answer: dict[str, Any]) -> str:
    try:
        return json.dumps(answer, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:  # pragma: no cover - json_image guards this
        return json.dumps(
            {"seq": answer.get("seq"), "errored": True, "message": f"unserializable answer: {exc}"}
        )


def adapter_options(argv: list[str], levels: tuple[str, ...]) -> dict[str, Any]:
    """``--source DIR`` and ``--version V`` (both or neither), ``--spec-version V`` (what to declare)
    and ``--member LEVEL:NAME`` (repeated: a member V adds); anything else is a usage error."""
    found: dict[str, Any] = {"members": []}
    rest = list(argv)
    while rest:
        flag = rest.pop(0)
        if flag not in ("--source", "--version", "--spec-version", "--member") or not rest:
            raise SystemExit(
                "adapter_testee.py: usage: [--source DIR --version V] [--spec-version V] "
                f"[--member LEVEL:NAME ...] (got {flag!r})"
            )
        value = rest.pop(0)
        if flag == "--member":
            level, _, name = value.rpartition(":")
            if level not in levels or not name:
                raise SystemExit(f"adapter_testee.py: --member {value!r}: LEVEL:NAME, LEVEL one of {levels}")
            found["members"].append((level, name))
        else:
            found[flag] = value
    if ("--source" in found) != ("--version" in found):
        raise SystemExit("adapter_testee.py: --source and --version go together")
    return found
