"""Build docs/coverage.md: every (rule, place) the golden vectors must cover, and the vectors that do.

Run: python tools/build_coverage.py [--check]. The cells are enumerated from the wire model
(every member and item kind at every level: TYPE, its ``x-rule``, INTEGER_LITERAL where it holds
integers, REQUIRED where it is required) and from SPEC.md's rule tables of sections 2.1 to 2.3
(the rules of the encoding and the geometry, at the places their vectors name), plus one cell
per dtype label of section 4 (ELSIZE_DTYPE). Each invalid vector fills the cell of the rule and
pointer it expects at every version (indices written ``*``). tests/test_vector_coverage.py fails
when a cell is empty or this file is stale.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path
from typing import Any

import _clone
from refitwire import wire
from refitwire._spec import dtype_sizes
from refitwire.wire import NO_CONST, general_pointer, join

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "coverage.md"
#: Rules one blob cannot show, with where they are covered instead.
ELSEWHERE = {
    "BLOB_SIZE": "built at run time (size:at-limit, size:over-limit)",
    "DUPLICATE_KEYS": "a reader rule about repeated names (legal-forms, tag duplicate-keys)",
}


def required_cells() -> dict[tuple[str, str], str]:
    """(rule, place) -> what the cell is about, for every cell the vectors must fill."""
    model = _clone.registry().newest_model("rendezvous")
    cells: dict[tuple[str, str], str] = {}
    for member in model.members():
        at = member.place
        if member.const is NO_CONST and member.types:  # a constant's other values break its own rule
            cells[("TYPE", at)] = "a value of a wrong JSON type"  # (SPEC 2.7 step 2); any type: none
        if member.const is not NO_CONST or member.pattern is not None or member.bounds != (None, None):
            # the rule a break names: the member's x-rule, else the nearest one around it (rule_at)
            cells[(model.rule_at("maximum", member.first_path()), at)] = (
                "a value outside its constant, pattern or bounds"
            )
        if member.required:
            cells[("REQUIRED", at)] = "the member left out"
        if member.types == ("integer",):
            cells[("INTEGER_LITERAL", at)] = "an integer written with a fraction or exponent"
        if member.items is not None:
            cells[("TYPE", join(at, "*"))] = "an item of a wrong JSON type"
            if member.holds_integers:
                if member.items.bounds != (None, None):  # (unbounded items have no value outside them)
                    cells[(model.rule_at("maximum", member.first_path(item=True)), join(at, "*"))] = (
                        "an item outside its bounds"
                    )
                cells[("INTEGER_LITERAL", join(at, "*"))] = "an item written with a fraction or exponent"
    spec = (ROOT / "schema" / "SPEC.md").read_text(encoding="utf-8")
    for section in ("2.1", "2.3"):
        body = spec.split(f"### {section} ")[1].split("\n### ")[0]
        for rule in re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", body, flags=re.M):
            if rule not in ELSEWHERE:
                cells[(rule, "(any)")] = f"SPEC {section}"
    for label in dtype_sizes(_clone.registry()):
        cells[("ELSIZE_DTYPE", f"dtype {label}")] = f"{label} with another element size"
    return cells


def covering(vectors: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """(rule, place) -> the IDs of the vectors that expect that rule there."""
    model = _clone.registry().newest_model("rendezvous")
    found: dict[tuple[str, str], list[str]] = {}
    for v in vectors:
        if v["document"] != "rendezvous":
            continue
        keys = set()
        for outcome in v["expect"].values():
            if outcome["valid"]:
                continue
            rule, at = outcome["rule"], outcome["pointer"]
            keys.add((rule, "(any)"))
            keys.add((rule, general_pointer(at)))
            if rule == "REQUIRED":
                keys |= _missing(v, at, model)
            if rule == "ELSIZE_DTYPE":
                dtype = json.loads(v["blob"])["tensors"][int(wire.tokens(at)[1])]["dtype"]
                keys.add((rule, f"dtype {dtype.removeprefix('torch.')}"))
        for key in keys:
            found.setdefault(key, []).append(v["id"])
    return found


def _missing(v: dict[str, Any], at: str, model: wire.WireModel) -> set[tuple[str, str]]:
    """The REQUIRED cells of the members a vector's object lacks."""
    raw = v["blob"].encode() if "blob" in v else base64.b64decode(v["blob_b64"])
    try:
        obj: Any = json.loads(raw)
    except RecursionError:  # a nesting vector read by a version that requires a member it lacks
        return set()
    for token in wire.tokens(at):
        obj = obj[int(token)] if isinstance(obj, list) else obj[token]
    level = model.levels.get(tuple(t for t in wire.tokens(at) if not wire.is_index(t)))
    if level is not None:
        names: Any = level.required
    else:  # an object member's own object (no level of the model): its schema's required list
        member = model.at(wire.path_of(at))
        names = member.schema.get("required", []) if member is not None else []
    return {("REQUIRED", join(general_pointer(at), name)) for name in names if name not in obj}


