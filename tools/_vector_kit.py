"""What the vector builders share: payload makers, the expected decoded form, vector assembly.

The spec's constants come from the reference (``refitwire._spec``, itself derived from
``schema/index.json``) rather than being restated; the members, the versions that declare
them and the decoded form (SPEC section 6) come from the wire model of each version
(``refitwire.wire``); the payloads and the rules of the hand-written vectors are written from
SPEC.md by hand, so the vectors test the reference rather than repeat it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import _clone
from refitwire import InvalidBlob, unwrap_rendezvous_blob, wire
from refitwire._spec import added_in, knows, wire_schema_id
from refitwire.compat.cases._cases import name_id
from refitwire.compat.cases._forms import decoded_document
from refitwire.compat.upstream.adapter_testee import SPEC_VERSION as UPSTREAM_READS
from refitwire.wire import version_key

#: Every version a vector states an expectation for: the released ones, then any candidate
#: (a schema file the index does not list yet), so a candidate's new members get their vectors.
VERSIONS = _clone.registry().known_versions("rendezvous")
WIRE = wire_schema_id()
OUT = Path(__file__).resolve().parent.parent / "schema" / "vectors"


def ecma_search(pattern: str, text: str, python: bool = False) -> bool:
    """Whether ``pattern`` matches ``text`` as ECMA-262 reads it (the spec's: ``$`` only at the
    very end), with Python's ``re`` (``python``: as Python reads ``$``, before a final newline too).
    A pattern ``re`` cannot read (``\\p{L}``) is left to the reference's validator, jsonschema-rs."""
    try:
        return re.search(pattern if python else pattern.replace("$", r"\Z"), text) is not None
    except re.error:
        import jsonschema_rs

        try:
            return not python and bool(jsonschema_rs.validator_for({"pattern": pattern}).is_valid(text))
        except UnicodeEncodeError:  # a lone surrogate: no letter, digit or mark of any class
            return False


def declaring(at: str, document: str = "rendezvous") -> tuple[str, ...]:
    """The versions whose schema declares the value at pointer ``at`` (the whole document, an
    object or a member): where a vector about that value states a rejection."""
    path = list(wire.path_of(at))

    def declares(model: wire.WireModel) -> bool:
        if not path or model.at(path) is not None:
            return True
        holder = model.at(path[:-1]) if isinstance(path[-1], int) else None  # an object of a level
        return holder is not None and holder.child is not None

    registry = _clone.registry()  # (once: each call stats its files)
    return tuple(v for v in VERSIONS if declares(registry.wire_model(document, v)))


def writers_of(doc: dict[str, Any], document: str = "rendezvous") -> str:
    """The versions (space-separated) whose writers emit ``doc`` for its decoded form: those that
    declare every member it has, at every level, and lack no required one."""

    def fits(obj: dict[str, Any], model: wire.WireModel, level: tuple[str, ...]) -> bool:
        declared = model.levels[level]
        if set(obj) - set(declared.names) or set(declared.required) - set(obj):
            return False
        return all(
            fits(item, model, m.child) for m in declared.members if m.child for item in obj.get(m.name, [])
        )

    registry = _clone.registry()
    return " ".join(v for v in VERSIONS if fits(doc, registry.wire_model(document, v), ()))


# -- payloads ------------------------------------------------------------------------------


def shard(
    addr: int = 4096, offset=(0, 0), shape=(4, 4), digest: str | None = None, agent="agent-r0", device=0
):
    s: dict[str, Any] = {
        "agent_name": agent,
        "device_id": device,
        "addr": addr,
        "shard_offset": list(offset),
        "shape": list(shape),
    }
    if digest is not None:
        s["digest"] = digest
    return s


def tensor(name="w0", dtype="torch.bfloat16", elsize=2, full_shape=(8, 4), shards=None):
    return {
        "name": name,
        "dtype": dtype,
        "elsize": elsize,
        "full_shape": list(full_shape),
        "shards": shards if shards is not None else [shard()],
    }


