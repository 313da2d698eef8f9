"""Breaks in a later object of the table: every rule each member inside the table can break,
once more in the last shard of the second tensor of a table whose first tensor has one shard
and the second two (``/tensors/1/shards/1/addr``), everything else valid.

Every other generated break sits in the first object of its level, so a reader that checks only
the first tensor, or only as many shards as the first tensor has, passed them all (a red-team
mutant of the JavaScript example). One vector per member and rule is enough to tell: the
break's value, rule and versions are those of the first such vector (a Required one where there
is one, so the moved break is Required where the released readers reject it), moved; the
reference is asked again, and a vector it judges otherwise is left out, counted.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from _vector_kit import first_violation, vector
from _vector_model import DOCUMENT, base, get, model, put, text
from _vector_upstream import upstream_verdict
from refitwire.wire import pointer, tokens, version_key

#: The kinds of vector whose break is a value at its pointer (not a spelling of the JSON text).
_BY_VALUE = ("type", "keyword")


def later_object_vectors(invalid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One vector per (member inside the table, rule) of ``invalid``, its break moved to the last object."""
    doc, table = _later_table(), model().table_at()
    inside = pointer(table[-1], 0) + "/"
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for v in invalid:
        if not any(tag in v["tags"] for tag in _BY_VALUE):
            continue
        newest = v["expect"][max(v["expect"], key=version_key)]
        if newest["valid"] or not newest["pointer"].startswith(inside):
            continue
        member = next((t for t in v["tags"] if t.startswith("member:")), newest["pointer"])
        held = chosen.setdefault((member, newest["rule"]), v)
        if held["tier"] != "required" and v["tier"] == "required":  # one every released reader rejects
            chosen[member, newest["rule"]] = v
    found, judged_otherwise = [], 0
    for v in chosen.values():
        built = _moved(v, doc)
        if built is None:
            judged_otherwise += 1
        else:
            found.append(built)
    if judged_otherwise:
        print(f"{judged_otherwise} later-object vectors left out: the reference judges them otherwise")
    return found


def _later_table() -> dict[str, Any]:
    """``base()`` (one tensor, one shard) with a second tensor (another name) holding two shards,
    replicas of the first (a table may hold replicas): so every object of the table has a later
    one, and the second tensor more shards than the first."""
    doc = base()
    table = model().table_at()
    shards = model().table_at(*table)[-1]
    first = doc[table[-1]][0]
    second = copy.deepcopy(first)
    second["name"] = f"{first['name']}.later"
    second[shards] = [first[shards][0], copy.deepcopy(first[shards][0])]
    doc[table[-1]].append(second)
    return doc


def _later(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """``path`` with each index into a level of the table (``tensors/0``, ``shards/0``) made 1."""
    tensors = model().table_at()
    levels, level, out = (tensors, model().table_at(*tensors)), (), list(path)
    for i, step in enumerate(path[:-1]):
        if isinstance(step, str) and (*level, step) in levels and path[i + 1] == 0:
            level = (*level, step)
            out[i + 1] = 1
    return tuple(out)


def _moved(v: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any] | None:
    """Vector ``v``'s break put in the last object of ``doc``'s table, or None when the reference
    does not judge it as ``v`` says (a break that depends on its neighbours, say)."""
    newest = v["expect"][max(v["expect"], key=version_key)]
    path = _path(newest["pointer"])
    original = json.loads(v["blob"]) if "blob" in v else None
    if original is None:
        return None
    later, moved = copy.deepcopy(doc), _later(path)
    put(later, moved, get(original, path))
    blob = text(later)
    invalid: dict[str, tuple[str, str]] = {}
    for version, expect in v["expect"].items():
        if not expect["valid"]:
            invalid[version] = (expect["rule"], pointer(*_later(_path(expect["pointer"]))))
        if first_violation(blob, version) != invalid.get(version):
            return None
    description = f"{pointer(*moved)}, in a later object of the table: {v['description']}"
    return vector(description, blob, invalid=invalid, upstream=upstream_verdict(DOCUMENT, blob),
                  tags=[*v["tags"], "later-object"])  # fmt: skip


def _path(at: str) -> tuple[str | int, ...]:
    return tuple(int(t) if t.isdigit() else t for t in tokens(at))
