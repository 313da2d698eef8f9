"""Evidence: a concrete blob that one version's writer may write and the other's reader rejects.

The model is the policy's: a **writer** of version W writes only members W declares (its
schema with every object closed), a **reader** of version R validates against R's schema
as written (open objects: unknown members are ignored, ``READ_IGNORE_UNKNOWN``). A
witness for direction BACKWARD is written by the old version and rejected by the new one;
for FORWARD the other way round. The one exception is ``ADDITIONAL_PROPERTIES_CLOSED``,
whose victim is a blob of a *later* writer, so its writer is the old schema left open.

hypothesis and hypothesis-jsonschema are imported only when a search needs them, and a
search that cannot run (not installed, unsatisfiable) is "no witness found".

Every witness is checked before it is returned: the writer's closed schema accepts it, the
writer's *full reader* (schema and semantic rules, ``_readers``) reads it, so an old writer
could really have produced it, and the other version's full reader rejects it. When the
targeted candidates do not separate the versions, hypothesis searches values at the
changed location; when nothing separates them the answer is ``None`` ("no witness
found"), never a guess.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema_rs
from refitwire.gate._change import Change
from refitwire.gate._document import Document
from refitwire.gate._errors import ReaderCrash
from refitwire.gate._readers import is_release, reader, rejecter
from refitwire.gate._rules import Direction, Rule
from refitwire.gate._samples import interesting, minimal_instance
from refitwire.wire import (
    KEYWORDS,
    Registry,
    is_index,
    parse_version,
    semantic_violations,
    show_pointer,
    tokens,
    version_key,
)

_UNKNOWN_MEMBER = "x-unknown-member"
_UNKNOWN_VALUES: tuple[Any, ...] = (1, "s", None, True, 0.5, [], {})


@dataclass(frozen=True)
class Witness:
    """A blob accepted under ``writer`` and rejected under ``reader``, with the reader's complaint."""

    direction: Direction
    writer: str
    reader: str
    blob: Any
    rejection: str
    writer_version: str | None = None
    reader_version: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "accepted_by": self.writer,
            "rejected_by": self.reader,
            "blob": self.blob,
            "rejection": self.rejection,
        }


def find_witness(
    change: Change, old: Document, new: Document, direction: Direction, registry: Registry
) -> Witness | None:
    """A verified witness of ``change`` breaking in ``direction`` (:func:`refuted` finds nothing
    wrong with it), or None."""
    writer, reader_doc = (old, new) if direction == "BACKWARD" else (new, old)
    open_writer = change.rule == Rule.ADDITIONAL_PROPERTIES_CLOSED
    reads = rejecter(reader_doc, registry)

    def witness(blob: Any) -> Witness | None:
        if refuted(change, writer, reader_doc, blob, registry) is not None:
            return None
        rejection = reads(blob)
        assert rejection is not None  # (refuted says so)
        return Witness(direction, _label(writer), _label(reader_doc), blob, rejection.text, writer.version,
                       reader_doc.version)  # fmt: skip

    for blob in _candidates(change, writer, reader_doc, open_writer):
        found = witness(blob)
        if found is not None:
            return found
    return _search(change, writer, witness)


def refuted(
    change: Change, writer: Document, reader_doc: Document, blob: Any, registry: Registry
) -> str | None:
    """Why ``blob`` is no witness of ``change`` from a ``writer`` to a ``reader_doc`` reader; None
    when it is one. The one check every witness passes before it is shown, whoever found it:

    * a writer of its version could write it under every rule: its schema with every object
      closed (left open for ``ADDITIONAL_PROPERTIES_CLOSED``, whose victim is a later writer's
      blob), its full reader (``_readers``: the reference at a released version), and, for a
      version the reference does not release, the rules beyond the schema of the release below
      it wherever the blob has that release's shape (the library skips those rules for a
      candidate that retypes a member they read: an ``elsize`` of integer-or-string must not
      make ``"elsize": 1`` on a ``bfloat16`` tensor writable);
    * the reader's version rejects it for the finding's reason: its first complaint is at the
      place the change is about (the value, an object holding it, or a value inside it)."""
    open_writer = change.rule == Rule.ADDITIONAL_PROPERTIES_CLOSED
    if not _validator(writer.schema if open_writer else close(writer.schema)).is_valid(blob):
        return (
            f"{_label(writer)}'s schema{'' if open_writer else ' (closed)'} rejects it: no writer writes it"
        )
    complaint = reader(writer, registry)(blob)
    if complaint is not None:
        return f"{_label(writer)}'s reader rejects it ({complaint}): no writer writes it"
    beyond = _rules_below(writer, blob, registry)
    if beyond is not None:
        return f"it breaks {beyond}, a rule {_label(writer)} keeps: no writer writes it"
    rejection = rejecter(reader_doc, registry)(blob)
    if rejection is None:
        return f"{_label(reader_doc)} reads it"
    if not _related(tokens(rejection.pointer), _steps(change)):
        return f"{_label(reader_doc)} rejects it for another reason ({rejection.text}), not at {change.path or '/'}"
    return None


