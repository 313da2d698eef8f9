"""The neutral decoded form shared by the golden vectors and the testee protocol (SPEC.md section 6).

Every member the given spec version declares, at every level, except constants (``schema``):
``null`` for an absent optional member, arrays as lists, the agent metadata as base64. Read
from the wire model, so a member added to a schema file is in the decoded form with no edit.
"""

from __future__ import annotations

import base64
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

from refitwire._errors import InvalidBlob
from refitwire._models import RendezvousPayload, as_model, classes_of
from refitwire._spec import resolved
from refitwire._validate import canonical_base64, no_gc
from refitwire.wire import NO_CONST, Level, Member, Registry

__all__ = ["decoded_members", "from_decoded", "to_decoded"]

#: The payload fields that stand for top-level members under another name or form.
_PAYLOAD_FIELDS = {"agent_meta_b64": "agent_metadata"}


def decoded_members(level: Level) -> list[Member]:
    """The members of ``level`` the decoded form holds, in the schema's order (constants left out)."""
    return [m for m in level.members if m.const is NO_CONST]


def to_decoded(
    payload: RendezvousPayload, spec_version: str | None = None, registry: Registry | None = None
) -> dict[str, Any]:
    spec_version, registry = resolved(spec_version, registry)
    model = registry.wire_model("rendezvous", spec_version)
    # Each level's decoded members, read from the model once per call rather than once per
    # object: a table at the limit holds ~4 * 10^5 objects. The collector is paused while the
    # (acyclic) form is built, as the reader does (``no_gc``).
    plans = {path: _plan(model.level(*path)) for path in model.levels}
    decoded: dict[str, Any] = {}
    with no_gc():
        top = plans[()]
        children = {name: child for _, name, child in top.children}
        for name in top.names:
            child = children.get(name)
            if name == "agent_meta_b64":
                decoded[name] = base64.b64encode(payload.agent_metadata).decode("ascii")
            elif child is not None:
                decoded[name] = [_plain(t, plans, child) for t in payload.tensors]
            elif name in RendezvousPayload._fields:
                decoded[name] = getattr(payload, name)
            else:  # a member a later schema added (a candidate's too): absent is None
                decoded[name] = payload.optional_members.get(name)
    return decoded


class _Plan(NamedTuple):
    """One level's decoded members, read from the model once per call rather than once per object."""

    names: tuple[str, ...]
    get: Callable[[Any], Any]  # the members' values as one tuple
    arrays: tuple[tuple[int, str], ...]  # (index, name) of arrays of values: tuples in a model, lists here
    children: tuple[tuple[int, str, tuple[str, ...]], ...]  # (index, name, level of its items)


def _plan(level: Level) -> _Plan:
    members = decoded_members(level)
    names = tuple(m.name for m in members)
    arrays = tuple((i, m.name) for i, m in enumerate(members) if "array" in m.types and m.child is None)
    children = tuple((i, m.name, m.child) for i, m in enumerate(members) if m.child is not None)
    get = operator.attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),))
    return _Plan(names, get, arrays, children)


def _plain(obj: Any, plans: dict[tuple[str, ...], _Plan], path: tuple[str, ...]) -> dict[str, Any]:
    names, get, arrays, children = plans[path]
    values = get(obj)
    out = dict(zip(names, values))
    for i, name in arrays:
        if values[i] is not None:
            out[name] = list(values[i])
    for i, name, child in children:
        out[name] = [_plain(item, plans, child) for item in values[i]]
    return out


def from_decoded(decoded: dict[str, Any], registry: Registry | None = None) -> RendezvousPayload:
    """The payload a writer is asked to write; ``null`` or a missing optional means absent.

    A tensor that is not one raises InvalidBlob naming the rule and its pointer
    (``/tensors/<i>/shards/<j>/addr``), and so does agent metadata that is not canonical
    padded base64 (AGENT_META_BASE64: another spelling would be re-encoded, and the blob would
    not carry the payload); a document that is not a decoded form at all is DECODED_FORM.
    The tensors are ``registry``'s models (default: the default registry's).
    """
    try:
        encoded, entries = decoded["agent_meta_b64"], list(decoded["tensors"])
    except (KeyError, TypeError) as exc:
        raise InvalidBlob.single("DECODED_FORM", "", decoded, f"not a decoded payload: {exc!r}") from None
    if not isinstance(encoded, str):  # TYPE before the value's own rule (SPEC 2.7)
        raise InvalidBlob.single("TYPE", "/agent_meta_b64", encoded, "not a string")
    if not canonical_base64(encoded):
        raise InvalidBlob.single(
            "AGENT_META_BASE64", "/agent_meta_b64", encoded, "not canonical padded base64"
        )
    classes = classes_of(registry)
    top = classes.model.top
    named = set(RendezvousPayload._fields) | set(_PAYLOAD_FIELDS)
    tensor_level = classes.tensor_level
    more = {
        m.name: decoded[m.name]
        for m in top.optional
        if m.name not in named and m.child is None and decoded.get(m.name) is not None
    }
    return RendezvousPayload(
        agent_metadata=base64.b64decode(encoded),
        agent_name=decoded.get("agent_name"),  # type: ignore[arg-type]  # checked when written
        # only null is "none" (WRITE_ENDPOINT); another value of the wrong type is refused when written
        metadata_endpoint=_endpoint if (_endpoint := decoded.get("metadata_endpoint")) is not None else "",
        tensors=[as_model(classes.tensor, t, (*tensor_level, i), classes) for i, t in enumerate(entries)],
        publisher_step=decoded.get("publisher_step"),
        optional_members=more,
    )
