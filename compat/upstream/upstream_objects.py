"""A released ``modelexpress``'s shard table objects, built from the decoded form (SPEC.md section
6), and the JSON image of the values it returns (:func:`json_image`).

Standard library only: it runs inside the released upstream environments, where refitwire
is not installed. The adapter testee beside it imports it from its own folder; the other
scripts that run there (the refit's upstream writer, the bench's upstream probe) are handed
its path (``refitwire.compat.upstream.UPSTREAM_OBJECTS``) and run it with ``runpy.run_path``.

Every member the release's ``PublishedTensor`` / ``PublishedShard`` declares is passed from
the decoded object (arrays as tuples where upstream's types say tuple; a member the object lacks
keeps the class's default), so a member a later release adds is passed with no edit here,
and one the release does not know is left out, as its writer would never see it.
"""

from __future__ import annotations

import base64
import inspect
import math
from typing import Any

__all__ = ["Malformed", "Unrepresentable", "json_image", "member", "published_tensors"]


class Malformed(Exception):
    """The decoded form is not one (not upstream's fault); the message names the place."""


def published_tensors(
    rendezvous: Any,
    tensors: object,
    where: str = "payload.tensors",
    members: tuple[tuple[str, str], ...] = (),
) -> list[Any]:
    """``rendezvous.PublishedTensor`` objects (holding ``PublishedShard`` objects) for the
    decoded form's ``tensors``; Malformed naming the place (``payload.tensors[0].shards[1]``)
    when a member the release requires is missing or an object is not one. ``members``: the
    ``(level, name)`` of members a declared version adds (``"tensors"``, ``"tensors.shards"``),
    also handed to a class that takes any keyword (``**kwargs``) where the object holds them."""
    if not isinstance(tensors, list):
        raise Malformed(f"{where} must be an array")
    tensor_members = tuple(name for level, name in members if level == "tensors")
    shard_members = tuple(name for level, name in members if level == "tensors.shards")
    out = []
    for i, tensor in enumerate(tensors):
        at = f"{where}[{i}]"
        shards = member(tensor, "shards", at)
        if not isinstance(shards, list):
            raise Malformed(f"{at}.shards must be an array")
        built = [_build(rendezvous.PublishedShard, s, f"{at}.shards[{j}]", {}, shard_members)
                 for j, s in enumerate(shards)]  # fmt: skip
        out.append(_build(rendezvous.PublishedTensor, tensor, at, {"shards": built}, tensor_members))
    return out


def _build(cls: Any, obj: object, where: str, given: dict[str, Any], extra: tuple[str, ...] = ()) -> Any:
    """``cls`` from the members of ``obj`` it declares (``given`` ones already built), by keyword:
    whatever kind of class upstream makes it (a dataclass, a NamedTuple, a pydantic model, a
    plain class), its constructor's parameters are its members, those without a default
    required; one that takes any keyword is also given the ``extra`` members ``obj`` holds."""
    values = dict(given)
    parameters = inspect.signature(cls).parameters
    if extra and isinstance(obj, dict) and any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        values.update(
            {name: obj[name] for name in extra if obj.get(name) is not None and name not in parameters}
        )
    for name, parameter in parameters.items():
        if name in values or parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue
        if parameter.default is parameter.empty or (isinstance(obj, dict) and name in obj):
            value = member(obj, name, where)
            values[name] = (
                tuple(value) if isinstance(value, list) and _is_tuple(parameter.annotation) else value
            )
    return cls(**values)


def _is_tuple(annotation: object) -> bool:
    """Whether a parameter's type (a string under postponed annotations) is a tuple."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.split("[")[0] in ("tuple", "Tuple")


def member(obj: object, key: str, where: str) -> object:
    """``obj[key]``; Malformed naming ``where`` when ``obj`` is not an object or has no ``key``."""
    if not isinstance(obj, dict):
        raise Malformed(f"{where} must be an object, got {type(obj).__name__}")
    if key not in obj:
        raise Malformed(f"{where} has no {key!r}")
    return obj[key]


class Unrepresentable(Exception):
    """Upstream returned a value the protocol cannot carry."""


#: The types JSON carries as they are: checked first, by exact type (a table at the limit holds
#: about four million values).
_PLAIN = frozenset({type(None), bool, int, str})


def json_image(value: object, *at: str | int) -> object:
    """A faithful JSON image of a value upstream returned, found at path ``at`` (a member's
    name, an item's index), which is spelled out only when the value cannot be carried."""
    if type(value) in _PLAIN or isinstance(value, (bool, int, str)):  # a subclass (an enum) too
        return value
    if isinstance(value, (list, tuple)):
        if all(type(item) in _PLAIN for item in value):  # most: a shape, an offset
            return list(value)
        return [json_image(item, *at, i) for i, item in enumerate(value)]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unrepresentable(f"{_where(at)} is {value!r}, which JSON cannot carry")
        return value
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Unrepresentable(f"{_where(at)} has a non-string key {key!r}")
            out[key] = json_image(item, *at, key)
        return out
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise Unrepresentable(f"{_where(at)} is a {type(value).__name__}: {value!r}")


def _where(at: tuple[str | int, ...]) -> str:
    """``("tensors", 3, "shards", 0, "addr")`` as ``tensors[3].shards[0].addr``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in at).lstrip(".")
