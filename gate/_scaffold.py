"""Making a version: ``refitwire schema new VERSION`` and ``refitwire schema release VERSION``.

``new`` copies the newest version of every document to VERSION (``$id``, ``x-spec-version``
restamped; a new major also gets a new wire id) and adds a SPEC.md table row to fill in.
``release`` writes VERSION's index entries (path, sha256, date) after checking that the
file name, ``x-spec-version`` and ``$id`` agree, which is what the gate checks on the
pull request that releases it.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from refitwire.gate._document import load_document
from refitwire.gate._errors import GateError
from refitwire.gate._release import load_index, stamps
from refitwire.wire import SpecError, parse_spec, parse_version, spec_text

_ROW = re.compile(r"^\| (\d+\.\d+\.\d+) \| .*\|$")


def _index(schema_dir: Path) -> dict[str, Any]:
    path = schema_dir / "index.json"
    try:
        return load_index(str(path), path.read_bytes())
    except OSError as exc:
        raise GateError(str(path), exc.strerror or "cannot read") from None


def _newest(folder: Path) -> Path:
    files = [(parse_version(p.stem), p) for p in folder.glob("*.json")]
    found = [(key, p) for key, p in files if key is not None]
    if not found:
        raise GateError(str(folder), "no versioned schema file to start from")
    return max(found)[1]


def wire_id_for(major: int) -> str:
    return f"mx.reshard.shard_table.v{major}"


def new_version(schema_dir: Path, version: str) -> list[Path]:
    """Scaffold ``version`` from the newest file of each document; the paths written."""
    key = parse_version(version)
    if key is None:
        raise GateError(version, "not a version: MAJOR.MINOR.PATCH")
    written = []
    for kind in _index(schema_dir)["documents"]:
        source = _newest(schema_dir / kind)
        if (parse_version(source.stem) or ()) >= key:
            raise GateError(version, f"not newer than {kind} {source.stem}")
        schema = json.loads(source.read_text(encoding="utf-8"))
        schema["$id"] = f"urn:refitwire:schema:{kind}:{version}"
        schema["x-spec-version"] = version
        if key[0] > (parse_version(source.stem) or (0,))[0]:  # a new major line: a new wire id
            schema["x-wire-id"] = wire_id_for(key[0])
            member = schema.get("properties", {}).get("schema", {})
            if "const" in member:
                member["const"] = wire_id_for(key[0])
        target = schema_dir / kind / f"{version}.json"
        target.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    spec = schema_dir / "SPEC.md"
    if spec.is_file():
        lines = spec.read_text(encoding="utf-8").splitlines()
        rows = [i for i, line in enumerate(lines) if _ROW.match(line)]
        if rows:
            lines.insert(rows[-1] + 1, f"| {version} | (fill in: what {version} adds) |")
            spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
            written.append(spec)
    return written


def release(schema_dir: Path, version: str, today: datetime.date | None = None) -> list[dict[str, Any]]:
    """Add ``version``'s index entries; the entries written."""
    if parse_version(version) is None:
        raise GateError(version, "not a version: MAJOR.MINOR.PATCH")
    index = _index(schema_dir)
    entries = []
    for kind, listed in index["documents"].items():
        if any(e["version"] == version for e in listed):
            raise GateError(version, f"{kind} {version} is already released")
        relative = f"{kind}/{version}.json"
        path = schema_dir / relative
        try:
            data = path.read_bytes()
        except OSError:
            raise GateError(str(path), f"no such file: run `refitwire schema new {version}` first") from None
        problems = stamps(load_document(str(path), data), str(path), kind, version)
        if problems:
            raise GateError(str(path), "; ".join(c.detail for c, _ in problems))
        day = (today or datetime.date.today()).isoformat()
        entry = {
            "version": version,
            "path": relative,
            "sha256": hashlib.sha256(data).hexdigest(),
            "released": day,
        }
        listed.append(entry)
        entries.append(entry)
    spec = schema_dir / "SPEC.md"
    if spec.is_file():  # the rules the version is released with, locked beside its files
        try:
            rules = parse_spec(spec.read_text(encoding="utf-8"))
        except SpecError as exc:
            raise GateError(str(spec), str(exc)) from None
        index.setdefault("spec_rules", []).append({"version": version, "sha256": rules.lock(version)})
        text = spec_text(spec.read_text(encoding="utf-8"), rules.versions[0] if rules.versions else version)
        index.setdefault("spec_text", []).append({"version": version, "sha256": text.lock(version)})
    latest = index.get("latest")
    if not isinstance(latest, str) or (parse_version(latest) or ()) < (parse_version(version) or ()):
        index["latest"] = version
    (schema_dir / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return entries
