"""The cases every cell runs: golden vectors, seeded generated payloads, and their expectations."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import orjson
from refitwire.compat._hypothesis import (
    deterministic,
    given,
    hypothesis_seed,
    kit_draws,
    st,
)
from refitwire.compat._results import RECOMMENDED, REQUIRED, dumps_short, general
from refitwire.compat.cases import _forms, _magnitudes
from refitwire.compat.cases._json_text import first_repeated_name
from refitwire.wire import Registry, WireModel, dtype_sizes, pointer, show_pointer, spec_rules, version_key

__all__ = ["RECOMMENDED", "REQUIRED"]


@dataclass(frozen=True)
class ReadCase:
    """A blob to read, with what a reader of each spec version must do."""

    id: str
    description: str
    blob: bytes
    # By spec version; None where the case asks nothing of that version's readers.
    expect: dict[str, dict[str, Any] | None]
    tier: str
    cmd: str = "read"  # or "count": the count-only read (IMPLEMENTERS.md)

    def tier_for(self, version: str) -> str:
        """The tier a reader of ``version`` is held to (each expectation states its own)."""
        return str((self.expect.get(version) or {}).get("tier", self.tier))

    @functools.cached_property
    def repeated_name(self) -> str | None:
        """The pointer of the blob's first repeated member name (None: none): worked out once,
        not once per reader of a run."""
        return first_repeated_name(self.blob)


@dataclass(frozen=True)
class WriteCase:
    """A payload a writer of ``spec_version`` must turn into exactly ``blob``."""

    id: str
    description: str
    spec_version: str
    payload: dict[str, Any]
    blob: bytes
    # The writer rules and the payload carried are Required (SPEC 7), except where the released
    # writers write this payload otherwise (tag ``upstream-writer-diverges``); bytes are Recommended.
    tier: str = REQUIRED
    # The rule a writer may refuse the payload with instead of writing it (None: it must write it).
    may_refuse: str | None = None


@functools.cache
def vectors() -> tuple[dict[str, Any], ...]:
    folder = resources.files("refitwire.schema").joinpath("vectors")
    found: list[dict[str, Any]] = []
    for name in ("writer-output.json", "legal-forms.json", "invalid.json"):
        found += json.loads(folder.joinpath(name).read_text(encoding="utf-8"))["vectors"]
    return tuple(found)


def blob_of(vector: dict[str, Any]) -> bytes:
    return vector["blob"].encode("utf-8") if "blob" in vector else base64.b64decode(vector["blob_b64"])


@functools.cache
def read_cases() -> tuple[ReadCase, ...]:
    """Rendezvous vectors (the protocol reads rendezvous blobs only)."""
    cases = []
    for v in vectors():
        if v["document"] != "rendezvous":
            continue
        # Each vector states its tier (tools/build_vectors.py; SPEC.md "Conformance tiers").
        cases.append(ReadCase(f"read:{v['id']}", v["description"], blob_of(v), v["expect"], v["tier"]))
    return tuple(cases)


@functools.cache
def count_cases(registry: Registry) -> tuple[ReadCase, ...]:
    """The count-only read's cases (IMPLEMENTERS.md), one per read vector that asks it something.

    A valid vector is asked at its tier: the envelope and the count, read as a full read reads
    them. An invalid one is asked where the full read's first violation is a rule the count-only
    read checks: not an encoding rule (SPEC section 2.1: its pointer is the root wherever the
    bytes are, and a count-only read need not look inside the entries), nor one inside an entry
    of the table. Such a violation is also the first among the rules the count-only read checks.
    It is asked at the vector's tier where every released count-only read rejects the blob too
    (``upstream_count``, measured), else at Recommended (SPEC section 7)."""
    encoding = {rule.id for rule in spec_rules(registry).rules if rule.section.startswith("2.1 ")}
    cases = []
    for v in vectors():
        if v["document"] != "rendezvous":
            continue
        expect: dict[str, dict[str, Any] | None] = {}
        for version, e in v["expect"].items():
            inside = pointer(model_of(version, registry).table_at()[-1]) + "/"
            asked = e["valid"] or not (e["rule"] in encoding or e["pointer"].startswith(inside))
            counted = e["valid"] or v.get("upstream_count") == "rejects"
            expect[version] = ({**e, "tier": e["tier"] if counted else RECOMMENDED}) if asked else None
        if any(expect.values()):
            cases.append(
                ReadCase(f"count:{v['id']}", v["description"], blob_of(v), expect, v["tier"], cmd="count")
            )
    return tuple(cases)


@functools.cache
def write_cases() -> tuple[WriteCase, ...]:
    return tuple(
        WriteCase(
            f"write:{v['id']}@{w['spec_version']}",
            v["description"],
            w["spec_version"],
            w["payload"],
            blob_of(v),
            RECOMMENDED if "upstream-writer-diverges" in v["tags"] else REQUIRED,
        )
        for v in vectors()
        for w in v.get("written_by", [])
    )


# -- decoded-form arithmetic -----------------------------------------------------------------


def model_of(version: str, registry: Registry) -> WireModel:
    """The wire model of ``version`` in ``registry`` (default: the default registry; the run's
    holds its candidates)."""
    return registry.wire_model("rendezvous", version)


def project(payload: dict[str, Any], version: str, registry: Registry) -> dict[str, Any]:
    """The payload as a ``version`` reader or writer sees it: unknown optionals dropped, known ones present (null if absent)."""
    return _forms.project(payload, model_of(version, registry))


def expected_read(payload: dict[str, Any], writer: str, reader: str, registry: Registry) -> dict[str, Any]:
    """What ``reader`` must decode from ``writer``'s blob of ``payload``: only what both know."""
    both = min(writer, reader, key=version_key)
    return project(project(payload, both, registry), reader, registry)