def blob_doc(tensors=None, step: int | None = None, meta=b"meta\x00\xff", agent="agent-r0", endpoint="h:1"):
    d: dict[str, Any] = {
        "schema": WIRE,
        "agent_name": agent,
        "metadata_endpoint": endpoint,
        "agent_meta_b64": base64.b64encode(meta).decode(),
        "tensors": tensors if tensors is not None else [tensor()],
    }
    if step is not None:
        d["publisher_step"] = step
    return d


def py_dumps(doc: Any) -> bytes:
    """The upstream writer's format: json.dumps with Python's defaults."""
    return json.dumps(doc).encode("utf-8")


D1 = "0123456789abcdef0123456789abcdef"
D2 = "fedcba9876543210fedcba9876543210"


# -- expected decoded form (SPEC.md section 6) ---------------------------------------------


def decoded(doc: dict[str, Any], version: str, document: str) -> dict[str, Any]:
    """What a reader of ``version`` decodes from ``doc``: every member that version's model declares
    (null when absent), the constants left out, an absent or null endpoint as "" (SPEC section 6;
    ``refitwire.to_decoded``'s form, computed from the model and not by the reference reader)."""
    return decoded_document(doc, _clone.registry().wire_model(document, version))


# -- vector assembly -----------------------------------------------------------------------


def required_first(
    blob: bytes, parsed: Any, version: str, document: str, bad: tuple[str, str] | None
) -> tuple[str, str] | None:
    """What a reader of ``version`` reports for a blob written as if ``bad`` (None: valid) were
    its only break, when ``version`` requires a member the blob lacks (a member made required in
    a new version; every blob written for the versions before lacks it): the missing member is a
    break of the schema (section 2.7 step 3), so it goes before a rule of step 4, after those of
    steps 1 and 2, and in document order among the schema's. Otherwise ``bad`` as it is."""
    import _vector_guard

    if bad is not None and _vector_guard.before_structure(bad[0]):
        return bad
    try:
        doc = parsed if parsed is not None else json.loads(blob)
    except (ValueError, RecursionError):
        return bad
    if _vector_guard.lacking(doc, version, document) is None:
        return bad
    return _vector_guard.first_schema_error(doc, version, document)


def content_key(v: dict[str, Any]) -> str:
    """What two vectors with the same bytes share (the builders keep the first of them), in the
    form vector IDs had before they named their vector: ``v-`` and 12 hex digits of
    sha256(document + "\\n" + blob), which ``tools/carry_case_ids.py`` carries lists over from."""
    blob = v["blob"].encode() if "blob" in v else base64.b64decode(v["blob_b64"])
    return "v-" + hashlib.sha256(v["document"].encode() + b"\n" + blob).hexdigest()[:12]


