"""What a release must keep: locked files, an index that agrees with them, and well-named versions.

* released files (the ref's index) keep their bytes and their index entry;
* a new index entry (a release in this change) names a file that exists, whose sha256,
  file name, ``x-spec-version`` and ``$id`` all say the same version, in three-part semver;
* every schema file under ``schema/<document>/`` is named ``MAJOR.MINOR.PATCH.json`` (anything
  else is a usage error, one line) and stamped with that version;
* a new folder under ``schema/`` that the index does not name is reported, never skipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from refitwire.gate._change import Change
from refitwire.gate._document import Document, load_document
from refitwire.gate._errors import GateError
from refitwire.gate._rules import Rule
from refitwire.gate._walk import diff
from refitwire.wire import parse_version, pointer, show_pointer

#: Folders under schema/ that hold no versioned documents.
NOT_DOCUMENTS = frozenset({"protocol", "vectors"})


def load_index(source: str, data: bytes) -> dict[str, Any]:
    try:
        index = json.loads(data)
        documents = index["documents"]
        for entries in documents.values():
            for entry in entries:
                entry["version"], entry["path"], entry["sha256"]
    except RecursionError:
        raise GateError(source, "not a schema index: nested too deep") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GateError(source, f"not a schema index: {exc!r}") from None
    return dict(index)


def version_of_file(relative: str) -> str:
    """The version a schema file's name says; GateError (one line) for any other name."""
    stem = Path(relative).name.removesuffix(".json")
    if parse_version(stem) is None:
        raise GateError(relative, f"{stem!r} is not a version: schema files are named MAJOR.MINOR.PATCH.json")
    return stem


def stamps(document: Document, relative: str, kind: str, version: str) -> list[tuple[Change, str]]:
    """Disagreements between a file's name, its ``x-spec-version`` and its ``$id``."""
    out = []
    expected_id = f"urn:refitwire:schema:{kind}:{version}"
    if document.version != version:
        detail = f"file name says {version}, x-spec-version says {document.version!r}"
        out.append(
            (
                Change(Rule.VERSION_STAMP_MISMATCH, "/x-spec-version", "", detail, version, document.version),
                relative,
            )
        )
    schema_id = document.schema.get("$id")
    if schema_id is not None and schema_id != expected_id:
        detail = f"$id is {schema_id!r}, the file name says {expected_id!r}"
        out.append(
            (Change(Rule.VERSION_STAMP_MISMATCH, "/$id", "", detail, expected_id, schema_id), relative)
        )
    return out


def locked(
    old: Document, entry: dict[str, Any], work_dir: Path, folder: str, kind: str, i: int, now: Any
) -> list[tuple[Change, str]]:
    """Findings for one released file: gone, changed bytes, or a changed index entry."""
    relative, path = f"{folder}/{entry['path']}", work_dir / entry["path"]
    out = []
    if not path.is_file():
        detail = f"released {kind} {entry['version']} ({relative}) is gone"  # placed on its index entry
        removed = Change(
            Rule.RELEASED_FILE_REMOVED, pointer("documents", kind, i), "", detail, entry["sha256"], None
        )
        out.append((removed, f"{folder}/index.json"))
    else:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            try:
                changes = [
                    f"{c.rule} at {show_pointer(c.pointer)}" for c in diff(old, load_document(relative, data))
                ]
            except GateError as exc:
                changes = [f"no longer a schema document ({exc.detail})"]
            detail = f"sha256 {digest[:12]} != released {entry['sha256'][:12]}; " + (
                "; ".join(changes) if changes else "no schema-level change (bytes only)"
            )
            out.append(
                (Change(Rule.RELEASED_FILE_MODIFIED, "", "", detail, entry["sha256"], digest), relative)
            )
    if now != entry:
        detail = f"index entry of released {kind} {entry['version']} changed"
        out.append(
            (
                Change(Rule.RELEASED_FILE_MODIFIED, pointer("documents", kind, i), "", detail, entry, now),
                f"{folder}/index.json",
            )
        )
    return out


def new_entries(
    base_index: dict[str, Any], work_index: dict[str, Any], work_dir: Path, folder: str
) -> list[tuple[Change, str]]:
    """Checks of the index entries this change adds (a release)."""
    out = []
    where = f"{folder}/index.json"
    for kind, entries in work_index.get("documents", {}).items():
        released = {e["version"] for e in base_index["documents"].get(kind, [])}
        for i, entry in enumerate(entries):
            if entry["version"] in released:
                continue
            at, version = pointer("documents", kind, i), entry["version"]
            problems = []
            if parse_version(version) is None:
                problems.append(f"version {version!r} is not MAJOR.MINOR.PATCH")
            if entry["path"] != f"{kind}/{version}.json":
                problems.append(f"path {entry['path']!r} is not {kind}/{version}.json")
            path = work_dir / entry["path"]
            if not path.is_file():
                problems.append(f"{folder}/{entry['path']} does not exist")
            else:
                data = path.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                if digest != entry["sha256"]:
                    problems.append(f"sha256 {entry['sha256'][:12]} is not the file's {digest[:12]}")
                document = load_document(f"{folder}/{entry['path']}", data)
                problems += [c.detail for c, _ in stamps(document, "", kind, version)]
            if problems:
                detail = f"new index entry {kind} {version}: " + "; ".join(problems)
                out.append((Change(Rule.RELEASE_ENTRY_MISMATCH, at, "", detail, None, entry), where))
    return out


def unknown_folders(
    base_files: set[str], work_dir: Path, folder: str, base_index: dict[str, Any], work_index: dict[str, Any]
) -> list[tuple[Change, str]]:
    """New folders of JSON files under schema/ that no index names."""
    known = set(base_index["documents"]) | set(work_index.get("documents", {})) | NOT_DOCUMENTS
    out = []
    for sub in sorted(p for p in work_dir.iterdir() if p.is_dir()) if work_dir.is_dir() else []:
        at_ref = any(f.startswith(f"{folder}/{sub.name}/") for f in base_files)
        if sub.name in known or at_ref or not any(sub.glob("*.json")):
            continue
        first = sorted(sub.glob("*.json"))[0]
        detail = f"{folder}/{sub.name}/ holds schema files but no index names the document {sub.name!r}"
        out.append(
            (
                Change(Rule.DOCUMENT_UNKNOWN, "", "", detail, None, sub.name),
                f"{folder}/{sub.name}/{first.name}",
            )
        )
    return out
