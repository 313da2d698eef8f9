"""The JSON text as generated dimensions: RFC 8259's number grammar, RFC 3629's UTF-8 and the
string escapes, each broken in every number and string position of the blob.

The breaks are built from the productions, not listed: a number is ``[minus] int [frac] [exp]``
(RFC 8259 section 6) and each near-miss breaks one production (a leading zero or ``+`` in
``int``, a ``frac`` or ``exp`` without digits, another radix, a word); a UTF-8 sequence is a
lead byte and its continuations (RFC 3629 section 3) and each break is one the decoder must
refuse (an overlong form of each length, an encoded surrogate, a code point past U+10FFFF, a
lead byte that never starts a sequence, a sequence cut short, a lone continuation); an escape
is ``\\`` and one of RFC 8259's eight letters or ``u`` and four hex digits. Every break is
checked against the grammar it breaks (:data:`RFC8259_NUMBER`, Python's strict UTF-8 decoder)
so a near-miss that is legal after all fails the build.

The legal spellings are built the same way (:func:`legal_spellings`): each optional part and
each alternative of a number (a minus, a zero, a fraction, an exponent with ``e`` or ``E`` and
no sign, ``+`` or ``-``), each of the eight escape letters and ``\\u`` with lower- and
upper-case hex (a surrogate pair too), and raw UTF-8 of every sequence length at the edges of
each, in a member name, a member value the schema leaves free and a value nested in an unknown
member; text that every Unicode normalization form changes in every member value the schema
leaves free (names are carried as written); and every string the schema pins (a pattern or a
constant) with a character escaped. A reader must read each as the same blob (READ_VALIDATE:
any legal JSON spelling).

The positions come from the wire model: every integer member and array item at every level, a
member no version knows at every level (its value, nested inside it, and its name), every
string member. Each vector breaks step 1 of SPEC 2.7 (``JSON``, or ``UTF8`` for the bytes), so
its rule and pointer (``""``) hold at every version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from _vector_kit import VERSIONS, py_dumps
from _vector_model import RAW, bad, base, get, good, integer_places, model, place, put
from refitwire import wire
from refitwire.compat.cases._cases import STRING_CLASSES
from refitwire.wire import NO_CONST

#: RFC 8259 section 6: ``number = [ minus ] int [ frac ] [ exp ]``.
RFC8259_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def number_near_misses() -> Iterator[tuple[str, str]]:
    """(what, text) for texts one production away from a number, none of them a number."""
    for digits in ("1", "12"):
        yield "a leading zero", "0" + digits
        yield "a negative leading zero", "-0" + digits
        yield "a plus sign", "+" + digits
    yield "two zeros", "00"
    yield "a plus zero", "+0"
    yield "a fraction without an integer part", ".5"
    yield "a negative fraction without an integer part", "-.5"
    yield "a point without fraction digits", "1."
    yield "a point without fraction digits before an exponent", "1.e5"
    yield "a minus sign alone", "-"
    yield "two minus signs", "--1"
    yield "an exponent without digits", "1e"
    yield "a signed exponent without digits", "1e+"
    yield "an exponent with a fraction", "1e5.5"
    yield "two exponent letters", "1ee5"
    yield "a second point", "1.5.5"
    for prefix in ("0x", "0X", "0o", "0b"):
        yield f"a {prefix} radix prefix", prefix + "1"
    yield "a digit separator", "1_000"
    yield "a type suffix", "1L"
    yield "a space after the minus sign", "- 1"
    yield "a full-width digit", "\uff11"
    yield "an Arabic-Indic digit", "\u0661"
    for word in ("NaN", "Infinity", "-Infinity"):
        yield f"{word} (not JSON)", word


def _utf8_form(code_point: int, length: int) -> bytes:
    """``code_point`` in the ``length``-byte bit pattern of RFC 3629, whether or not that is legal."""
    if length == 1:
        return bytes([code_point])
    lead_bits = 7 - length
    body = [0x80 | ((code_point >> (6 * i)) & 0x3F) for i in reversed(range(length - 1))]
    lead = ((0xFF << (8 - length)) & 0xFF) | ((code_point >> (6 * (length - 1))) & ((1 << lead_bits) - 1))
    return bytes([lead, *body])


def utf8_breaks() -> Iterator[tuple[str, bytes]]:
    """(what, bytes) for byte sequences RFC 3629 forbids, each refused by a strict decoder."""
    for length in (2, 3, 4):
        yield f"an overlong {length}-byte form of '/'", _utf8_form(ord("/"), length)
    yield "an overlong 3-byte form of U+07FF", _utf8_form(0x7FF, 3)
    yield "an overlong 4-byte form of U+FFFF", _utf8_form(0xFFFF, 4)
    for surrogate in (0xD800, 0xDBFF, 0xDC00, 0xDFFF):
        yield f"the surrogate U+{surrogate:04X} encoded", _utf8_form(surrogate, 3)
    yield "a surrogate pair encoded as two 3-byte forms", _utf8_form(0xD83D, 3) + _utf8_form(0xDE00, 3)
    yield "U+110000, past the last code point", _utf8_form(0x110000, 4)
    for lead in (0xC0, 0xC1, 0xF5, 0xF8, 0xFC, 0xFE, 0xFF):
        yield f"the byte {lead:02X}, which starts no sequence", bytes([lead])
    for char in ("\u00e9", "\u20ac", "\U0001f600"):
        encoded = char.encode("utf-8")
        for cut in range(1, len(encoded)):
            yield f"the {len(encoded)}-byte form of U+{ord(char):04X} cut after {cut}", encoded[:cut]
    yield "a lone continuation byte", b"\x80"
    yield "a continuation byte after a complete character", "\u00e9".encode() + b"\xbf"


def escape_breaks() -> Iterator[tuple[str, str]]:
    """(what, JSON text inside a string) for escapes and characters RFC 8259 forbids in a string."""
    yield "a lone high surrogate escape", "\\ud800"
    yield "a lone low surrogate escape", "\\udc00"
    yield "a high surrogate escape before a letter", "\\ud83dA"
    yield "a high surrogate escape before a BMP escape", "\\ud83d\\u0041"
    yield "two high surrogate escapes", "\\ud83d\\ud83d"
    yield "a reversed surrogate pair", "\\ude00\\ud83d"
    for letter in "xaUv0'":
        yield f"the escape \\{letter}", "\\" + letter + "41"
    yield "a \\u escape with three hex digits", "\\u004"
    yield "a \\u escape with a non-hex digit", "\\u00G1"
    yield "a backslash before a space", "\\ "
    for code in (0x00, 0x01, 0x09, 0x0A, 0x1F):
        yield f"a raw U+{code:04X} (control characters must be escaped)", chr(code)


def number_spellings() -> Iterator[tuple[str, str]]:
    """(what, text) for each optional part and each alternative of RFC 8259's number, all legal."""
    yield from (("zero", "0"), ("a minus zero", "-0"), ("a digit", "7"), ("digits", "12"), ("a minus", "-7"))
    yield from (("a fraction", "0.5"), ("a fraction of two digits", "1.25"), ("a minus fraction", "-0.5"))
    for letter in "eE":
        for sign in ("", "+", "-"):
            yield f"an exponent {letter}{sign}", f"1{letter}{sign}5"
    yield "an exponent with a leading zero", "1e05"
    yield "a fraction and an exponent", "-1.5E-3"
    yield "a zero exponent of zero", "0e0"
    # RFC 8259 section 6 bounds no part: a number is read as its nearest double (SPEC 2.7), which
    # may be subnormal or zero (only one that overflows is refused, section 5), or need every digit.
    yield "an exponent whose nearest double is 0 (underflow)", "1e-400"
    yield "a minus and an exponent whose nearest double is -0 (underflow)", "-1e-400"
    yield "the least subnormal double", "5e-324"
    yield "more digits than a double holds", "0.1000000000000000055511151231257827021181583404541015625"


