"""The JSON text's structure as generated dimensions: RFC 8259's object, array, literal and
whitespace productions, each broken in every container of the blob, and every legal spacing.

``_vector_grammar`` breaks the tokens (numbers, UTF-8, escapes); this breaks how they are put
together. Each near-miss changes one production of RFC 8259 section 2-5 and nothing else:

- ``object = begin-object [ member *( value-separator member ) ] end-object`` and
  ``member = string name-separator value``: a separator missing, doubled, leading or trailing;
  a name-separator missing, doubled or another sign; a member without its name or value; a
  name that is not a string (no quotes, single quotes, a number); the wrong or a missing end;
- ``array = begin-array [ value *( value-separator value ) ] end-array``: the same for values,
  and a member where a value belongs;
- ``false / null / true``: each literal capitalised, upper-cased, cut short or lengthened,
  and other languages' words for them, where the schema lets a literal stand;
- ``ws = *( %x20 / %x09 / %x0A / %x0D )``: every other character Unicode calls a space, and
  comments, between tokens (each character at one place, and one of them in every container);
  and, legal, each of the four (and all four in a run) at every token boundary, and inside an
  empty array and an empty object (the container's empty alternative) at every level.
- ``quotation-mark = %x22``: a string in single quotes in every string position.

The containers come from the wire model: every object level and every array member; the
places of literals from its nullable members and a member no version knows at every level.
Every break is checked to be no JSON text (``json.loads``, with Python's extensions
refused) and every legal spacing to read as the base blob, so a near-miss that is legal
after all fails the build. Each invalid vector breaks step 1 of SPEC 2.7: ``JSON`` at ``""``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from _vector_grammar import level_paths, raw_blob, string_positions
from _vector_kit import VERSIONS, py_dumps, vector
from _vector_model import RAW, bad, base, get, good, model, place, put
from refitwire import wire

Path = tuple[str | int, ...]
#: RFC 8259 section 2: the four characters of ``ws``.
JSON_WS = " \t\n\r"


def _strict_loads(text: bytes) -> Any:
    """``json.loads`` without Python's extensions (NaN, Infinity): RFC 8259 alone."""

    def refuse(word: str) -> Any:
        raise ValueError(word)

    return json.loads(text, parse_constant=refuse)


def _is_json(text: bytes) -> bool:
    try:
        _strict_loads(text)
    except ValueError:  # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
        return False
    return True


# -- writing with one container broken ------------------------------------------------------

#: A member as written: its name (a JSON string) and its value.
Member = tuple[str, str]


def _members(ms: list[Member]) -> str:
    return ", ".join(f"{n}: {v}" for n, v in ms)


def object_breaks() -> Iterator[tuple[str, Callable[[list[Member]], str]]]:
    """Each near-miss of ``object`` and ``member`` (one member or more is given; a break beside
    another member repeats a lone one, as ``array_breaks`` does)."""

    def rest(ms: list[Member]) -> str:
        return _members(ms[1:] or ms[:1])

    yield "a value-separator after the last member", lambda ms: "{" + _members(ms) + ",}"
    yield "a value-separator before the first member", lambda ms: "{, " + _members(ms) + "}"
    yield "two value-separators between members", lambda ms: "{" + _members(ms[:1]) + ",, " + rest(ms) + "}"
    yield "no value-separator between members", lambda ms: "{" + _members(ms[:1]) + " " + rest(ms) + "}"
    for what, sep in (
        ("no name-separator", " "),
        ("two name-separators", ":: "),
        ("'=' for the name-separator", " = "),
    ):
        yield what, lambda ms, sep=sep: "{" + ms[0][0] + sep + ms[0][1] + ", " + rest(ms) + "}"
    yield "a member without a value", lambda ms: "{" + ms[0][0] + ": , " + rest(ms) + "}"
    yield "a member without a name", lambda ms: "{: " + ms[0][1] + ", " + rest(ms) + "}"
    yield "a value where a member belongs", lambda ms: "{" + ms[0][1] + ", " + rest(ms) + "}"
    yield (
        "a member name without quotes",
        lambda ms: "{" + _members([(ms[0][0][1:-1], ms[0][1]), *ms[1:]]) + "}",
    )
    yield (
        "a member name in single quotes",
        lambda ms: "{" + _members([(f"'{ms[0][0][1:-1]}'", ms[0][1]), *ms[1:]]) + "}",
    )
    yield "a number for a member name", lambda ms: "{" + _members([("1", ms[0][1]), *ms[1:]]) + "}"
    yield "an object ended by ']'", lambda ms: "{" + _members(ms) + "]"
    yield "an object never ended", lambda ms: "{" + _members(ms)
    yield "an object ended twice", lambda ms: "{" + _members(ms) + "}}"
    yield "an object begun twice", lambda ms: "{{" + _members(ms) + "}"