def _rules_below(writer: Document, blob: Any, registry: Registry) -> str | None:
    """The first rule beyond the schema of the newest release below ``writer`` (an unreleased
    version of a known document) that ``blob`` breaks where it has that release's shape (every
    member those rules read there, of the type they compute with, whatever bound it passes);
    None for a released writer (its reader applied every rule) or a blob of another shape. The
    integer-literal rule is the writer's own where it retypes a member: kept only at places the
    writer still declares an integer."""
    kind, version = writer.kind or "", writer.version or ""
    if is_release(writer, registry) or kind not in registry.documents or parse_version(version) is None:
        return None
    key = version_key(version)
    below = [
        v for v in registry.released_versions() if version_key(v) < key and version_key(v)[:1] == key[:1]
    ]
    if not below or not _shaped(_validator(registry.load_schema(kind, below[-1])), blob):
        return None
    for v in semantic_violations(blob, below[-1], kind, registry=registry):
        place = [t if not is_index(t) else "*" for t in tokens(v.pointer) if t]
        if v.rule == "INTEGER_LITERAL" and "integer" not in _types(_sub(writer, place)):
            continue
        return f"{v.rule} at {show_pointer(v.pointer)}: {v.detail}"
    return None


def _shaped(validator: Any, blob: Any) -> bool:
    """Whether ``blob`` has every member the release's rules read, of the type they compute with:
    its schema's complaints (a bound, a pattern the candidate loosened) name no type or presence."""
    return all(
        str(e.schema_path[-1]) not in _SHAPE_KEYWORDS for e in validator.iter_errors(blob) if e.schema_path
    )


#: The keywords whose errors leave a blob the release's rules cannot read.
_SHAPE_KEYWORDS = frozenset({"type", "required", "items", "prefixItems", "$ref", "const", "enum"})


def _types(schema: dict[str, Any]) -> list[str]:
    found = schema.get("type", [])
    return [found] if isinstance(found, str) else list(found)


def _related(at: list[str], place: list[str]) -> bool:
    """Whether the value at ``at`` (tokens) and the place ``place`` (tokens, ``*`` any index) are one
    another's ancestor or the same."""
    at = [t for t in at if t]
    return all((p == "*" and is_index(a)) or p == a for a, p in zip(at, place))


def _label(document: Document) -> str:
    return f"{document.version} ({document.source})" if document.version else document.source


@functools.cache
def _compiled(text: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(text))


def _validator(schema: dict[str, Any]) -> Any:
    return _compiled(json.dumps(schema, sort_keys=True))


