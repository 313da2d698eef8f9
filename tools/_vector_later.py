"""Breaks in a later object of the table: every rule each member inside the table can break,
once more in the last shard of the second tensor of a table whose first tensor has one shard
and the second two (``/tensors/1/shards/1/addr``), everything else valid.

Every other generated break sits in the first object of its level, so a reader that checks only
the first tensor, or only as many shards as the first tensor has, passed them all (a red-team
mutant of the JavaScript example). One vector per member and rule is enough to tell: the
break's value, rule and versions are those of a vector of that member and rule, moved (the first whose
moved break every released reader rejects, so it is Required, else the first); the reference is
asked again, and a vector it judges otherwise is left out, counted.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from _vector_kit import first_violation, vector
from _vector_model import DOCUMENT, base, get, model, put, text
from _vector_upstream import upstream_verdict
from refitwire.wire import path_of, pointer, version_key

#: The kinds of vector whose break is a value at its pointer (not a spelling of the JSON text).
_BY_VALUE = ("type", "keyword")


def later_object_vectors(invalid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One vector per (member inside the table, rule) of ``invalid``, its break moved to the last object."""
    doc, table = _later_table(), model().table_at()
    inside = pointer(table[-1], 0) + "/"
    candidates: dict[tuple[str, str], list[dict[str, Any]]] = {}
    judged_otherwise = 0
    for v in invalid:
        if not any(tag in v["tags"] for tag in _BY_VALUE):
            continue
        newest = v["expect"][max(v["expect"], key=version_key)]
        if newest["valid"] or not newest["pointer"].startswith(inside):
            continue
        member = next((t for t in v["tags"] if t.startswith("member:")), newest["pointer"])
        # Every candidate is moved (so every one's upstream verdict is asked for and measured), and
        # the first the released readers all reject is kept: the choice never rests on a verdict
        # a later pass of the tools would measure differently.
        built = _moved(v, doc)
        if built is None:
            judged_otherwise += 1
        else:
            candidates.setdefault((member, newest["rule"]), []).append(built)
    if judged_otherwise:
        print(f"{judged_otherwise} later-object vectors left out: the reference judges them otherwise")
    return [next((c for c in moved if c["tier"] == "required"), moved[0]) for moved in candidates.values()]


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


def _member_end(path: tuple[str | int, ...]) -> int:
    """How many steps of ``path`` lead to the member it is in (``tensors/0/shards/0/shape`` of
    ``.../shape/1``): past each level of the table and its index, then the member's name."""
    tensors = model().table_at()
    levels, level, i = (tensors, model().table_at(*tensors)), (), 0
    while i + 1 < len(path) and isinstance(path[i], str) and (*level, path[i]) in levels:
        if not isinstance(path[i + 1], int):
            break
        level, i = (*level, str(path[i])), i + 2
    return i + 1


def _moved(v: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any] | None:
    """Vector ``v``'s break put in the last object of ``doc``'s table, or None when the reference
    does not judge it as ``v`` says (a break that depends on its neighbours, say)."""
    newest = v["expect"][max(v["expect"], key=version_key)]
    path = path_of(newest["pointer"])
    original = json.loads(v["blob"]) if "blob" in v else None
    if original is None:
        return None
    # the member's whole value moves (a break deep inside it keeps what surrounds it)
    member = path[: _member_end(path)]
    later, moved = copy.deepcopy(doc), _later(path)
    put(later, _later(member), get(original, member))
    blob = text(later)
    invalid: dict[str, tuple[str, str]] = {}
    for version, expect in v["expect"].items():
        if not expect["valid"]:
            invalid[version] = (expect["rule"], pointer(*_later(path_of(expect["pointer"]))))
        if first_violation(blob, version) != invalid.get(version):
            return None
    description = f"{pointer(*moved)}, in a later object of the table: {v['description']}"
    return vector(description, blob, invalid=invalid, upstream=upstream_verdict(DOCUMENT, blob),
                  tags=[*v["tags"], "later-object"])  # fmt: skip