def vector(
    description: str,
    blob: bytes,
    *,
    document="rendezvous",
    parsed: Any = None,
    invalid: dict[str, tuple[str, str]] | None = None,
    upstream="accepts",
    written_by: list[str] | None = None,
    writer_conformant=True,
    tags: list[str] | None = None,
    or_reject: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """``invalid`` maps a version (or "*" for all) to the (rule, pointer) it must reject with;
    ``or_reject``: a (rule, pointer) the spec lets a reader reject a valid blob with instead (MAY)."""
    invalid = invalid or {}
    expect = {}
    for v in VERSIONS:
        bad = required_first(blob, parsed, v, document, invalid.get(v) or invalid.get("*"))
        if bad:
            expect[v] = {"valid": False, "rule": bad[0], "pointer": bad[1]}
        else:
            doc = parsed if parsed is not None else json.loads(blob)
            expect[v] = {"valid": True, "decoded": decoded(doc, v, document)}
            if or_reject:
                expect[v]["or_reject"] = {"rule": or_reject[0], "pointer": or_reject[1]}
    v: dict[str, Any] = {
        "id": name_id("v", document, description),  # its name, not its bytes (they gain later members)
        "description": description,
        "document": document,
    }
    try:
        v["blob"] = blob.decode("utf-8")
        if v["blob"].startswith("\ufeff"):
            raise UnicodeDecodeError("utf-8", blob, 0, 3, "BOM kept as bytes")
    except UnicodeDecodeError:
        v.pop("blob", None)
        v["blob_b64"] = base64.b64encode(blob).decode()
    v["expect"] = expect
    v["upstream"] = upstream
    if invalid and document == "rendezvous":  # what the released count-only read does with it
        import _vector_upstream

        v["upstream_count"] = _vector_upstream.upstream_count(document, blob)
    v["tier"] = tier_of(expect, upstream, tags or [])
    for version, outcome in expect.items():  # the tier a reader of that version is held to
        outcome["tier"] = version_tier(version, expect, upstream, tags or [], document, blob)
    # (a blob valid as written, rejected at a version that requires a member it lacks: REQUIRED's)
    rejected = {k: (e["rule"], e["pointer"]) for k, e in expect.items() if not e["valid"]}
    v["spec"] = spec_of(invalid or rejected, tags or [], or_reject)
    v["writer_conformant"] = writer_conformant and not invalid
    if written_by:  # the writers of these versions, given the decoded payload, emit exactly `blob`
        doc = json.loads(blob)
        v["written_by"] = [{"spec_version": w, "payload": decoded(doc, w, document)} for w in written_by]
    v["tags"] = tags or []
    return v


#: The reader rule a valid vector exercises, by tag (first match); otherwise READ_VALIDATE (a
#: blob that breaks no rule is accepted) or, for a writer's output, READ_PROJECTION.
TAG_RULES = {
    "duplicate-keys": "DUPLICATE_KEYS", "unknown-keys": "READ_IGNORE_UNKNOWN", "null-optional": "READ_NULL_IS_ABSENT",
    "endpoint-default": "READ_ENDPOINT_DEFAULT", "large-integers": "READ_EXACT_INTEGERS", "order": "READ_ORDER",
    "step-zero": "READ_STEP_UNKNOWN", "writer-output": "READ_PROJECTION",
}  # fmt: skip


def spec_of(invalid: dict[str, Any], tags: list[str], or_reject: Any) -> dict[str, str]:
    """The SPEC rule the vector's expectation follows from, and that rule's keyword for it: a
    rejection follows from the broken rule (a reader limit only SHOULD be enforced, section 5);
    an acceptance from the reader rule of its tags. Required vectors must rest on a MUST."""
    if invalid:
        rule = next(iter(invalid.values()))[0]
        return {"rule": rule, "keyword": "SHOULD" if "limits" in tags else "MUST"}
    rule = next((TAG_RULES[t] for t in tags if t in TAG_RULES), "READ_VALIDATE")
    return {"rule": rule, "keyword": "MUST"}


def tier_of(expect: dict[str, Any], upstream: str, tags: list[str]) -> str:
    """SPEC.md "Conformance tiers": Required is what the spec MUSTs and every released upstream
    reader already does; a rejection upstream does not make, a known upstream divergence and a
    reader limit (a SHOULD, section 5) are Recommended.

    Upstream's acceptance only counts where its own version must reject: a vector about a member
    the released readers' version does not know (they must ignore it) is Required for the versions
    that declare the member, so a reader of such a version that accepts it fails the run."""
    lenient_upstream = upstream == "accepts" and not expect[UPSTREAM_READS]["valid"]
    return "recommended" if lenient_upstream or {"upstream-diverges", "limits"} & set(tags) else "required"


@functools.lru_cache(maxsize=16)
def _unknown_to(registry: wire.Registry, version: str) -> tuple[str, ...]:
    """The members ``version`` does not know and the released upstream readers' version does
    (asked per vector and version: worked out once per registry, an immutable value)."""
    return tuple(
        m
        for m in added_in(registry)
        if knows(registry, UPSTREAM_READS, m) and not knows(registry, version, m)
    )


def as_read_by(version: str, blob: bytes) -> bytes:
    """``blob`` with the member names ``version`` does not know, and the released upstream
    readers' version does, renamed to names nobody knows: what the upstream readers must do
    with the blob when they read it as a ``version`` reader would (ignore those members)."""
    for member in _unknown_to(_clone.registry(), version):
        blob = re.sub(rb'"(' + re.escape(member.encode()) + rb')"(\s*:)', rb'"unknown_\1"\2', blob)
    return blob


def version_tier(
    version: str, expect: dict[str, Any], upstream: str, tags: list[str], document: str, blob: bytes
) -> str:
    """SPEC section 7 per reader version: Required is what the spec MUSTs of that version's
    readers and every released upstream reader does *when asked the same*. The released readers
    read at ``UPSTREAM_READS``; for an older version they are asked the blob with the members that
    version does not know renamed (``as_read_by``), so a value only a newer reader checks (1e400 as
    ``publisher_step``) is held to what upstream does in an unknown member (Recommended when it
    accepts it there), never to what it does in a member it knows."""
    if version_key(version) >= version_key(UPSTREAM_READS):
        return tier_of(expect, upstream, tags)
    if expect[version]["valid"]:  # reading a valid blob (ignoring what it does not know) is a MUST
        return "recommended" if {"upstream-diverges", "limits"} & set(tags) else "required"
    import _vector_upstream

    seen = as_read_by(version, blob)
    verdict = upstream if seen == blob else _vector_upstream.upstream_verdict(document, seen)
    lenient = verdict == "accepts"
    return "recommended" if lenient or {"upstream-diverges", "limits"} & set(tags) else "required"


def writer_vector(
    description: str,
    doc: dict[str, Any],
    tags: list[str],
    payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The bytes every writer that declares the members of ``doc`` emits for its decoded form
    (:func:`writers_of`); ``payload``: members that replace the decoded form's in the payload
    given to the writer."""
    versions = writers_of(doc).split()
    # named by the oldest writer that writes it, or "every writer" when every released one does
    # (a candidate's writer is not counted: a member it requires would rename the vector)
    released = _clone.registry().released_versions()
    who = "every writer" if set(released) <= set(versions) else f"{versions[0]} writer"
    v = vector(f"{who}: {description}", py_dumps(doc), written_by=versions, tags=["writer-output", *tags])
    for w in v["written_by"]:
        w["payload"].update(payload or {})
    return v


def mutated(
    description: str,
    mutate,
    rule: str,
    ptr: str,
    *,
    upstream="accepts",
    base=None,
    tags=None,
) -> dict[str, Any]:
    """A vector rejected at ``ptr`` with ``rule`` by the versions that declare the value there."""
    doc = json.loads(json.dumps(base or blob_doc(step=7)))
    mutate(doc)
    blob = py_dumps(doc)
    versions = declaring(ptr)
    return vector(
        description, blob, invalid={v: (rule, ptr) for v in versions}, upstream=upstream, tags=tags or []
    )


def raw_invalid(description: str, blob: bytes, rule: str, upstream="rejects", ptr="") -> dict[str, Any]:
    return vector(description, blob, invalid={"*": (rule, ptr)}, upstream=upstream)


def edge_blob(
    dtype: str = "torch.bfloat16", addr: str = "4096", extra: str = ""
) -> tuple[bytes, dict[str, Any]]:
    """A small blob written by hand (so numbers and escapes stay as typed), and its parsed known members."""
    doc = blob_doc([tensor(shards=[shard()])], meta=b"", agent="a")
    doc["tensors"][0]["shards"][0]["agent_name"] = "a"
    text = py_dumps(doc).decode()
    text = text.replace('"torch.bfloat16"', f'"{dtype}"').replace('"addr": 4096', f'"addr": {addr}')
    doc["tensors"][0]["shards"][0]["addr"] = int(addr) if addr.isdigit() else addr
    return (text[:-1] + extra + "}").encode(), doc


def at_one_value(rule: str) -> tuple[int, str]:
    """Where ``rule`` stands among several violations at one value (SPEC 2.7): ``REQUIRED``, then
    ``TYPE``, then the others by rule ID in ASCII order. Said here, apart from the reader's own
    sorting, so that the vectors check it."""
    return {"REQUIRED": 0, "TYPE": 1}.get(rule, 2), rule


def first_violation(blob: bytes, version: str) -> tuple[str, str] | None:
    """The (rule, pointer) the reference rejects ``blob`` with as a reader of ``version``; None: it reads it."""
    try:
        unwrap_rendezvous_blob(blob, spec_version=version)
    except InvalidBlob as exc:
        return exc.rule, exc.pointer
    return None
