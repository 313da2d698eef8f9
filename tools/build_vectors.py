"""Build the golden vectors in schema/vectors/ (run: python tools/build_vectors.py).

The expected results are written down here from the spec, not computed by the reference
reader: the decoded form comes from `decoded()`, a direct reading of SPEC.md section 6, and
each invalid vector names its rule and pointer by hand. tests/test_vectors.py then holds the
reference implementation (and the compat matrix every other one) to these files.
Adding a vector is fine; changing the expectation of an existing one is a spec change.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import _clone
import _vector_meta
import _vector_upstream
from _vector_alias import alias_vectors, double_judged_vectors
from _vector_bounds import bound_vectors, precedence_vectors
from _vector_dimensions import arithmetic_vectors, dtype_vectors, near_miss_vectors
from _vector_dimensions import precedence_vectors as cross_stage_vectors
from _vector_grammar import grammar_vectors, legal_spellings
from _vector_guard import consistent
from _vector_invalid import invalid_vectors
from _vector_keywords import keyword_vectors
from _vector_kit import (
    D1,
    D2,
    OUT,
    WIRE,
    blob_doc,
    content_key,
    edge_blob,
    py_dumps,
    shard,
    tensor,
    vector,
    writer_vector,
)
from _vector_later import later_object_vectors
from _vector_model import literal_vectors, type_vectors
from _vector_names import name_vectors
from _vector_order import index_order_vectors, order_vectors
from _vector_stages import stage_pair_vectors
from _vector_structure import structure_vectors
from refitwire.compat.cases._cases import name_id
from refitwire.compat.cases._magnitudes import METADATA_BYTES, agent_metadata

# -- the vectors ---------------------------------------------------------------------------


def writer_outputs() -> list[dict[str, Any]]:
    return [
        writer_vector(
            "one bf16 tensor, one shard, unstamped and undigested (the blob is the same from each version)",
            blob_doc(),
            ["omit-absent"],
        ),
        writer_vector(
            "shards with digests",
            blob_doc([tensor(shards=[shard(digest=D1), shard(8192, (4, 0), digest=D2)])]),
            ["digest"],
        ),
        writer_vector(
            "digest and step (the example of the upstream facts, exact bytes)",
            blob_doc([tensor(shards=[shard(digest="0" * 32)])], step=7),
            ["digest", "step"],
        ),
        writer_vector("step 0 is written, not dropped", blob_doc(step=0), ["step", "step-zero"]),
        writer_vector("empty table", blob_doc([], step=3), ["empty-table"]),
        writer_vector(
            "non-ASCII names are written as \\u escapes",
            blob_doc([tensor(name="層.0.重み", shards=[shard(agent="agént")])], agent="agént"),
            ["unicode"],
        ),
        writer_vector(
            "several tensors and shards keep their order",
            blob_doc(
                [
                    tensor(
                        "z.last",
                        "torch.float32",
                        4,
                        (4, 6),
                        [shard(1 << 20, (0, 3), (4, 3), D2), shard(1 << 21, (0, 0), (4, 3), D1)],
                    ),
                    tensor("a.first", "torch.int8", 1, (16,), [shard(64, (8,), (8,)), shard(0, (0,), (8,))]),
                ],
                step=12,
            ),
            ["order"],
        ),
        writer_vector(
            "scalar, rank-3 and zero-size tensors",
            blob_doc(
                [
                    tensor("scalar", "torch.float32", 4, (), [shard(4096, (), ())]),
                    tensor("cube", "torch.float16", 2, (2, 3, 4), [shard(0, (1, 0, 2), (1, 3, 2))]),
                    tensor("empty", "torch.float32", 4, (0, 5), [shard(4096, (0, 0), (0, 5))]),
                ],
                step=1,
            ),
            ["geometry"],
        ),
        writer_vector(
            "addresses near 2^64 and past 2^53 (not representable as a double)",
            blob_doc(
                [tensor(shards=[shard(2**64 - 32, (0, 0), (4, 4)), shard(2**53 + 1, (4, 0), (4, 4))])],
                step=2**63 - 1,
            ),
            ["large-integers"],
        ),
        writer_vector(
            "dtype without the torch. prefix and a dtype the spec does not list",
            blob_doc(
                [
                    tensor("a", "bfloat16", 2),
                    tensor("b", "torch.float4_e2m1fn_x2", 1, (8, 4), [shard(0, (0, 0), (8, 4))]),
                ]
            ),
            ["dtype"],
        ),
        writer_vector(
            'a null metadata_endpoint in the payload is written as "" (writers always write it)',
            blob_doc(endpoint=""),
            ["endpoint-default", "upstream-writer-diverges"],
            payload={"metadata_endpoint": None},
        ),
        writer_vector(
            "replica shards (the same box twice) are each written, in order",
            blob_doc(
                [tensor(shards=[shard(4096), shard(8192, agent="agent-r1", device=1), shard(4096)])], step=4
            ),
            ["replicas"],
        ),
        writer_vector(
            "empty agent metadata and endpoint",
            blob_doc(meta=b"", endpoint=""),
            ["empty-strings"],
        ),
        writer_vector(
            "agent metadata just past 4 KiB (a NIXL agent's, binary) is carried as given, not re-encoded",
            blob_doc(meta=agent_metadata(METADATA_BYTES["meta-4-kib"])),
            ["large-metadata"],
        ),
        writer_vector(
            "one tensor name in two entries (no rule forbids it): each entry and its shards are written, in order",
            blob_doc(
                [
                    tensor("experts.w13", shards=[shard(4096, (0, 0), (4, 4))]),
                    tensor("norm", full_shape=(4,), shards=[shard(0, (0,), (4,))]),
                    tensor("experts.w13", shards=[shard(8192, (4, 0), (4, 4), agent="agent-r1", device=1)]),
                ],
                step=9,
            ),
            ["repeated-tensor-names"],
        ),
    ]


def legal_forms() -> list[dict[str, Any]]:
    doc = blob_doc([tensor(shards=[shard(digest=D1)])], step=5)
    reordered = {
        k: doc[k]
        for k in ("tensors", "publisher_step", "agent_meta_b64", "schema", "metadata_endpoint", "agent_name")
    }
    unknown = json.loads(json.dumps(doc))
    unknown["future_top"] = {"nested": [1, {"deep": None}], "n": 2**70}
    unknown["tensors"][0]["future_tensor"] = "x"
    unknown["tensors"][0]["shards"][0]["future_shard"] = [1.5, True, None]
    nulls = blob_doc([tensor(shards=[shard()])])
    nulls["tensors"][0]["shards"][0]["digest"] = None
    nulls["publisher_step"] = None
    null_endpoint = blob_doc(endpoint=None)
    no_endpoint = blob_doc()
    del no_endpoint["metadata_endpoint"]
    utf8_doc = blob_doc([tensor(name="層.0.重み")], agent="agént")
    dup = py_dumps(doc).replace(b'"publisher_step": 5', b'"publisher_step": 4, "publisher_step": 5')
    # a, b, b, a: the repeated member first in document order is the one written first (a), not
    # the one whose repetition is met first (b)
    crossed = py_dumps(doc).replace(
        b'"agent_name": "agent-r0", "metadata_endpoint": "h:1"',
        b'"agent_name": "agent-r9", "metadata_endpoint": "h:9", "metadata_endpoint": "h:1", "agent_name": "agent-r0"',
    )
    assert crossed != py_dumps(doc)
    return [
        vector("compact separators", json.dumps(doc, separators=(",", ":")).encode(), tags=["compact"]),
        vector(
            "pretty-printed with newlines and indentation",
            json.dumps(doc, indent=2).encode(),
            tags=["whitespace"],
        ),
        vector("members in another order", py_dumps(reordered), tags=["reordered"]),
        vector(
            "raw UTF-8 instead of \\u escapes",
            json.dumps(utf8_doc, ensure_ascii=False).encode(),
            tags=["unicode"],
        ),
        vector("unknown members at every level are ignored", py_dumps(unknown), tags=["unknown-keys"]),
        vector(
            "null digest and publisher_step read as absent (a writer must not produce them)",
            py_dumps(nulls),
            writer_conformant=False,
            tags=["null-optional"],
        ),
        vector(
            "a null metadata_endpoint reads as empty (released readers return None: a known divergence)",
            py_dumps(null_endpoint),
            writer_conformant=False,
            tags=["null-optional", "upstream-diverges"],
        ),
        vector("metadata_endpoint absent reads as empty", py_dumps(no_endpoint), tags=["endpoint-default"]),
        vector(
            "a repeated member name: the last one wins (a writer must not produce it)",
            dup,
            parsed=doc,
            writer_conformant=False,
            tags=["duplicate-keys"],
            or_reject=("DUPLICATE_KEYS", "/publisher_step"),
        ),
        vector(
            "two names repeated crosswise (agent_name, metadata_endpoint twice, agent_name): the last "
            "of each wins; a rejection names agent_name, the first of them in document order",
            crossed,
            parsed=doc,
            writer_conformant=False,
            tags=["duplicate-keys"],
            or_reject=("DUPLICATE_KEYS", "/agent_name"),
        ),
        vector(
            "a digest that a 1.0.0 reader does not know",
            py_dumps(blob_doc([tensor(shards=[shard(digest=D2)])])),
            tags=["digest"],
        ),
        vector(
            "a shard table decodes as a standalone table",
            py_dumps({"schema": WIRE, "tensors": [tensor(shards=[shard(digest=D1)])]}),
            document="shard-table",
            tags=["shard-table"],
        ),
        vector(
            "a rendezvous blob is also a valid shard table",
            py_dumps(doc),
            document="shard-table",
            tags=["shard-table"],
        ),
    ]


def edge_cases() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Corners of the encoding and the limits: the valid ones, then the invalid ones."""
    S = "/tensors/0/shards/0"
    deep_ok, doc = edge_blob(extra=', "x": ' + "[" * 1023 + "]" * 1023)
    proto, _ = edge_blob(extra=', "__proto__": {"agent_name": 5}')
    last, last_doc = edge_blob(addr=str(2**64 - 32))
    valid = [
        vector(
            "nesting 1024 deep in an unknown member (the reader limit, SPEC section 5)",
            deep_ok,
            parsed=doc,
            tags=["limits", "upstream-diverges"],
        ),
        vector("a __proto__ member is just an unknown member", proto, parsed=doc, tags=["unknown-keys"]),
        vector("a shard ending exactly at 2^64", last, parsed=last_doc, tags=["large-integers"]),
    ]

    def bad(
        description: str, blob: bytes, rule: str, ptr: str = "", upstream: str = "accepts", tags=None
    ) -> dict[str, Any]:
        return vector(description, blob, invalid={"*": (rule, ptr)}, upstream=upstream, tags=tags)

    invalid = [
        bad(
            "an exponent where an integer belongs",
            edge_blob(addr="4.096e3")[0],
            "INTEGER_LITERAL",
            S + "/addr",
        ),
        bad("a fraction where an integer belongs", edge_blob(addr="4096.5")[0], "TYPE", S + "/addr"),
        bad(
            "a number that overflows a double, in an unknown member",
            edge_blob(extra=', "x": 1e400')[0],
            "JSON",
        ),
        bad(
            "an integer that overflows a double, in an unknown member",
            edge_blob(extra=', "x": ' + "9" * 400)[0],
            "JSON",
        ),
        bad(
            "nesting 1025 deep in an unknown member (past the reader limit, SPEC section 5)",
            edge_blob(extra=', "x": ' + "[" * 1024 + "]" * 1024)[0],
            "JSON",
            upstream="rejects",
            tags=["limits"],
        ),
        bad("a lone surrogate in a member name", edge_blob(extra=', "\\udc00": 1')[0], "JSON"),
        bad("a reversed surrogate pair", edge_blob(extra=', "x": "\\ude00\\ud83d"')[0], "JSON"),
        bad(
            "a dtype with a trailing newline ($ matches only at the very end, as in ECMA-262)",
            edge_blob(dtype="bfloat16\\n")[0],
            "DTYPE_LABEL",
            "/tensors/0/dtype",
            tags=["ecma-262-dollar"],
        ),
        bad(
            "a form feed after the object (not JSON whitespace)",
            edge_blob()[0] + b"\x0c",
            "JSON",
            upstream="rejects",
        ),
        bad(
            "a shard ending one byte past 2^64", edge_blob(addr=str(2**64 - 31))[0], "ADDR_SPAN", S + "/addr"
        ),
    ]
    return valid, invalid