def array_breaks() -> Iterator[tuple[str, Callable[[list[str]], str]]]:
    """Each near-miss of ``array`` (one item or more is given; a break between two items
    repeats a lone one)."""

    def two(items: list[str]) -> tuple[str, str]:
        items = items or [
            "0"
        ]  # (an array that may hold no item: a break need not be valid but for one keyword)
        return items[0], ", ".join(items[1:] or items[:1])

    yield "a value-separator after the last item", lambda items: "[" + ", ".join(items) + ",]"
    yield "a value-separator before the first item", lambda items: "[, " + ", ".join(items) + "]"
    yield "two value-separators between items", lambda items: "[{},, {}]".format(*two(items))
    yield "no value-separator between items", lambda items: "[{} {}]".format(*two(items))
    yield "a member where an item belongs", lambda items: '["item": ' + ", ".join(items) + "]"
    yield "an array ended by '}'", lambda items: "[" + ", ".join(items) + "}"
    yield "an array never ended", lambda items: "[" + ", ".join(items)
    yield "an array ended twice", lambda items: "[" + ", ".join(items) + "]]"
    yield "an array begun twice", lambda items: "[[" + ", ".join(items) + "]"


def write(
    value: Any, at: Path | None = None, form: Callable[[Any], str] | None = None, path: Path = ()
) -> str:
    """``value`` as ``py_dumps`` writes it, except the container at ``at``, written by ``form``
    from its members (name and value, as written) or items."""
    if isinstance(value, dict):
        members = [(json.dumps(k), write(v, at, form, (*path, k))) for k, v in value.items()]
        return form(members) if path == at and form else "{" + _members(members) + "}"
    if isinstance(value, list):
        items = [write(v, at, form, (*path, i)) for i, v in enumerate(value)]
        return form(items) if path == at and form else "[" + ", ".join(items) + "]"
    return json.dumps(value)


def containers() -> Iterator[tuple[str, Path, bool]]:
    """(where, path, is an object) for every object level and every array member of the model."""
    for level, path, _ in level_paths():
        yield f"the object at {level}", path, True
    for member in model().members():
        if "array" in member.types:
            yield f"the array {wire.pointer(*place(member))}", place(member), False


# -- between tokens -------------------------------------------------------------------------


def not_whitespace() -> Iterator[tuple[str, str]]:
    """Every character Unicode calls a space or a control (NUL, DEL, the C1 controls), and the
    byte order mark, that ``ws`` is not: what a trim, a C string or a lenient tokenizer skips."""
    for code in range(0x110000):
        char = chr(code)
        if char in JSON_WS:
            continue
        if char.isspace() or unicodedata.category(char) in ("Zs", "Zl", "Zp", "Cc") or char == "\ufeff":
            yield f"U+{code:04X} ({unicodedata.name(char, 'a control character').lower()})", char
    yield "a block comment", "/* c */"
    yield "a line comment", "// c\n"


def _after_begin(text: str, gap: str) -> Callable[[Any], str]:
    """A form writing the container as written, with ``gap`` after its begin token."""
    return lambda _written: text[0] + gap + text[1:]


def literal_near_misses() -> Iterator[str]:
    for word in ("true", "false", "null"):
        yield from (word.capitalize(), word.upper(), word[:-1], word + word[-1])
    yield from ("None", "nil", "undefined")


def literal_places() -> Iterator[tuple[str, Path]]:
    """Where a literal may stand: each nullable member, and a member no version knows at every level."""
    for member in model().members():
        if member.nullable:
            yield f"at {wire.pointer(*place(member))}", place(member)
    for level, path, unknown in level_paths():
        yield f"in an unknown member of {level}", (*path, unknown)


# -- the vectors ----------------------------------------------------------------------------


