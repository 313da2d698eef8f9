"""Carry every list keyed by case IDs over to the cases' IDs now, and fail on a stale entry.

python tools/carry_case_ids.py [--snapshot FILE | --previous FILE | --check]

A case's ID names what it tests (a vector's document and description, a refusal's rule and
break), so a member added to the schema renames nothing. An ID still changes when its name
does (a description reworded, a case of the old form ``v-<sha256 of the blob>``): this tool
finds each listed ID's case again and rewrites the lists, which are

* ``compat/expected-failures/*.json`` (each entry's ``case``; two entries that become one
  case in the same role are merged, their ``spec_versions`` joined);
* ``tools/upstream-verdicts.json``'s ``failures`` and ``writes`` (by case ID; ``verdicts``
  and ``counts`` are kept by the blob's own hash, as what was measured);
* the IDs the prose cites: ``README.md``, ``compat/IMPLEMENTERS.md``, ``docs/*.md``
  (``docs/coverage.md`` is rebuilt from the vectors).

A listed ID is found again by, in order: being a case's ID now; the vector of that ID in the
files before the build (``--snapshot`` records them, ``--previous`` reads them back), by its
name and then by its bytes; a case whose bytes or payload hash to it in the old form
(``v-``/``m-`` of the blob or tables, ``refuse:RULE-`` of the payload). One found nowhere is
stale: this tool, and so ``python tools/regenerate.py`` and its ``--check``, fails naming it.

``--snapshot FILE`` records the vector files as they are and carries what their names give
(run before the builds); ``--previous FILE`` carries and checks after them; ``--check``
writes nothing and fails when a list would change or holds a stale entry.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import _clone
from _vector_kit import content_key
from refitwire import wire
from refitwire.compat.cases._built_cases import refusal_cases
from refitwire.compat.cases._cases import content_id, name_id
from refitwire.compat.runner._expected import known_cases, stale

ROOT = _clone.ROOT
VECTORS = ROOT / "schema" / "vectors"
LISTS = sorted((ROOT / "compat" / "expected-failures").glob("*.json"))
VERDICTS = ROOT / "tools" / "upstream-verdicts.json"
PROSE = [ROOT / "README.md", ROOT / "compat" / "IMPLEMENTERS.md",
         *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "coverage.md")]  # fmt: skip
#: A vector's, a merge vector's or a refusal's ID, wherever it is written (``read:v-…#rule``).
TOKEN = re.compile(r"(?<![\w-])(?:[vm]-[0-9a-f]{12}|refuse:[A-Z][A-Z0-9_]*-[0-9a-f]{12})(?![\w-])")


def vectors() -> list[dict[str, Any]]:
    """Every vector of the files as they are, each with its ``id``, name and content keys."""
    found = []
    for path in sorted(VECTORS.glob("*.json")):
        if path.name == "vector.schema.json":
            continue
        for v in json.loads(path.read_text(encoding="utf-8"))["vectors"]:
            found.append({"id": v["id"], "name": name_id("v", v["document"], v["description"]),
                          "content": content_key(v)})  # fmt: skip
    merge = VECTORS / "merge" / "merge.json"
    if merge.exists():
        for v in json.loads(merge.read_text(encoding="utf-8"))["vectors"]:
            found.append({"id": v["id"], "name": name_id("m", v["description"]),
                          "content": content_id("m", v["tables"])})  # fmt: skip
    return found


def aliases(previous: list[dict[str, Any]], registry: wire.Registry, *, built: bool) -> dict[str, str]:
    """Listed ID -> the ID of its case now. ``built``: the vector files hold this build's IDs
    (else they are the previous build's, and a vector's ID now is the one its name gives)."""
    now = vectors()
    current = {v["id"] if built else v["name"]: v for v in now}
    by_name = {v["name"]: i for i, v in current.items()}
    by_content = {v["content"]: i for i, v in current.items()}
    found: dict[str, str] = {}
    for old in [*previous, *now]:  # before the build, by name, then by bytes
        target = by_name.get(old["name"]) or by_content.get(old["content"])
        if target is not None:
            found.update({old["id"]: target, old["name"]: target})
    found.update((content, i) for content, i in by_content.items())
    for version in registry.released_versions():
        for case in refusal_cases(version, registry):
            found[content_id(f"refuse:{case.rule}", case.payload)] = case.id
    return {old: new for old, new in found.items() if old != new}


def carried(text: str, alias: dict[str, str]) -> str:
    return TOKEN.sub(lambda m: alias.get(m[0], m[0]), text)


def carry_list(data: dict[str, Any], alias: dict[str, str]) -> dict[str, Any]:
    """An expected-failure file with each entry's case carried; entries that become one are merged."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in data["expected_failures"]:
        entry = {**entry, "case": carried(entry["case"], alias)}
        key = (entry["role"], entry["case"])
        if key not in merged:
            merged[key] = entry
            continue
        first = merged[key]  # one case of several versions, listed once per version before
        if "spec_versions" in first and "spec_versions" in entry:
            versions = sorted({*first["spec_versions"], *entry["spec_versions"]}, key=wire.version_key)
            first["spec_versions"] = versions
        else:
            first.pop("spec_versions", None)  # one of them applies to every version
    entries = list(merged.values())
    if data["expected_failures"] == sorted(data["expected_failures"], key=_order):
        entries.sort(key=_order)  # a sorted list (tools/build_vectors.py writes one) stays sorted
    return {**data, "expected_failures": entries}


