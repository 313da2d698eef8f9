"""Find a figure typed by hand in a page, for ``tools/figures.py --check``.

A figure is a number with a unit of time, size, throughput or count of a run (``12 ms``,
``2.57 MB``, ``16.6 GB/s``, ``80,616 cases``, ``18%``). On the pages every such figure is
written by a script from a run: between figure markers (tools/figures.py) or in another
generator's marked block (the protocol replies, the worked example of docs/upstream-ci.md).
What is left outside them must be no measurement at all: :data:`ALLOWED` lists each kind of
figure that is not one, with its reason, and nothing else passes.
"""

from __future__ import annotations

import re

#: The blocks that scripts write, each from its opening to its closing marker.
GENERATED = re.compile(
    r"<!-- figure: [a-z0-9-]+ -->.*?<!-- /figure -->"
    r"|<!-- generated: (?P<what>[^>]*?) -->.*?<!-- end generated: (?P=what) -->"
    r"|<!-- worked-example: [^>]*-->.*?<!-- end of the generated worked example -->",
    re.S,
)
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_UNITS = (r"ns|us|µs|ms|s|sec|seconds?|minutes?|min|h|hours?|B|bytes|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB"
          r"|[kKMGT]i?B/s|Gbit/s|cases/s|cases|inputs|runs|%")  # fmt: skip
#: A number (or a range of two) and its unit; not inside a word, an identifier or a version.
FIGURE = re.compile(rf"(?<![\w.$/^-]){_NUMBER}(?:\s?(?:-|to)\s?{_NUMBER})?\s?(?:{_UNITS})(?![\w/])")
#: Figures that are not measurements, each with why.
ALLOWED: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"^\d+\s?(?:KiB|MiB|GiB)$"),
        "a whole binary size: a limit of SPEC.md or a size given as input",
    ),
    (
        re.compile(r"^(?:2|4|8|16|32|64|128|256|512|1024)\s?(?:B|bytes)$"),
        "a size of the format, not of a run",
    ),
    (re.compile(r"^\d+(?:kB|KB|MB|GB)$"), "a size written as an input is spelt (--model-bytes 2GB)"),
]
#: Words before a figure that make it a setting, a goal or a limit, not a measurement.
_SETTING = re.compile(
    r"(?:goal|goals|timeout|time-?out|every|delay|backoff|default|at most|up to|within|limit|"
    r"after|budget|settle time|--[a-z-]+[ =]?|=)\W{0,3}(?:of\s|is\s|at\s)?$",
    re.I,
)


def _allowed(figure: str, before: str) -> bool:
    if any(pattern.match(figure) for pattern, _ in ALLOWED):
        return True
    return bool(_SETTING.search(before[-24:]))


def typed_figures(text: str) -> list[tuple[int, str]]:
    """(line, figure) for every figure of ``text`` written outside a generated block that is
    not one of :data:`ALLOWED`, nor a setting, goal or limit by the words before it."""
    blanked = GENERATED.sub(lambda block: "\n" * block[0].count("\n"), text)
    blanked = re.sub(r"`[^`\n]*`", lambda span: " " * len(span[0]), blanked)  # inline code: inputs, flags
    found = []
    for match in FIGURE.finditer(blanked):
        line_start = blanked.rfind("\n", 0, match.start()) + 1
        if not _allowed(match[0], blanked[line_start : match.start()]):
            found.append((blanked.count("\n", 0, match.start()) + 1, match[0]))
    return found