def _broken(description: str, blob: bytes, tag: str) -> dict[str, Any]:
    assert not _is_json(blob), f"{description} is JSON after all"
    return bad(description, blob, "JSON", "", VERSIONS, ["grammar", tag])


def structure_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(legal, invalid): every spacing ``ws`` allows at every token boundary; every near-miss
    of a container in every container, every non-``ws`` space, comment and literal near-miss."""
    doc = base()
    invalid = []
    for where, path, is_object in containers():
        breaks = object_breaks() if is_object else array_breaks()
        for what, form in breaks:
            invalid.append(_broken(f"{what} in {where}", write(doc, path, form).encode(), "structure"))
    spaces = list(not_whitespace())
    text = write(doc)
    for what, gap in spaces:  # every character inside the text, and around it (a trim would take it)
        for where, blob in (("after the top level's '{'", "{" + gap + text[1:]), ("before the text", gap + text),
                            ("after the text", text + gap)):  # fmt: skip
            if not blob.startswith("\ufeff"):  # a leading byte order mark is UTF8's (a vector of its own)
                invalid.append(_broken(f"{what} {where}", blob.encode(), "whitespace"))
    what, gap = spaces[0]
    for where, path, _ in containers():  # one character in every container
        inner = write(get(doc, path))
        blob = write(doc, path, _after_begin(inner, gap)).encode()
        invalid.append(_broken(f"{what} after the begin of {where}", blob, "whitespace"))
    for where, path in literal_places():
        for word in literal_near_misses():
            marked = base()
            put(marked, path, RAW)
            invalid.append(
                _broken(f"{word} for a literal {where}", raw_blob(marked, word.encode()), "literal")
            )
    for where, marked, _name in string_positions():
        invalid.append(
            _broken(f"a string in single quotes {where}", raw_blob(marked, b"'a'"), "quotation-mark")
        )

    legal = repeated_names()
    runs = [(f"{ascii(c)[1:-1]}", c) for c in JSON_WS] + [("all four", JSON_WS)]
    for what, gap in runs:
        blob = (gap + _spaced(doc, gap) + gap).encode()
        assert _strict_loads(blob) == doc and blob != py_dumps(doc)
        legal.append(
            good(f"'{what}' at every token boundary (RFC 8259 ws)", blob, ["grammar", "whitespace"], doc)
        )
    for level, path, unknown in level_paths():  # the empty alternative of each container, spaced
        for what, gap in (runs[0], runs[-1]):
            for kind, empty in (("array", f"[{gap}]"), ("object", f"{{{gap}}}")):
                marked = base()
                put(marked, (*path, unknown), RAW)
                blob = raw_blob(marked, empty.encode())
                legal.append(good(f"an empty {kind} with '{what}' inside, in an unknown member of {level}", blob,
                                  ["grammar", "whitespace"], doc))  # fmt: skip
    return legal, invalid


def repeated_names() -> list[dict[str, Any]]:
    """At every object level, its first member written twice, null first: the last one wins
    (DUPLICATE_KEYS), or a reader rejects naming that member's pointer at that level."""
    found = []
    for level, path, _unknown in level_paths():
        held = get(base(), path)
        if not isinstance(held, dict) or not held:
            continue
        name = next(iter(held))
        marked = base()
        put(marked, (*path, name), RAW)
        blob = raw_blob(marked, b"null, " + json.dumps(name).encode() + b": " + py_dumps(held[name]))
        at = wire.pointer(*path, name)
        found.append(vector(f"{name} repeated in the {level}, null first: the last one wins", blob, parsed=base(),
                            writer_conformant=False, tags=["grammar", "duplicate-keys"],
                            or_reject=("DUPLICATE_KEYS", at)))  # fmt: skip
    return found


def _spaced(value: Any, gap: str) -> str:
    """``value`` with ``gap`` on both sides of every structural token."""
    if isinstance(value, dict):
        inner = f"{gap},{gap}".join(f"{json.dumps(k)}{gap}:{gap}{_spaced(v, gap)}" for k, v in value.items())
        return "{" + gap + inner + gap + "}"
    if isinstance(value, list):
        return "[" + gap + f"{gap},{gap}".join(_spaced(v, gap) for v in value) + gap + "]"
    return json.dumps(value)