def table() -> tuple[str, list[tuple[str, str]]]:
    from _coverage_musts import must_rows
    from _vector_kit import OUT

    vectors = [v for name in ("legal-forms.json", "invalid.json")
               for v in json.loads((OUT / name).read_text(encoding="utf-8"))["vectors"]]  # fmt: skip
    cells, found = required_cells(), covering(vectors)
    spec = (ROOT / "schema" / "SPEC.md").read_text(encoding="utf-8")
    empty = [key for key in cells if not found.get(key)]
    lines = [
        "# Conformance coverage",
        "",
        "Generated by `python tools/build_coverage.py` from the wire model and SPEC.md; do not edit.",
        "Each row is a (rule, place) the golden vectors must cover: every member and item kind at",
        "every level (its type, its rule, INTEGER_LITERAL for integers, REQUIRED when required), every",
        "rule of SPEC sections 2.1 and 2.3, and every dtype label of section 4. A place is a JSON",
        "pointer with indices written `*`. `tests/test_vector_coverage.py` fails on an empty row.",
        "",
        f"{len(cells)} cells, {len(cells) - len(empty)} covered.",
        "",
        "| rule | place | about | vectors |",
        "|---|---|---|---|",
    ]
    for (rule, at), about in sorted(cells.items()):
        ids = sorted(found.get((rule, at), []))
        lines.append(f"| `{rule}` | `{at}` | {about} | {len(ids)}: {' '.join(ids) if ids else '**none**'} |")
    lines += ["", "Covered elsewhere:", ""]
    lines += [f"- `{rule}`: {where}" for rule, where in ELSEWHERE.items()]
    rules = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", spec, flags=re.M))
    written = json.loads((OUT / "writer-output.json").read_text(encoding="utf-8"))["vectors"]
    must, gaps = must_rows(written + vectors, rules)
    lines += [
        "",
        "## Every MUST",
        "",
        "Each MUST and MUST NOT sentence of SPEC.md and compat/IMPLEMENTERS.md (read from the text;",
        "its ID is the document, its rule or section, and a hash of its words), the rules it",
        "concerns, and the cases that fail an implementation that breaks it: on the read side the",
        "vectors that expect the rule, on the write side the refusals of it and the golden payloads",
        "whose written blob is checked for it. A sentence with no case fails `--check`.",
        "",
        f"{len(must) - 2} sentences, {len(must) - 2 - len(gaps)} with cases.",
        "",
        *must,
    ]
    return "\n".join(lines) + "\n", empty + [("MUST", gap) for gap in gaps]


def main(argv: list[str]) -> int:
    text, empty = table()
    if "--check" in argv:
        if DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC.name}: rebuilding changes it (run python tools/build_coverage.py)")
            return 1
    else:
        _clone.writable()
        DOC.write_text(text, encoding="utf-8")
    for rule, at in empty:
        print(f"no case covers the sentence {at}" if rule == "MUST" else f"no vector covers {rule} at {at}")
    return 1 if empty else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