def first_difference(expected: Any, got: Any) -> tuple[str, str] | None:
    """Where two decoded forms first differ: ``(symptom, account)``, or None when equal.

    Member order does not count; a value's JSON type does (``1``, ``1.0`` and ``true`` differ).
    The account speaks JSON (``null``, the root as ``""``); the symptom is the account's kind
    and pointer with indices generalised, so one bug at many places groups as one.
    """
    if _same_json(expected, got):  # the common answer, in C: a table at the limit is ~10^6 values
        return None
    return _walk(expected, got, ())


def canonical_json(value: Any) -> bytes | None:
    """``value`` as JSON text with members sorted: two decoded forms are equal (as
    :func:`first_difference` has them) when their texts are; None when orjson cannot write it
    (an integer past 64 bits), which leaves it to the walk."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None


def _same_json(expected: Any, got: Any) -> bool:
    text = canonical_json(expected)
    return text is not None and text == canonical_json(got)


def _walk(expected: Any, got: Any, path: tuple[str | int, ...]) -> tuple[str, str] | None:
    """:func:`first_difference` by walking; the path becomes a pointer only where they differ."""
    if type(expected) is not type(got):
        at = pointer(*path)
        kind = "null" if got is None else "wrong type"  # present as null: "missing" would mislead
        return (f"{kind} at {show_pointer(general(at))}",
                f"at {show_pointer(at)}: expected {dumps_short(expected)}, got {dumps_short(got)}")  # fmt: skip
    if isinstance(expected, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            if key not in got:
                where = pointer(*path, key)
                return (
                    f"member missing at {general(where)}",
                    f"at {where}: missing (expected {dumps_short(expected[key])})",
                )
            if key not in expected:
                where = pointer(*path, key)
                return (
                    f"unexpected member at {general(where)}",
                    f"at {where}: unexpected member ({dumps_short(got[key])})",
                )
            found = _walk(expected[key], got[key], (*path, key))
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(got):
            at = pointer(*path)
            return (f"length differs at {general(at)}",
                    f"at {show_pointer(at)}: expected {len(expected)} items, got {len(got)}")  # fmt: skip
        for i, (e, g) in enumerate(zip(expected, got)):
            found = _walk(e, g, (*path, i))
            if found:
                return found
        return None
    if expected == got:
        return None
    at = pointer(*path)
    return (
        f"value differs at {general(at)}",
        f"at {show_pointer(at)}: expected {dumps_short(expected)}, got {dumps_short(got)}",
    )


def conform(payload: dict[str, Any], version: str, ordinal: int, registry: Registry) -> dict[str, Any]:
    """``payload`` as a writer of ``version`` is asked to write it: each member the version's
    schema declares that the generators do not draw gets a value the schema allows (always
    when it is required, in most payloads when optional, so both its presence and its absence
    are written), at its bounds and in between, in turn by the payload's ``ordinal`` in the run.

    A payload that already has every member (any released version's) is returned as it is.
    """
    model = model_of(version, registry)
    out: dict[str, Any] | None = None
    for path, level in model.levels.items():
        # (a member holding a level is drawn whole, its objects by its schema)
        for member in level.members:
            if not member.in_decoded_form:
                continue  # a required constant is never given
            for n, obj in enumerate(_forms.objects_at(out or payload, model, path)):
                missing = member.name not in obj or (member.required and obj[member.name] is None)
                if not missing:
                    continue
                if out is None:  # copy on the first change only: most payloads stay shared
                    out = json.loads(json.dumps(payload))
                    obj = _forms.objects_at(out, model, path)[n]
                values = member_values(json.dumps(dict(member.schema), sort_keys=True))
                choice = (ordinal + n) % (len(values) + (0 if member.required else 1))
                if choice < len(values):
                    siblings = [o for o in _forms.objects_at(out, model, path) if o is not obj]
                    # a value that makes two objects of the level equal is passed over: their array
                    # may say uniqueItems (an optional member left absent when every value would)
                    for k in range(len(values)):
                        obj[member.name] = values[(choice + k) % len(values)]
                        if obj not in siblings:
                            break
                    else:
                        if not member.required:
                            del obj[member.name]
    return payload if out is None else out


@functools.cache
def member_values(schema_json: str) -> tuple[Any, ...]:
    """Values ``schema`` allows, for payloads that exercise a member: the values that span its
    domain (``keywords.domain``: every enum value, both bounds and between, the shortest and longest
    string, the empty and full array, each optional inner member present and absent), null
    left out (a payload's absent member is its absence)."""
    from refitwire.compat.keywords import domain

    return tuple(v for v in domain(json.loads(schema_json)) if v is not None)


#: The prefix of every generated case's ID (``gen-<n>``, ``gen-<string class>``).
GENERATED = "gen"


def name_id(prefix: str, *name: str) -> str:
    """``prefix-`` and 12 hex digits of the sha256 of a case's name (its document, its
    description; a refusal's rule and description): what the case tests, never its payload,
    so a member added to the payload, or to the schema beside it, leaves the ID as it was."""
    return f"{prefix}-{hashlib.sha256(chr(10).join(name).encode()).hexdigest()[:12]}"


def content_id(prefix: str, payload: Any) -> str:
    """``prefix-`` and 12 hex digits of the sha256 of ``payload``'s JSON (keys sorted): the
    form case IDs had before they named their subject. Kept to carry lists keyed by those IDs
    over (``tools/carry_case_ids.py``), never as a case's ID."""
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
    return f"{prefix}-{digest}"


# -- generated payloads ---------------------------------------------------------------------

_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)  # not encodable as UTF-8
#: Strings where JSON encoders differ (WRITE_FORMAT): every generated payload set holds one
#: payload per class, and Hypothesis also draws them as whole names.
STRING_CLASSES = {
    "controls": "".join(map(chr, range(0x20))),
    "del-and-c1": "\x7f\x80\x9f\xa0",
    "quote-backslash-slash": '"\\/"\\',
    "bmp": "é層\u2028\u2029\ufeff\ufffd\uffff",
    "astral": "😀𝄞\U00010000\U0010ffff",
    "long": "n" * 4096 + "層",
    # changed by every Unicode normalization form (NFC composes e + U+0301, maps U+212B and
    # U+F900; NFD decomposes them; NFKC and NFKD split U+FB01): names are carried as written
    "unnormalized": "e\u0301\u212b\uf900\ufb01",
}
_text = st.text(st.characters(codec="utf-8", exclude_categories=_SURROGATES), max_size=10) | st.sampled_from(
    sorted(STRING_CLASSES.values())
)
_addr_edges = st.sampled_from([0, 4096, 2**53 - 1, 2**53 + 1, 2**63, 2**64 - 2**20])


@st.composite
def decoded_tensors(draw: Any, registry: Registry) -> dict[str, Any]:
    dtypes = sorted((f"torch.{name}", size) for name, size in dtype_sizes(registry).items() if name[0] != "c")
    dtype, elsize = draw(st.sampled_from(dtypes))
    full_shape = draw(st.lists(st.integers(0, 8), max_size=3))
    shards = []
    for _ in range(draw(st.integers(0, 3))):
        offset = [draw(st.integers(0, n)) for n in full_shape]
        shape = [draw(st.integers(0, n - o)) for n, o in zip(full_shape, offset)]
        nbytes = elsize
        for extent in shape:
            nbytes *= extent
        addr = draw(_addr_edges | st.integers(0, 2**64 - 1)) % (2**64 - nbytes)
        shards.append({
            "agent_name": draw(_text), "device_id": draw(st.integers(0, 7)), "addr": addr,
            "shard_offset": offset, "shape": shape,
            "digest": draw(st.none() | st.text("0123456789abcdef", min_size=32, max_size=32)),
        })  # fmt: skip
    return {"name": draw(_text), "dtype": dtype, "elsize": elsize, "full_shape": full_shape, "shards": shards}


def decoded_payloads(registry: Registry) -> st.SearchStrategy[dict[str, Any]]:
    """Decoded payloads of ``registry``'s released members, with its dtypes."""
    return st.fixed_dictionaries({
    "agent_name": _text,
    "metadata_endpoint": _text,
    "agent_meta_b64": st.binary(max_size=48).map(lambda b: base64.b64encode(b).decode()),
    "publisher_step": st.none() | st.just(0) | st.integers(0, 2**63 - 1),
    "tensors": st.lists(decoded_tensors(registry), max_size=4),
})  # fmt: skip


def generated_payloads(seed: int, count: int, registry: Registry) -> dict[str, dict[str, Any]]:
    """Up to ``count`` distinct payloads drawn by Hypothesis, then one per string class and one
    per magnitude class, by case ID: ``gen-N`` for the N-th distinct draw (the same for the same
    seed and registry), ``gen-CLASS`` for a class of :data:`STRING_CLASSES` (``gen-astral``) or
    of ``_magnitudes.MAGNITUDE_CLASSES`` (``gen-meta-64-kib``: built, at every seed)."""
    drawn: list[dict[str, Any]] = []

    @hypothesis_seed(seed)
    @deterministic(max(count, 1), shrink=False, seeded=True)
    @given(decoded_payloads(registry))
    def collect(payload: dict[str, Any]) -> None:
        drawn.append(payload)

    if count > 0:
        with kit_draws():
            collect()
    named: dict[str, dict[str, Any]] = {}
    for payload in drawn:  # the n-th distinct draw of the seed is gen-n, whatever it holds
        if payload not in named.values():
            named[f"{GENERATED}-{len(named)}"] = payload
    named.update(
        (f"{GENERATED}-{name}", string_class_payload(text)) for name, text in sorted(STRING_CLASSES.items())
    )
    named.update((f"{GENERATED}-{name}", p) for name, p in _magnitudes.magnitude_payloads(registry).items())
    return named


def string_class_payload(text: str) -> dict[str, Any]:
    """A payload carrying ``text`` in every string member a writer escapes."""
    shard = {
        "agent_name": text,
        "device_id": 0,
        "addr": 4096,
        "shard_offset": [0],
        "shape": [2],
        "digest": None,
    }
    return {
        "agent_name": text, "metadata_endpoint": text, "agent_meta_b64": "bWV0YQ==", "publisher_step": None,
        "tensors": [{"name": text, "dtype": "torch.float32", "elsize": 4, "full_shape": [2], "shards": [shard]}],
    }  # fmt: skip