def _order(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["case"].split(":")[0], entry["case"]


def carry_verdicts(data: dict[str, Any], alias: dict[str, str]) -> dict[str, Any]:
    out = dict(data)
    for key in ("failures", "writes"):
        if isinstance(data.get(key), dict):
            out[key] = dict(sorted((carried(k, alias), v) for k, v in data[key].items()))
    return out


def rewrites(alias: dict[str, str]) -> dict[Path, str]:
    """Each file the lists live in -> its text with every ID carried (changed or not)."""
    texts: dict[Path, str] = {}
    for path in LISTS:
        data = json.loads(path.read_text(encoding="utf-8"))
        texts[path] = json.dumps(carry_list(data, alias), indent=2, ensure_ascii=False) + "\n"
    if VERDICTS.exists():
        data = json.loads(VERDICTS.read_text(encoding="utf-8"))
        texts[VERDICTS] = json.dumps(carry_verdicts(data, alias), indent=1) + "\n"
    for path in PROSE:
        if path.exists():
            texts[path] = carried(path.read_text(encoding="utf-8"), alias)
    return texts


def stale_entries(registry: wire.Registry, texts: dict[Path, str]) -> list[str]:
    """``FILE: ID`` for each listed ID that no case has (in the role it is listed for)."""
    known = known_cases(registry)
    out = []
    for path in LISTS:
        name = json.loads(texts[path]).get("implementation", path.stem)
        entries = json.loads(texts[path])["expected_failures"]
        listed = [(name, e["role"], e["case"]) for e in entries]
        out += [f"{path.relative_to(ROOT)}: {case} ({role})" for _, role, case in stale(listed, known)]
    bare = {found[0] for case in known if (found := TOKEN.search(case))}
    for path in PROSE:
        if path in texts:
            out += [
                f"{path.relative_to(ROOT)}: {token}"
                for token in sorted(set(TOKEN.findall(texts[path])) - bare)
            ]
    return out


def main(argv: list[str]) -> int:
    registry = _clone.registry()
    snapshot, previous = (
        argv[argv.index(flag) + 1] if flag in argv else None for flag in ("--snapshot", "--previous")
    )
    if snapshot is not None:  # before the builds: the files' vectors, and what their names give
        Path(snapshot).write_text(json.dumps(vectors()), encoding="utf-8")
    before = json.loads(Path(previous).read_text(encoding="utf-8")) if previous else []
    alias = aliases(before, registry, built=snapshot is None)
    texts = rewrites(alias)
    changed = [path for path, text in texts.items() if path.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in changed:
            print(f"{path.relative_to(ROOT)}: holds case IDs of another form: run python tools/regenerate.py",
                  file=sys.stderr)  # fmt: skip
    else:
        _clone.writable()
        for path in changed:
            path.write_text(texts[path], encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: case IDs carried over")
    if snapshot is not None:
        return 0  # the cases are checked once the builds have run
    found = stale_entries(registry, texts)
    for line in found:
        print(f"{line}: no case has this ID; remove the entry or name the case it meant", file=sys.stderr)
    return 1 if found or ("--check" in argv and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
