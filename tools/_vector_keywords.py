"""Vectors of every keyword of every member, from the keyword generators (``compat.keywords``).

For each member of each version's model (every level, released and candidate versions alike),
each value that spans its domain is put into a valid blob, and each value that breaks one
keyword of its schema too. The expectation of every version is that version's own schema's:
a version that declares the member and whose schema rejects the value names the rule
``WireModel.rule_at`` gives the error's keyword and place, at its JSON pointer; any other
version decodes the blob (an unknown member is ignored). Nothing here names a member or a
version. A member holding a level (an array of objects: ``tensors``, ``shards``, or one a
later version adds) is broken in its own keywords and in those of the level's object (the
array's length and uniqueness, the object's required, unknown and counted members): its
items are pinned to the base blob's own, whose members have vectors of their own as members
of that level, and which keep the rules JSON Schema cannot say. A valid value that breaks a rule JSON Schema cannot say when put into the blob (a
box or a span outside its tensor, a rank that disagrees) is left out: the geometry has its
own vectors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import _clone
import jsonschema
import jsonschema_rs
from _vector_kit import VERSIONS, at_one_value, decoded, vector
from _vector_model import DOCUMENT, base, get, place, put, text
from _vector_upstream import upstream_verdict
from refitwire import InvalidBlob, from_decoded, wire, wrap_rendezvous_blob
from refitwire.compat.keywords import breaks, domain, level_breaks, level_domain, unbreakable
from refitwire.wire import EMPTY_WHEN_ABSENT, Member, semantic_violations, version_key


def keyword_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(valid, invalid): every domain value and every break of every member of every version."""
    valid, invalid = [], []
    seen: set[str] = set()
    newest = _clone.registry().released_versions()[-1]
    untested: dict[str, tuple[str, ...]] = {}  # member place -> keywords no value breaks alone
    for version in VERSIONS:
        for member in _clone.registry().wire_model(DOCUMENT, version).members():
            key = json.dumps([member.level, member.name, dict(member.schema)], sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            tags = ["keyword", f"member:{wire.pointer(*member.level, member.name)}"]
            # a released member's values in the newest release's blob, a candidate's in its own:
            # a member added later joins no blob of the members before it, so their vectors,
            # and the released writers' golden cases among them, stay as they were
            doc = base(version if version_key(version) > version_key(newest) else newest)
            if member.child is not None:
                for found in _container_vectors(doc, member, tags, version):
                    (invalid if any(not e["valid"] for e in found["expect"].values()) else valid).append(
                        found
                    )
                continue
            for value in domain(member.schema):
                # the released readers report a null endpoint as null, not "" (READ_ENDPOINT_DEFAULT)
                diverges = ["upstream-diverges"] if value is None and member.name == EMPTY_WHEN_ABSENT else []
                found = _vector(doc, member, value, f"is {_show(value)}", [*tags, *diverges])
                if found is not None:
                    (invalid if any(not e["valid"] for e in found["expect"].values()) else valid).append(
                        found
                    )
            python = jsonschema.Draft202012Validator(dict(member.schema))
            for broken in breaks(member.schema):
                # Python's re.search lets `$` match before a final newline; ECMA-262 (the spec's) does not
                dollar = ["ecma-262-dollar"] if _python_allows(python, broken.value) else []
                found = _vector(doc, member, broken.value, broken.what, [*tags, broken.keyword, *dollar])
                if found is not None:
                    invalid.append(found)
            if alone := unbreakable(dict(member.schema)):
                untested[member.place] = alone
    for at, keywords in untested.items():  # said, not failed: some keywords only break together
        print(f"{at}: no value breaks {', '.join(keywords)} alone, so no vector tests it apart")
    return valid, invalid


def _container_vectors(
    doc: dict[str, Any], member: Member, tags: list[str], version: str
) -> Iterator[dict[str, Any]]:
    """The valid values and the breaks of the keywords of array-of-objects ``member`` and of its
    level's object, the items pinned to the base blob's (see the module's text)."""
    items = get(doc, place(member))
    for n, value in enumerate(domain(member.schema)):  # whole arrays the schema allows (geometry permitting)
        found = _vector(doc, member, value, f"is value {n + 1} of its {version} schema: {_show(value)}", tags)
        if found is not None:
            yield found
    for item, value in level_domain(member.schema, items):
        found = _vector(doc, member, _in_array(items, item, value), f"is {_show(value)}", tags, item)
        if found is not None:
            yield found
    for item, broken in level_breaks(member.schema, items):
        found = _vector(
            doc, member, _in_array(items, item, broken.value), broken.what, [*tags, broken.keyword], item
        )
        if found is not None:
            yield found


def _in_array(items: list[Any], index: int | None, value: Any) -> Any:
    """``value`` as the member's array: itself, or the item at ``index`` of the base's items."""
    return value if index is None else [*items[:index], value, *items[index + 1 :]]


def _vector(
    doc: dict[str, Any], member: Member, value: Any, what: str, tags: list[str], item: int | None = None
) -> dict[str, Any] | None:
    path = place(member)
    copy = json.loads(json.dumps(doc))
    put(copy, path, value)
    expect = {v: _verdict(copy, v, member, value) for v in VERSIONS}
    if any(e == "geometry" for e in expect.values()):
        return None
    where = path if item is None else (*path, item)
    description, blob = f"{wire.pointer(*where)} {what}", text(copy)
    rejected = {v: e for v, e in expect.items() if e is not None}
    writers = [] if rejected else written_by(blob)
    return vector(description, blob, invalid=rejected, upstream=upstream_verdict(DOCUMENT, blob), tags=tags,
                  written_by=writers)  # fmt: skip


def written_by(blob: bytes) -> list[str]:
    """The versions whose writer, given the blob's decoded form, writes exactly ``blob``: each
    valid value of each member is a golden writer case of theirs too, so a writer that drops an
    empty ``shards`` or refuses a bound fails whatever the seed. Which versions is asked of the
    reference writer (the expected bytes are the blob, built from the model): a reference that
    wrote otherwise would lose the case, never change what it expects."""
    doc, found = json.loads(blob), []
    for version in VERSIONS:
        try:  # (a decoded form a version cannot take, one lacking a member it requires, is no case)
            payload = from_decoded(decoded(doc, version, DOCUMENT))
            written = wrap_rendezvous_blob(*payload[:4], payload.publisher_step, spec_version=version,
                                           **payload.optional_members)  # fmt: skip
        except InvalidBlob:
            continue
        if written == blob:
            found.append(version)
    return found


def _verdict(doc: dict[str, Any], version: str, member: Member, value: Any) -> Any:
    """None (valid), "geometry" (a rule JSON Schema cannot say), or the (rule, pointer) of ``version``."""
    model = _clone.registry().wire_model(DOCUMENT, version)
    if not model.knows(member.name, *member.level):
        return None
    at = list(place(member))
    errors = [(model.rule_at(str(e.schema_path[-1]), [*at, *e.instance_path], e.instance), wire.pointer(*at, *e.instance_path))
              for e in _validator(json.dumps(dict(model.at(at).schema), sort_keys=True)).iter_errors(value)]  # fmt: skip
    if errors:
        return min(errors, key=lambda e: (len(e[1]), *at_one_value(e[0])))
    return "geometry" if semantic_violations(doc, version, DOCUMENT, registry=_clone.registry()) else None


_VALIDATORS: dict[str, Any] = {}


def _validator(schema_json: str) -> Any:
    if schema_json not in _VALIDATORS:
        _VALIDATORS[schema_json] = jsonschema_rs.validator_for(json.loads(schema_json))
    return _VALIDATORS[schema_json]


def _show(value: Any) -> str:
    shown = json.dumps(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _python_allows(validator: Any, value: Any) -> bool:
    """Whether python-jsonschema (Python's ``re``) takes ``value``; False for a pattern ``re``
    cannot read at all (ECMA-262's ``\\p{L}``), which no Python-based reader takes either."""
    try:
        return bool(validator.is_valid(value))
    except re.error:
        return False
