"""The locks of SPEC.md in ``schema/index.json``, and the readers each side of a SPEC.md change has.

``spec_rules`` locks the facts of each released version's tables, ``spec_text`` its text block
by block (``refitwire.wire.spec_text``): the ref's SPEC.md must agree with them, and a new entry
(a release) must be the working tree's lock. A released version's facts lock never changes. Its
text lock changes only with its text, in the change that edits it: that edit is
SPEC_TEXT_CHANGED, which fails until the baseline acknowledges it, and a text edited without its
lock is named with the lock to write, or the next change's ref would disagree with its own lock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from refitwire.gate._change import Change
from refitwire.gate._errors import GateError
from refitwire.gate._rules import Rule
from refitwire.wire import Registry, parse_version, pointer


def lock_entries(index: dict[str, Any], key: str = "spec_rules") -> dict[str, str]:
    """``version -> sha256`` of the locks an index records under ``key``: ``spec_rules`` (the facts
    of SPEC.md's tables) or ``spec_text`` (its text, block by block)."""
    entries = index.get(key, [])
    try:
        return {str(e["version"]): str(e["sha256"]) for e in entries}
    except (TypeError, KeyError) as exc:
        raise GateError(
            "schema/index.json", f"{key} is not a list of version/sha256 entries: {exc!r}"
        ) from None


#: What each lock of the index covers, as its findings name it.
_LOCKED = {"spec_rules": "rules", "spec_text": "text"}


def locks(key: str, base: Callable[[str], str], work: Callable[[str], str], base_index: dict[str, Any],
          work_index: dict[str, Any], file: str, index_file: str) -> list[tuple[Change, str]]:  # fmt: skip
    """The ``key`` lock of each released version (``base``/``work``: the lock of a version in the
    ref's and the working tree's SPEC.md), and the entries a release adds."""
    out: list[tuple[Change, str]] = []
    what = _LOCKED[key]
    old, new = lock_entries(base_index, key), lock_entries(work_index, key)
    for i, (version, digest) in enumerate(old.items()):
        now = new.get(version)
        if key == "spec_text" and now != digest and now == work(version) != base(version):
            continue  # the lock follows the text: the text's own SPEC_TEXT_CHANGED fails until acknowledged
        if key == "spec_text" and now == digest != work(version):
            detail = (
                f"SPEC.md's text of released {version} changed but its lock did not: an acknowledged "
                f"editorial change writes the new lock into {index_file} (spec_text {version}: {work(version)})"
            )
            out.append((Change(Rule.RELEASE_ENTRY_MISMATCH, pointer(key, i), "", detail, digest, work(version)),
                        index_file))  # fmt: skip
        if now != digest:
            detail = f"the {key} lock of released {version} changed ({digest[:12]} -> {now})"
            change = Change(
                Rule.RELEASED_FILE_MODIFIED, pointer(key, i), "", detail, digest, new.get(version)
            )
            out.append((change, index_file))
        if base(version) != digest:  # the ref's own SPEC.md already disagrees with its lock
            detail = (
                f"at the ref, SPEC.md's {what} of {version} are {base(version)[:12]}, locked {digest[:12]}"
            )
            out.append((Change(Rule.RELEASED_FILE_MODIFIED, pointer(key, i), "", detail, digest, None), file))
    for i, (version, digest) in enumerate(new.items()):
        if version in old:
            continue
        if digest != work(version):
            detail = f"new {key} entry {version}: sha256 {digest[:12]} is not SPEC.md's {what}' {work(version)[:12]}"
            out.append(
                (Change(Rule.RELEASE_ENTRY_MISMATCH, pointer(key, i), "", detail, None, digest), index_file)
            )
    return out


def sides(
    registry: Registry, ref_text: str, work_text: str, candidates: list[tuple[str, Any]]
) -> tuple[Registry, Registry]:
    """``registry`` as the ref's SPEC.md and as the working tree's say (with its candidate schema
    files): the readers every SPEC witness is checked with, each at its side's limits and sizes."""
    ref, work = (
        dataclasses.replace(registry, spec_text=ref_text),
        dataclasses.replace(registry, spec_text=work_text),
    )
    for version, schema in candidates:
        kind = (
            str(schema.get("$id", "")).removeprefix("urn:refitwire:schema:").split(":")[0]
            if isinstance(schema, dict)
            else ""
        )
        if kind in work.documents and parse_version(version) is not None:
            try:
                work = work.with_resource(kind, version, schema)
            except ValueError:  # a schema the model cannot compile: its findings say why
                continue
    return ref, work