def generated() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The mechanical dimensions, generated from the wire model (tools/_vector_model.py,
    tools/_vector_dimensions.py, tools/_vector_keywords.py: every keyword of every member); a
    vector a hand-written one already is stays hand-written, and one the schema contradicts is
    left out (tools/_vector_guard.py)."""
    literal_valid, literal_invalid = literal_vectors()
    dtype_valid, dtype_invalid = dtype_vectors()
    span_valid, span_invalid = arithmetic_vectors()
    keyword_valid, keyword_invalid = keyword_vectors()
    alias_valid, alias_invalid = alias_vectors()
    structure_valid, structure_invalid = structure_vectors()
    valid = (
        literal_valid
        + dtype_valid
        + span_valid
        + keyword_valid
        + alias_valid
        + structure_valid
        + legal_spellings()
        + name_vectors()
    )
    invalid = (
        literal_invalid
        + type_vectors()
        + near_miss_vectors()
        + dtype_invalid
        + span_invalid
        + keyword_invalid
        + alias_invalid
    )
    invalid += later_object_vectors(invalid)  # each member's breaks once more in a later object
    invalid += (
        grammar_vectors()
        + structure_invalid
        + stage_pair_vectors()
        + double_judged_vectors()
        + order_vectors()
        + index_order_vectors()
    )  # the JSON text's tokens and structure; two breaks in one object
    unique: dict[str, dict[str, Any]] = {}
    for v in valid + invalid + cross_stage_vectors():
        unique.setdefault(content_key(v), v)
    kept = consistent(list(unique.values()))
    return [v for v in kept if v in valid], [v for v in kept if v not in valid]


def main(argv: list[str]) -> int:
    """Write the files, or with ``--check`` only say whether rebuilding would change them."""
    check = "--check" in argv
    if not check:
        _clone.writable()
    edges_valid, edges_invalid = edge_cases()
    bounds_valid, bounds_invalid = bound_vectors()
    generated_valid, generated_invalid = generated()
    groups = {
        "writer-output.json": (
            "Exact bytes the upstream-format writer produces for each version, with the payload it was given.",
            writer_outputs(),
        ),
        "legal-forms.json": (
            "Blobs other writers may produce (or readers must tolerate), with the decoded form per reader version.",
            legal_forms() + edges_valid + bounds_valid + generated_valid,
        ),
        "invalid.json": (
            "Blobs a reader must reject, each naming the rule and JSON pointer; `upstream` says whether the released readers tolerate it.",
            invalid_vectors() + edges_invalid + bounds_invalid + precedence_vectors() + generated_invalid,
        ),
    }
    named: dict[tuple[str, str], int] = {}
    for _, vectors in groups.values():  # two blobs a description cannot tell apart (a value cut
        for v in vectors:  # short): the later one, in build order, is the description's second
            n = named[v["document"], v["description"]] = named.get((v["document"], v["description"]), 0) + 1
            if n > 1:
                v["description"] += f" (#{n})"
                v["id"] = name_id("v", v["document"], v["description"])
    seen: set[str] = set()
    stale: list[str] = []
    for name, (description, vectors) in groups.items():
        for v in vectors:  # a vector's ID is its name: two names, or two blobs, never alike
            assert v["id"] not in seen, f"duplicate vector {v['id']}: {v['description']}"
            assert content_key(v) not in seen, f"two vectors of the same blob: {v['description']}"
            seen.update((v["id"], content_key(v)))
        text = json.dumps(
            {"$schema": "vector.schema.json", "description": description, "vectors": vectors},
            indent=2,
            ensure_ascii=False,
        )
        if check:
            same = (OUT / name).read_text(encoding="utf-8") == text + "\n"
            stale += [] if same else [name]
            continue
        (OUT / name).write_text(text + "\n", encoding="utf-8")
        print(f"{name}: {len(vectors)} vectors")
    meta_stale = _vector_meta.refresh(check)  # the versions the vectors answer for, in their own schema
    every = [v for _, vectors in groups.values() for v in vectors]
    listed = _vector_upstream.expected_failures(every)
    if _vector_upstream.EXPECTED.read_text(encoding="utf-8") != listed:
        if check:
            stale.append(str(_vector_upstream.EXPECTED.name))
        else:
            _vector_upstream.EXPECTED.write_text(listed, encoding="utf-8")
            print(f"{_vector_upstream.EXPECTED.name}: reader entries follow the vectors' upstream verdicts")
    for name in stale:
        print(f"{name}: rebuilding changes it (run python tools/build_vectors.py and review the diff)")
    if "--measure-upstream" in argv:  # then build again: the verdicts set `upstream` and the tier
        _vector_upstream.write(*_vector_upstream.measure())
        print(f"{_vector_upstream.CACHE.name}: measured; run python tools/build_vectors.py again")
        return 0
    unmeasured = (_vector_upstream.unmeasured() + _vector_upstream.stale_entries()
                  + _vector_upstream.unmeasured_refusals())  # fmt: skip
    if unmeasured:
        print(f"{len(unmeasured)} generated vectors have no upstream verdict or a stale one (first: {unmeasured[0]}):"
              " run python tools/build_vectors.py --measure-upstream with the upstream environments")  # fmt: skip
    return 1 if stale or meta_stale or (check and unmeasured) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