def escape_spellings() -> Iterator[tuple[str, str]]:
    """(what, JSON text inside a string) for each escape RFC 8259 allows."""
    for letter in '"\\/bfnrt':
        yield f"the escape \\{letter}", "\\" + letter
    yield "a \\u escape in lower-case hex", "\\u00e9"
    yield "a \\u escape in upper-case hex", "\\u00E9"
    yield "a surrogate pair in lower-case hex", "\\ud83d\\ude00"
    yield "a surrogate pair in upper-case hex", "\\uD83D\\uDE00"
    yield "the escape \\u0000", "\\u0000"


def utf8_spellings() -> Iterator[tuple[str, str]]:
    """(what, character) for raw UTF-8 of every sequence length, at the edges of each range."""
    for code in (0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF):
        yield f"raw U+{code:04X} ({len(chr(code).encode())} bytes of UTF-8)", chr(code)


def legal_spellings() -> list[dict[str, Any]]:
    """Valid vectors: every legal spelling of a number, an escape and a UTF-8 sequence (see the
    module's text), each read as the blob it spells."""
    found = []
    numbers = list(number_spellings())
    for _what, text in numbers:
        assert RFC8259_NUMBER.fullmatch(text), text
    spelled = [(what, f'"a{text}z"'.encode()) for what, text in escape_spellings()]
    spelled += [
        (what, json.dumps(f"a{char}z", ensure_ascii=False).encode()) for what, char in utf8_spellings()
    ]
    for where, doc, _name in _free_string_positions():
        found += [_legal(f"{what} {where}", raw_blob(doc, raw), "escape") for what, raw in spelled]
    unnormalized = json.dumps(f"a{STRING_CLASSES['unnormalized']}z", ensure_ascii=False).encode()
    for where, doc, _name in string_positions():  # read as written: no normalization, anywhere
        if where.startswith("in /") and _free(where[3:]):
            found.append(_legal(f"text every Unicode normalization form changes {where}", raw_blob(doc, unnormalized),
                                "unicode"))  # fmt: skip
    for where, doc in list(number_positions())[-2:]:  # a member value no version knows, and nested
        found += [_legal(f"a number: {what} ({text}) {where}", raw_blob(doc, text.encode()), "number-grammar")
                  for what, text in numbers]  # fmt: skip
    for member in model().members():  # a pinned string with a character escaped
        value = get(base(), place(member))
        if "string" in member.types and (member.pattern or member.const is not NO_CONST) and value:
            # the first character whose code has a hex letter, so that the two cases differ
            i = next((i for i, c in enumerate(value) if not f"{ord(c):04x}".isdigit()), 0)
            for case, hexed in (("lower", f"{ord(value[i]):04x}"), ("upper", f"{ord(value[i]):04X}")):
                doc = base()
                put(doc, place(member), RAW)
                raw = (json.dumps(value[:i])[:-1] + "\\u" + hexed + json.dumps(value[i + 1 :])[1:]).encode()
                where = f"{wire.pointer(*place(member))} with {value[i]!r} as a \\u escape ({case}-case hex)"
                found.append(_legal(where, raw_blob(doc, raw), "escape"))
    return found


