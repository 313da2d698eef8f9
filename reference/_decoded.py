"""The neutral decoded form shared by the golden vectors and the testee protocol (SPEC.md section 6).

Every member the given spec version declares, at every level, except required constants
(``schema``: always there, always the same, they say nothing): ``null`` for an absent optional
member (an optional constant too, whose presence is what it says), arrays as lists, the agent metadata as base64. Read
from the wire model, so a member added to a schema file is in the decoded form with no edit.
"""

from __future__ import annotations

import base64
import functools
import keyword
from collections.abc import Callable
from typing import Any

from refitwire import _wire
from refitwire._errors import InvalidBlob
from refitwire._models import RendezvousPayload, as_model, classes_of, table_levels
from refitwire._spec import resolved
from refitwire._validate import canonical_base64, no_gc
from refitwire._wire import Level, Member, Registry, WireModel

__all__ = ["decoded_members", "from_decoded", "to_decoded"]

#: The payload fields that stand for top-level members under another name or form.
_PAYLOAD_FIELDS = {"agent_meta_b64": "agent_metadata"}


def decoded_members(level: Level) -> list[Member]:
    """The members of ``level`` the decoded form holds, in the schema's order."""
    return [m for m in level.members if m.in_decoded_form]


def to_decoded(
    payload: RendezvousPayload, spec_version: str | None = None, registry: Registry | None = None
) -> dict[str, Any]:
    spec_version, registry = resolved(spec_version, registry)
    model = registry.wire_model("rendezvous", spec_version)
    images, (table_level, _) = _images(model), table_levels(model)
    decoded: dict[str, Any] = {}
    # The collector is paused while the (acyclic) form is built, as the reader does (``no_gc``).
    with no_gc():
        for member in decoded_members(model.top):
            name = member.name
            if name == "agent_meta_b64":
                decoded[name] = base64.b64encode(payload.agent_metadata).decode("ascii")
            elif member.child == table_level:
                decoded[name] = list(map(images[member.child], payload.tensors))
            elif name in RendezvousPayload._fields:
                decoded[name] = getattr(payload, name)
            elif member.child is not None:  # a level at the top a later schema added: its objects' form
                decoded[name] = _decoded_items(payload.optional_members.get(name), member.child, model)
            else:  # a member a later schema added (a candidate's too): absent is None
                decoded[name] = payload.optional_members.get(name)
    return decoded


# per model (immutable, one per registry and version), compiled once; bounded, since every
# candidate registry has models of its own
@functools.lru_cache(maxsize=64)
def _images(model: WireModel) -> dict[tuple[str, ...], Callable[[Any], dict[str, Any]]]:
    """For each level below the top, the function that makes one object's decoded form.

    Each is compiled from the level's decoded members, as ``dataclasses`` compiles an
    ``__init__``: a table at the limit holds ~4 * 10^5 objects, and one dict display per
    object builds them in half the time a loop over the members takes (0.58 -> 0.35 s at
    the limit, against 0.40 s for ``orjson.loads`` of its bytes).
    """
    images: dict[tuple[str, ...], Callable[[Any], dict[str, Any]]] = {}
    for path in sorted(model.levels, key=len, reverse=True):  # a level's children first
        if path:
            images[path] = _compiled(model.level(*path), images)
    return images


def _compiled(
    level: Level, children: dict[tuple[str, ...], Callable[[Any], dict[str, Any]]]
) -> Callable[[Any], dict[str, Any]]:
    lines, items = ["def image(obj):"], []
    scope: dict[str, Any] = {}
    for n, member in enumerate(decoded_members(level)):
        name = member.name
        # ASCII only: Python reads another identifier as its NFKC form, maybe another name
        plain = name.isascii() and name.isidentifier() and not keyword.iskeyword(name)
        read = f"obj.{name}" if plain else f"getattr(obj, {name!r})"
        lines.append(f"    v{n} = {read}")
        if member.child is not None:  # arrays of objects: each item's own image
            scope[f"image{n}"] = children[member.child]
            value = f"None if v{n} is None else [image{n}(item) for item in v{n}]"
        elif "array" in member.types:  # tuples in a model, lists here
            value = f"None if v{n} is None else list(v{n})"
        else:
            value = f"v{n}"
        items.append(f"{name!r}: {value}")
    lines.append("    return {" + ", ".join(items) + "}")
    exec("\n".join(lines), scope)  # the names are quoted (repr) or plain ASCII identifiers
    image: Callable[[Any], dict[str, Any]] = scope["image"]
    return image


def from_decoded(decoded: dict[str, Any], registry: Registry | None = None) -> RendezvousPayload:
    """The payload a writer is asked to write; ``null`` or a missing optional means absent.

    A tensor that is not one raises InvalidBlob naming the rule and its pointer
    (``/tensors/<i>/shards/<j>/addr``), and so does agent metadata that is not canonical
    padded base64 (AGENT_META_BASE64: another spelling would be re-encoded, and the blob would
    not carry the payload); a document that is not a decoded form at all is DECODED_FORM.
    The tensors are ``registry``'s models (default: the default registry's).
    """
    try:
        encoded, table = decoded["agent_meta_b64"], decoded["tensors"]
    except (KeyError, TypeError) as exc:
        raise InvalidBlob.single("DECODED_FORM", "", decoded, f"not a decoded payload: {exc!r}") from None
    if not isinstance(encoded, str):  # TYPE before the value's own rule (SPEC 2.7)
        raise InvalidBlob.single("TYPE", "/agent_meta_b64", encoded, "not a string")
    if not isinstance(table, list):  # (an object would be read as its keys, a string as its characters)
        raise InvalidBlob.single("TYPE", "/tensors", table, "not an array")
    entries = list(table)
    if not canonical_base64(encoded):
        raise InvalidBlob.single(
            "AGENT_META_BASE64", "/agent_meta_b64", encoded, "not canonical padded base64"
        )
    classes = classes_of(_wire.registry_or_default(registry))
    top = classes.model.top
    named = set(RendezvousPayload._fields) | set(_PAYLOAD_FIELDS)
    tensor_level = classes.tensor_level
    more = {
        m.name: decoded[m.name]
        for m in top.optional
        if m.name not in named and m.child != tensor_level and decoded.get(m.name) is not None
    }
    return RendezvousPayload(
        agent_metadata=base64.b64decode(encoded),
        agent_name=decoded.get("agent_name"),  # type: ignore[arg-type]  # checked when written
        # only null is "none" (WRITE_ENDPOINT); another value of the wrong type is refused when written
        metadata_endpoint=_endpoint if (_endpoint := decoded.get("metadata_endpoint")) is not None else "",
        tensors=[as_model(classes.tensor, t, (*tensor_level, i)) for i, t in enumerate(entries)],
        publisher_step=decoded.get("publisher_step"),
        optional_members=more,
        known_members=top,
    )


def _decoded_items(items: Any, level: tuple[str, ...], model: WireModel) -> Any:
    """The decoded form of a level's plain objects: every member its version declares, ``null``
    when absent, nested levels alike (the table's own levels go through the models' images)."""
    if items is None:
        return None
    members = decoded_members(model.level(*level))
    return [
        {
            m.name: _decoded_items(item.get(m.name), m.child, model) if m.child else item.get(m.name)
            for m in members
        }
        for item in items
    ]
