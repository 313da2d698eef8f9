"""Member names a reader must match exactly, as JSON reads them: valid vectors, per object level.

- **A name declared at another level** is unknown here and ignored (READ_IGNORE_UNKNOWN), whatever
  its value: each such name, given a value its own level's schema refuses (``"digest": "7"`` at
  the top). A reader that checks members by name wherever they sit rejects it.
- **A name that differs from a declared one only in case** (``Addr`` beside ``addr``) is another
  name, unknown, and ignored; given a value the declared member's schema refuses, after it. A
  reader that matches names case-insensitively (Go's ``encoding/json``) takes it for the member.
- **A declared name spelled with a** ``\\u`` **escape** (``"\\u0061ddr"``) is that name
  (READ_VALIDATE: any legal JSON spelling). A reader that compares names as written misses it.

Every other vector's unknown names are invented (``future_member``) and its known names plain,
so readers with these bugs passed them all (red-team mutants of the JavaScript example).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from _vector_grammar import raw_blob
from _vector_kit import vector
from _vector_model import DOCUMENT, RAW, base, get, model, text
from _vector_upstream import upstream_verdict
from refitwire import wire
from refitwire.compat.keywords import breaks


def name_vectors() -> list[dict[str, Any]]:
    """The valid vectors of the module's text: three per object level of the newest model."""
    found = []
    for level, path, declared in _levels():
        where = wire.pointer(*level) or "the top level"
        foreign = {m.name: _refused(m) for other, members in model().levels.items() if other != level
                   for m in members.members if m.name not in declared}  # fmt: skip
        doc = base()
        get(doc, path).update(foreign)
        found.append(_valid(f"names declared at other levels, unknown in {where}, with values refused there",
                            text(doc), doc, "unknown-keys"))  # fmt: skip
        doc = base()
        _after_each(get(doc, path), {name: (_case_variant(name, declared), _refused(m))
                                     for name, m in declared.items()})  # fmt: skip
        found.append(_valid(f"names of {where} in another case, unknown, with values refused there",
                            text(doc), doc, "unknown-keys"))  # fmt: skip
        for name in declared:  # each declared name with its first character escaped
            doc = base()
            obj = get(doc, path)
            renamed = {(RAW if key == name else key): value for key, value in obj.items()}
            obj.clear()
            obj.update(renamed)
            raw = b'"\\u' + f"{ord(name[0]):04x}".encode() + json.dumps(name[1:]).encode()[1:]
            parsed = base()
            found.append(_valid(f"{wire.pointer(*path, name)}: its name with {name[0]!r} as a \\u escape",
                                raw_blob(doc, raw), parsed, "escape"))  # fmt: skip
    return found


def _levels() -> Iterator[tuple[tuple[str, ...], tuple[str | int, ...], dict[str, Any]]]:
    """(level, the path of its first object in ``base()``, its declared members by name)."""
    for level, members in model().levels.items():
        yield level, tuple(s for part in level for s in (part, 0)), {m.name: m for m in members.members}


def _refused(member: Any) -> Any:
    """A value ``member``'s schema refuses (its first break, a wrong JSON type where there is one)."""
    found = breaks(member.schema)
    typed = [b.value for b in found if b.keyword == "type"]
    return typed[0] if typed else found[0].value if found else {"refused": True}


def _case_variant(name: str, declared: dict[str, Any]) -> str:
    """``name`` in another case that no member of the level has (upper case, else title case)."""
    for variant in (name.upper(), name.title(), name.swapcase() + "_"):
        if variant != name and variant not in declared:
            return variant
    raise AssertionError(name)


def _after_each(obj: dict[str, Any], added: dict[str, tuple[str, Any]]) -> None:
    """Put each ``added[name]`` (a new name and its value) right after member ``name`` of ``obj``."""
    items = []
    for key, value in obj.items():
        items.append((key, value))
        if key in added:
            items.append(added[key])
    obj.clear()
    obj.update(items)


def _valid(description: str, blob: bytes, parsed: dict[str, Any], tag: str) -> dict[str, Any]:
    return vector(
        description, blob, parsed=parsed, upstream=upstream_verdict(DOCUMENT, blob), tags=["names", tag]
    )