def _legal(description: str, blob: bytes, tag: str) -> dict[str, Any]:
    return good(description, blob, ["grammar", "legal", tag], parsed=json.loads(blob))


def _free_string_positions() -> Iterator[tuple[str, dict[str, Any], bool]]:
    """A member name, the first string member value the schema leaves free, and a value nested
    in an unknown member of the deepest level: one of each kind of string position."""
    positions = list(string_positions())
    names = [p for p in positions if p[2]]
    free = [p for p in positions if p[0].startswith("in /") and _free(p[0][3:])]
    nested = [p for p in positions if p[0].startswith("nested in an unknown member")]
    return iter([names[0], free[0], nested[-1]])


def _free(at: str) -> bool:
    member = next(m for m in model().members() if wire.pointer(*place(m)) == at)
    return member.pattern is None and member.const is NO_CONST and "enum" not in member.schema


# -- positions ----------------------------------------------------------------------------


def raw_blob(doc: dict[str, Any], raw: bytes) -> bytes:
    """The blob of ``doc`` with the one string ``RAW`` (a value or a name) written as ``raw``."""
    written = py_dumps(doc)
    marker = json.dumps(RAW).encode()
    assert written.count(marker) == 1
    return written.replace(marker, raw)


def level_paths() -> Iterator[tuple[str, tuple[str | int, ...], str]]:
    """(level as a pointer, the path of its first object, a member name no version declares
    there) for every object level of the model."""
    for level, declared in model().levels.items():
        name = "future_member"
        while name in declared:
            name += "_"
        yield wire.pointer(*level) or "top level", tuple(s for part in level for s in (part, 0)), name


def number_positions() -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, a base blob holding ``RAW`` where a number goes) for every number position."""
    for _member, path, _ in integer_places():
        doc = base()
        put(doc, path, RAW)
        yield f"at {wire.pointer(*path)}", doc
    for level, path, unknown in level_paths():
        doc = base()
        put(doc, (*path, unknown), RAW)
        yield f"in an unknown member of the {level}", doc
        doc = base()
        put(doc, (*path, unknown), {"nested": [RAW]})
        yield f"nested in an unknown member of the {level}", doc


def string_positions() -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(where, a base blob holding ``RAW`` where a string goes, whether RAW is a member name)."""
    for member in model().members():
        if "string" in member.types:
            doc = base()
            put(doc, place(member), RAW)
            yield f"in {wire.pointer(*place(member))}", doc, False
    for level, path, unknown in level_paths():
        doc = base()
        put(doc, (*path, unknown), RAW)
        yield f"in an unknown member of the {level}", doc, False
        doc = base()
        put(doc, (*path, unknown), {"nested": [RAW]})
        yield f"nested in an unknown member of the {level}", doc, False
        doc = base()
        put(doc, (*path, RAW), 1)
        yield f"in a member name of the {level}", doc, True


def grammar_vectors() -> list[dict[str, Any]]:
    """Every near-miss in every number position, every UTF-8 break and bad escape in every
    string position: ``JSON`` or ``UTF8`` at ``""`` for every version (SPEC 2.7 step 1)."""
    found = []
    misses = list(number_near_misses())
    for _what, miss in misses:
        assert not RFC8259_NUMBER.fullmatch(miss), miss
    for where, doc in number_positions():
        for what, miss in misses:
            found.append(bad(f"a number with {what} ({miss}) {where}", raw_blob(doc, miss.encode()), "JSON", "",
                             VERSIONS, ["grammar", "number-grammar"]))  # fmt: skip
    breaks = list(utf8_breaks())
    for what, raw in breaks:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        raise AssertionError(f"{what} is valid UTF-8")
    escapes = list(escape_breaks())
    for where, doc, _name in string_positions():
        for what, raw in breaks:
            blob = raw_blob(doc, b'"a' + raw + b'z"')
            found.append(bad(f"{what} {where}", blob, "UTF8", "", VERSIONS, ["grammar", "utf-8"]))
        for what, text in escapes:
            blob = raw_blob(doc, ('"a' + text + 'z"').encode())
            found.append(bad(f"{what} {where}", blob, "JSON", "", VERSIONS, ["grammar", "escape"]))
    return found