def close(schema: Any) -> Any:
    """``schema`` with every object that declares properties closed to unknown members."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "properties" in out and "additionalProperties" not in out and "unevaluatedProperties" not in out:
        out["additionalProperties"] = False
    for key, value in schema.items():  # each subschema, where the vocabulary says the keyword holds them
        descent = KEYWORDS[key].descent if key in KEYWORDS else None
        if descent == "map" and isinstance(value, dict):
            out[key] = {name: close(sub) for name, sub in value.items()}
        elif descent == "schema":
            out[key] = close(value)
        elif descent == "list" and isinstance(value, list):
            out[key] = [close(sub) for sub in value]
    return out


# -- candidates --------------------------------------------------------------------------------


def _candidates(change: Change, writer: Document, reader: Document, open_writer: bool) -> Iterator[Any]:
    steps = _steps(change)
    for base in _bases(writer):
        if open_writer:
            for value in _UNKNOWN_VALUES:  # one of each JSON type: at least one breaks a restriction
                yield _with(base, steps, writer, functools.partial(_add_unknown, value))
            continue
        if steps:
            yield _with(base, steps[:-1], writer, lambda node, name=steps[-1]: _drop(node, name))
        for value in interesting(_sub(writer, steps), _sub(reader, steps), writer):
            for pick in range(_picks(base, steps)):  # each entry: its siblings differ (an unknown dtype, ...)
                yield _with(base, steps, writer, None, value, pick)
        for edit in _member_edits(_sub(writer, steps), writer):
            yield _with(base, steps, writer, edit)


def _member_edits(schema: dict[str, Any], writer: Document) -> Iterator[Callable[[Any], None]]:
    """Edits of the changed object for the keywords about which members it has
    (``dependentRequired``, ``dependentSchemas``, ``if``/``then``, ``minProperties``, ...): each
    member it declares dropped, added, and dropped after every other one was added."""
    members = {name: minimal_instance(sub, writer) for name, sub in schema.get("properties", {}).items()}
    for name in members:
        for added, dropped in (((), name), ((name,), None), (tuple(members), name)):
            yield functools.partial(_set_members, {n: members[n] for n in added}, dropped)


def _set_members(added: dict[str, Any], dropped: str | None, node: Any) -> None:
    if isinstance(node, dict):
        for name, value in added.items():
            node.setdefault(name, copy.deepcopy(value))
        node.pop(dropped, None)


def _picks(base: Any, steps: list[str]) -> int:
    """How many items the first array on the path holds (at least one)."""
    node = base
    for token in steps:
        if token == "*":
            return max(1, len(node)) if isinstance(node, list) else 1
        node = node.get(token) if isinstance(node, dict) else None
    return 1


def _steps(change: Change) -> list[str]:
    """The instance path of a change as unescaped tokens (``*``: any array index)."""
    return [t for t in tokens(change.path) if t]


def _bases(writer: Document) -> Iterator[Any]:
    """Starting blobs: the golden vectors, projected onto what ``writer`` declares, then a minimal one."""
    seen = []
    for vector in _golden():
        projected = _project(vector, writer.schema, writer)
        if projected not in seen:
            seen.append(projected)
            yield projected
    minimal = minimal_instance(writer.schema, writer)
    if minimal not in seen:
        yield minimal


@functools.cache
def _golden_text() -> str:
    try:
        data = resources.files("refitwire.schema").joinpath("vectors/writer-output.json").read_text("utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return "[]"
    blobs = [json.loads(v["blob"]) for v in json.loads(data)["vectors"] if "blob" in v]
    return json.dumps(blobs)


def _golden() -> list[Any]:
    loaded: list[Any] = json.loads(_golden_text())
    return loaded


def _project(value: Any, schema: Any, document: Document) -> Any:
    schema = document.deref(schema)
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: _project(v, props[k], document) for k, v in value.items() if k in props}
    if isinstance(value, list) and isinstance(schema.get("items"), (dict, bool)):
        return [_project(v, schema["items"], document) for v in value]
    return value


def _sub(document: Document, tokens: list[str]) -> dict[str, Any]:
    """The subschema of ``document`` at an instance path ({} where it says nothing)."""
    node = document.deref(document.schema)
    for token in tokens:
        if not isinstance(node, dict):
            return {}
        if token == "*":
            node = document.deref(node.get("items", {}))
        else:
            node = document.deref(node.get("properties", {}).get(token, {}))
    return node if isinstance(node, dict) else {}


def _with(base: Any, tokens: list[str], writer: Document, edit: Any, value: Any = None, pick: int = 0) -> Any:
    """A copy of ``base`` with ``value`` set at ``tokens`` (or ``edit`` applied to the node there);
    ``pick`` chooses the item of the first array on the way."""
    blob = copy.deepcopy(base)
    if not tokens and edit is None:
        return copy.deepcopy(value)
    holder: Any = blob
    last = len(tokens) - (0 if edit is not None else 1)
    for i, token in enumerate(tokens[:last]):
        child_schema = _sub(writer, tokens[: i + 1])
        if token == "*":
            if not isinstance(holder, list):
                return blob
            if not holder:
                holder.append(minimal_instance(child_schema, writer))
            holder, pick = holder[pick if pick < len(holder) else 0], 0
        else:
            if not isinstance(holder, dict):
                return blob
            if token not in holder or not isinstance(holder[token], (dict, list)):
                holder[token] = minimal_instance(child_schema, writer)
            holder = holder[token]
    if edit is not None:
        edit(holder)
        return blob
    token = tokens[-1]
    if token == "*":
        if isinstance(holder, list):
            if holder:
                holder[0] = copy.deepcopy(value)
            else:
                holder.append(copy.deepcopy(value))
    elif isinstance(holder, dict):
        holder[token] = copy.deepcopy(value)
    return blob


def _drop(node: Any, name: str) -> None:
    if isinstance(node, dict):
        node.pop(name, None)
    elif isinstance(node, list) and name == "*":
        node.clear()


def _add_unknown(value: Any, node: Any) -> None:
    if isinstance(node, dict):
        node[_UNKNOWN_MEMBER] = copy.deepcopy(value)


def _search(change: Change, writer: Document, witness: Any) -> Witness | None:
    """Last resort: let hypothesis draw values for the changed location (the whole blob for
    an unmodelled change) until one separates the versions under the full readers."""
    import hypothesis  # the kit: a missing one is the CLI's to name, never "no witness found"
    from hypothesis_jsonschema import from_schema
    from refitwire.compat import hypothesis_draws, hypothesis_settings

    try:
        steps = _steps(change)
        base = next(_bases(writer))
        sub = _sub(writer, steps) if steps else writer.schema
        strategy = from_schema(close(writer.references.inline(sub)))
        with hypothesis_draws():
            found = hypothesis.find(
                strategy,
                lambda value: witness(_with(base, steps, writer, None, value)) is not None,
                settings=hypothesis_settings(60, shrink=False),
            )
    except ReaderCrash:  # a reader that raised is a bug in the kit, never "no witness found"
        raise
    except Exception:  # any failure to search (nothing found, unsatisfiable) is "no witness found"
        return None
    result: Witness | None = witness(_with(base, steps, writer, None, found))
    return result
