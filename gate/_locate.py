"""Where a JSON pointer's value starts in a JSON text: (line, column), both from 1.

A small scanner over the text (strings, numbers, literals, objects, arrays) that follows
the pointer's tokens; SARIF regions and GitHub annotations use it to place a finding on
the line of the schema file it concerns. A pointer that does not resolve gives the
deepest position that does, and text that is not JSON gives (1, 1).
"""

from __future__ import annotations

import json
from pathlib import Path

from refitwire.wire import is_index, tokens

_DECODER = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _skip_value(text: str, i: int) -> int:
    """The index just past the JSON value starting at ``i``."""
    _, end = _DECODER.raw_decode(text, i)
    return int(end)


def offset_of(text: str, pointer: str) -> int:
    i = _skip_ws(text, 0)
    try:
        for token in tokens(pointer):
            if text[i] == "{":
                start, i = i, _skip_ws(text, i + 1)
                while text[i] != "}":
                    key, i = _DECODER.raw_decode(text, i)
                    i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
                    if key == token:
                        break
                    i = _skip_ws(text, _skip_value(text, i))
                    i = _skip_ws(text, i + 1) if text[i] == "," else i
                else:
                    return start
            elif text[i] == "[" and is_index(token):
                i = _skip_ws(text, i + 1)
                start = i
                for _ in range(int(token)):
                    i = _skip_ws(text, _skip_value(text, i))
                    if text[i] != ",":
                        return start
                    i = _skip_ws(text, i + 1)
            else:
                return i
    except (IndexError, ValueError, RecursionError):
        return 0
    return i


def line_column(text: str, pointer: str) -> tuple[int, int]:
    offset = offset_of(text, pointer)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def locate(root: Path, file: str, pointer: str) -> tuple[int, int] | None:
    """(line, column) of ``pointer`` in ``root/file``; None when the file cannot be read."""
    try:
        text = (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return line_column(text, pointer)
