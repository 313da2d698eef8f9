"""Protocol 1 between the runner and a testee: messages, and checking them against schema/protocol/.

A message that breaks its schema is explained from that schema: :func:`kinds` reads each
``oneOf`` branch of request.json and response.json (its members, what each must be, the
members and constants that tell it from the others), :func:`problems` picks the branch the
message means and words that branch's own errors (the member, its pointer, what it holds and
what it must be). The words follow the schema files, so they cannot drift from them, and a
message never reads "not valid under any of the schemas listed in the 'oneOf' keyword".
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from refitwire.compat._errors import ProtocolError
from refitwire.wire import (
    PROTOCOL_MESSAGES,
    join,
    pointer,
    protocol_schema,
    protocol_validator,
    resolve_refs,
    show_pointer,
    tokens,
)

PROTOCOL = 1
ROOT = '""'  # how reports show the root pointer (RFC 6901: "/" is the member named "")
#: How messages and the guide call each kind of reply (a branch of response.json, by its
#: ``$defs`` name); a kind missing here is called "a `NAME` reply" (tests/compat pins the table).
REPLY_WORDS = {
    "started": "the start reply", "written": "a write's reply", "read": "a read's reply",
    "counted": "a count's reply", "merged": "a merge's reply", "digested": "a digest's reply",
    "rejected": "a rejection", "skipped": "a skipped reply", "errored": "an errored reply",
}  # fmt: skip
_SHOWN = 3  # problems a message words; the rest are counted


def check_message(message: Any, kind: str) -> None:
    """Raise ProtocolError unless ``message`` is a valid ``kind`` ("request" or "response"),
    naming what is missing or wrong (:func:`problems`)."""
    found = explain(message, kind)
    if found is not None:
        raise ProtocolError(f"invalid {_NOUN.get(kind, kind)}: {found[1]}")


def explain(message: Any, kind: str) -> tuple[str, str] | None:
    """``None`` when ``message`` is a valid ``kind``, else the pointer of its first problem and
    every problem in words (:func:`problems`), one sentence each."""
    if protocol_validator(kind).is_valid(message):
        return None
    found = problems(message, kind)
    return (found[0][0], "; ".join(words for _, words in found)) if found else ("", f"breaks {kind}.json")


# -- the kinds of a message, read from its schema ------------------------------------------------


_NOUN = {"request": "request", "response": "reply"}


@dataclass(frozen=True)
class Member:
    """One member of a kind of message, at ``at`` (a pointer; ``*`` stands for any array index)."""

    at: str
    required: bool  # by the object it is a member of
    expected: str  # what it must be, in words (:func:`expected`)


@dataclass(frozen=True)
class Kind:
    """One kind of a protocol message: a ``oneOf`` branch of its schema, every reference inlined."""

    name: str  # the branch's ``$defs`` name
    words: str  # how messages call it: "the start reply", "a `read` request"
    schema: Mapping[str, Any]
    flags: Mapping[str, Any]  # members whose constant tells this kind (``cmd``, ``rejected``)
    markers: tuple[str, ...]  # required members no other kind of the message has
    description: str

    @property
    def members(self) -> tuple[Member, ...]:
        """Every member this kind names, nested ones after their parent, in schema order."""
        return tuple(_members(self.schema, ""))

    def validator(self) -> Any:
        return _validator(json.dumps(self.schema, sort_keys=True))


@functools.cache
def schema_of(message: str) -> dict[str, Any]:
    """The schema file of a protocol message ("request", "response", "decoded", "envelope") with
    every ``$ref`` replaced by what it names, another file's too."""
    loaded = {m: protocol_schema(m) for m in PROTOCOL_MESSAGES}
    by_id = {schema["$id"]: m for m, schema in loaded.items()}

    def local(node: Any) -> Any:  # another file's references inlined, so one document remains
        if isinstance(node, list):
            return [local(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: local(value) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            document, _, fragment = ref.partition("#")
            target: Any = schema_of(by_id[document])
            for token in tokens(fragment):
                target = target[token]
            del out["$ref"]
            out = {**{k: v for k, v in target.items() if k not in ("$id", "$schema")}, **out}
        return out

    return resolve_refs(local(loaded[message]))


@functools.cache
def kinds(message: str) -> tuple[Kind, ...]:
    """The kinds of a "request" or "response", in the schema's order."""
    raw = protocol_schema(message)
    names = [str(branch["$ref"]).rsplit("/", 1)[-1] for branch in raw["oneOf"]]
    branches = schema_of(message)["oneOf"]
    declared = [set(branch.get("properties", {})) for branch in branches]
    found = []
    for n, (name, branch) in enumerate(zip(names, branches)):
        others = set().union(*(d for m, d in enumerate(declared) if m != n))
        flags = {k: v["const"] for k, v in branch.get("properties", {}).items() if "const" in v}
        markers = tuple(m for m in branch.get("required", ()) if m not in others)
        words = _words(message, name, flags)
        found.append(Kind(name, words, branch, flags, markers, str(branch.get("description", ""))))
    return tuple(found)


def _words(message: str, name: str, flags: Mapping[str, Any]) -> str:
    """How messages call a kind: a request by its ``cmd``, a reply as :data:`REPLY_WORDS` says."""
    if message == "request":
        return f"a `{flags.get('cmd', name)}` request"
    return REPLY_WORDS.get(name, f"a `{name}` reply")


@functools.cache
def _validator(schema_text: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(schema_text))


def _members(node: Mapping[str, Any], at: str) -> list[Member]:
    """The members under ``node`` (an object's, and its array items' objects'), nested ones after
    their parent, each required or not by the object it is a member of."""
    found = []
    required = set(node.get("required", ()))
    for name, sub in node.get("properties", {}).items():
        where = join(at, name)
        found.append(Member(where, name in required, expected(sub)))
        found += _members(sub, where)
    items = node.get("items")
    if isinstance(items, Mapping):
        found += _members(items, join(at, "*"))
    return found


# -- what a schema node says, in words -----------------------------------------------------------

_NOUNS = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
          "number": "a number", "boolean": "true or false", "null": "null"}  # fmt: skip
_BOUNDS = (
    ("minimum", "at least {}"), ("exclusiveMinimum", "more than {}"), ("maximum", "at most {}"),
    ("exclusiveMaximum", "less than {}"), ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"), ("pattern", "matching `{}`"), ("minItems", "at least {} item(s)"),
    ("maxItems", "at most {} item(s)"),
)  # fmt: skip


def expected(node: Any) -> str:
    """What a schema node allows, in words: "an integer (at least 0)", "an object with `name`, `version`"."""
    if node is True or node == {}:
        return "any JSON value"
    if not isinstance(node, Mapping):
        return "nothing"
    if "const" in node:
        return _json(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(_json(v) for v in node["enum"])
    for either in ("oneOf", "anyOf"):
        if either in node:
            return " or ".join(expected(branch) for branch in node[either])
    types = node.get("type")
    listed = [types] if isinstance(types, str) else list(types or [])
    text = " or ".join(_NOUNS.get(t, t) for t in listed) if listed else "a JSON value"
    bounds = [_plural(words.format(node[key]), node[key]) for key, words in _BOUNDS if key in node]
    if node.get("uniqueItems") is True:
        bounds.append("no item twice")
    if bounds:
        text += f" ({', '.join(bounds)})"
    if node.get("required"):
        text += " with " + ", ".join(f"`{m}`" for m in node["required"])
    if isinstance(node.get("items"), Mapping):
        text += ", each " + expected(node["items"])
    return text


def _plural(words: str, n: Any) -> str:
    return words.replace("(s)", "" if n == 1 else "s")


def _json(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- what is wrong with a message ----------------------------------------------------------------


def problems(message: Any, kind: str) -> list[tuple[str, str]]:
    """``(pointer, words)`` for each thing that makes ``message`` an invalid ``kind`` ("request"
    or "response"), the most telling first; ``[]`` when it is valid.

    The kind of message it means is picked as a reader of it would: by a constant that tells
    the kinds apart (a request's ``cmd``, a reply's ``"rejected": true``), else by the members
    only one kind has; that kind's own errors are then worded, the shallowest first (as
    jsonschema's ``best_match`` ranks them). One kind of none, or of two at once, says so."""
    if protocol_validator(kind).is_valid(message):
        return []
    noun, every = _NOUN.get(kind, kind), kinds(kind)
    if not isinstance(message, Mapping):
        return [("", f"a {noun} is a JSON object, not {_json(message)}")]
    meant = _meant(message, every)
    if meant is None:
        return [("", _none_of(message, noun, every))]
    errors = sorted(meant.validator().iter_errors(message), key=_rank)
    if not errors:  # valid as this kind, and as another one too
        both = [k.words for k in every if k.validator().is_valid(message)]
        return [("", f"a {noun} is one kind only; this one is {' and '.join(both)}: {_json(message)}")]
    worded = [_worded(meant, error) for error in errors]
    if len(worded) > _SHOWN:
        rest = len(worded) - _SHOWN
        worded = [
            *worded[: _SHOWN - 1],
            (worded[_SHOWN - 1][0], f"{worded[_SHOWN - 1][1]} (and {rest} more)"),
        ]
    return worded


def needs(*members: str, kind: str = "response") -> str:
    """What the kind that requires ``members`` says of them: "a write's reply needs `blob_b64`: a string"."""
    for found in kinds(kind):
        required = found.schema.get("required", ())
        if all(m in required for m in members):
            properties = found.schema.get("properties", {})
            said = ", and ".join(f"`{m}`: {expected(properties.get(m, True))}" for m in members)
            return f"{found.words} needs {said}"
    return " and ".join(f"`{m}`" for m in members) + f" are in no kind of {kind}"


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``."""
    return type(a) is type(b) and a == b


def _meant(message: Mapping[str, Any], every: Sequence[Kind]) -> Kind | None:
    def score(k: Kind) -> tuple[int, int, bool]:
        flagged = sum(name in message and _same(message[name], value) for name, value in k.flags.items())
        marked = sum(name in message for name in k.markers)
        excluded = "not" in k.schema and _validator(json.dumps(k.schema["not"], sort_keys=True)).is_valid(
            message
        )
        return flagged, marked, not excluded

    best = max(every, key=score)  # the first of equals, in the schema's order
    return best if score(best)[:2] != (0, 0) else None


def _none_of(message: Mapping[str, Any], noun: str, every: Sequence[Kind]) -> str:
    held = ", ".join(f"`{m}`" for m in message) or "no members"
    common = set.intersection(*(set(k.flags) for k in every)) if every else set()
    if common:  # one member tells every kind (a request's cmd)
        name = sorted(common)[0]
        values = ", ".join(_json(k.flags[name]) for k in every)
        has = _json(message[name]) if name in message else "none"
        return f"a {noun} needs `{name}`: one of {values}; this one has {has}"
    told = "; ".join(
        f"{k.words} ({', '.join(f'`{m}`' + (f': {_json(k.flags[m])}' if m in k.flags else '') for m in k.markers)})"
        for k in every
    )
    return f"a {noun} is of one of these kinds, each told by its members: {told}; this one has {held}"


def _rank(error: Any) -> tuple[int, bool]:
    weak = error.schema_path[-1] in ("oneOf", "anyOf") if error.schema_path else False
    return len(error.instance_path), weak


def _worded(kind: Kind, error: Any) -> tuple[str, str]:
    at = pointer(*error.instance_path)
    node: Any = kind.schema
    for step in error.schema_path[:-1]:
        node = node[step]
    keyword = error.schema_path[-1] if error.schema_path else ""
    if keyword == "required":
        name = error.kind.as_dict()["property"]
        where = join(at, name)
        sub = node.get("properties", {}).get(name, True)
        place = "" if not at else f" at {where}"
        return where, f"{kind.words} needs `{name}`{place}: {expected(sub)}"
    if keyword == "not":
        clash = sorted(m for m in _required_anywhere(node["not"]) if m in error.instance)
        also = ", ".join(f"`{m}`" for m in clash) or "what it has"
        return at, f"{kind.words} cannot also carry {also}"
    return at, f"{kind.words}: {show_pointer(at)} holds {_json(error.instance)}, expected {expected(node)}"


def _required_anywhere(node: Any) -> set[str]:
    """The member names a schema node requires anywhere in it (a ``not`` of ``required`` lists)."""
    if isinstance(node, Mapping):
        found = set(node.get("required", ()))
        for value in node.values():
            found |= _required_anywhere(value)
        return found
    if isinstance(node, list):
        return set().union(*(_required_anywhere(item) for item in node)) if node else set()
    return set()


# -- the runner's requests -----------------------------------------------------------------------


def start() -> dict[str, Any]:
    return {"cmd": "start", "protocol": PROTOCOL}


def write(seq: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"cmd": "write", "seq": seq, "payload": payload}


def read(seq: int, blob_b64: str) -> dict[str, Any]:
    return {"cmd": "read", "seq": seq, "blob_b64": blob_b64}


def count(seq: int, blob_b64: str) -> dict[str, Any]:
    return {"cmd": "count", "seq": seq, "blob_b64": blob_b64}


def stop() -> dict[str, Any]:
    return {"cmd": "stop"}
