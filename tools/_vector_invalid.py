"""The invalid golden vectors a reader must reject, each naming its rule and pointer (written
from SPEC.md by hand; see tools/build_vectors.py)."""

from __future__ import annotations

from typing import Any

from _vector_kit import D1, WIRE, blob_doc, mutated, py_dumps, raw_invalid, vector
from refitwire.compat.cases._built_cases import nonzero_pad_bits


def invalid_vectors() -> list[dict[str, Any]]:
    S = "/tensors/0/shards/0"
    return [
        raw_invalid("not UTF-8", b'{"schema": "mx.reshard.shard_table.v1", "agent_name": "\xff"}', "UTF8"),
        raw_invalid("a UTF-8 byte order mark", b"\xef\xbb\xbf" + py_dumps(blob_doc()), "UTF8"),
        # Python's json.loads(bytes) sniffs UTF-16 and UTF-32 and reads them (SPEC.md says UTF-8
        # only): with a byte order mark the bytes are not UTF-8; without one, NULs between the tokens
        *(
            raw_invalid(
                f"the blob in {code.upper()}{' with a byte order mark' * bom}",
                ("\ufeff" * bom + py_dumps(blob_doc()).decode()).encode(code),
                "UTF8" if bom else "JSON",
            )
            for code in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
            for bom in (False, True)
        ),
        raw_invalid("truncated JSON", py_dumps(blob_doc())[:-7], "JSON"),
        raw_invalid("trailing data after the object", py_dumps(blob_doc()) + b" {}", "JSON"),
        raw_invalid(
            "NaN in an unknown member (Python's json accepts it)",
            py_dumps(blob_doc())[:-1] + b', "x": NaN}',
            "JSON",
            upstream="accepts",
        ),
        raw_invalid(
            "a lone surrogate escape",
            py_dumps(blob_doc()).replace(b'"agent-r0"', b'"\\ud800"', 1),
            "JSON",
            upstream="accepts",
        ),
        raw_invalid("empty input", b"", "JSON"),
        raw_invalid("top level is an array", b"[]", "OBJECT"),
        raw_invalid("top level is a string", b'"mx.reshard.shard_table.v1"', "OBJECT"),
        mutated(
            "a future major version",
            lambda d: d.update(schema="mx.reshard.shard_table.v2"),
            "SCHEMA_ID",
            "/schema",
            upstream="rejects",
        ),
        mutated("no schema member", lambda d: d.pop("schema"), "REQUIRED", "", upstream="rejects"),
        mutated("no agent_meta_b64", lambda d: d.pop("agent_meta_b64"), "REQUIRED", "", upstream="rejects"),
        mutated("no agent_name", lambda d: d.pop("agent_name"), "REQUIRED", "", upstream="rejects"),
        mutated("no tensors", lambda d: d.pop("tensors"), "REQUIRED", "", upstream="rejects"),
        *[
            mutated(
                f"a tensor without {m}",
                lambda d, m=m: d["tensors"][0].pop(m),
                "REQUIRED",
                "/tensors/0",
                upstream="rejects",
            )
            for m in ("name", "dtype", "elsize", "full_shape", "shards")
        ],
        *[
            mutated(
                f"a shard without {m}",
                lambda d, m=m: d["tensors"][0]["shards"][0].pop(m),
                "REQUIRED",
                S,
                upstream="rejects",
            )
            for m in ("agent_name", "device_id", "addr", "shard_offset", "shape")
        ],
        mutated("tensors is null", lambda d: d.update(tensors=None), "TYPE", "/tensors", upstream="rejects"),
        mutated(
            "tensors is an object",
            lambda d: d.update(tensors={"w0": {}}),
            "TYPE",
            "/tensors",
            upstream="rejects",
        ),
        mutated(
            "addr as a string (upstream int()s it)",
            lambda d: d["tensors"][0]["shards"][0].update(addr="4096"),
            "TYPE",
            S + "/addr",
        ),
        mutated(
            "elsize as a string", lambda d: d["tensors"][0].update(elsize="2"), "TYPE", "/tensors/0/elsize"
        ),
        mutated(
            "device_id as a boolean",
            lambda d: d["tensors"][0]["shards"][0].update(device_id=True),
            "TYPE",
            S + "/device_id",
        ),
        mutated(
            "shape entries as strings",
            lambda d: d["tensors"][0]["shards"][0].update(shape=["4", "4"]),
            "TYPE",
            S + "/shape/0",
        ),
        mutated("agent_name as a number", lambda d: d.update(agent_name=5), "TYPE", "/agent_name"),
        mutated(
            "publisher_step as a string",
            lambda d: d.update(publisher_step="7"),
            "TYPE",
            "/publisher_step",
        ),
        mutated(
            "digest as a number",
            lambda d: d["tensors"][0]["shards"][0].update(digest=5),
            "TYPE",
            S + "/digest",
        ),
        mutated(
            "addr written as 4096.0",
            lambda d: d["tensors"][0]["shards"][0].update(addr=4096.0),
            "INTEGER_LITERAL",
            S + "/addr",
        ),
        mutated(
            "publisher_step written as 7.0",
            lambda d: d.update(publisher_step=7.0),
            "INTEGER_LITERAL",
            "/publisher_step",
        ),
        mutated(
            "addr is 2^64",
            lambda d: d["tensors"][0]["shards"][0].update(addr=2**64),
            "ADDR_RANGE",
            S + "/addr",
        ),
        mutated(
            "addr is negative",
            lambda d: d["tensors"][0]["shards"][0].update(addr=-1),
            "ADDR_RANGE",
            S + "/addr",
        ),
        mutated(
            "device_id is negative",
            lambda d: d["tensors"][0]["shards"][0].update(device_id=-1),
            "DEVICE_ID_RANGE",
            S + "/device_id",
        ),
        mutated(
            "a negative extent",
            lambda d: d["tensors"][0]["shards"][0].update(shape=[-1, 4]),
            "SIZE_RANGE",
            S + "/shape/0",
        ),
        mutated(
            "a negative full_shape entry",
            lambda d: d["tensors"][0].update(full_shape=[8, -4]),
            "SIZE_RANGE",
            "/tensors/0/full_shape/1",
        ),
        mutated("elsize 0", lambda d: d["tensors"][0].update(elsize=0), "ELSIZE_RANGE", "/tensors/0/elsize"),
        mutated(
            "a dtype label that is not a torch name",
            lambda d: d["tensors"][0].update(dtype="BF16 (brain float)"),
            "DTYPE_LABEL",
            "/tensors/0/dtype",
        ),
        mutated(
            "agent_meta_b64 with bad padding",
            lambda d: d.update(agent_meta_b64="bWV0YQD"),
            "AGENT_META_BASE64",
            "/agent_meta_b64",
            upstream="rejects",
        ),
        mutated(
            "agent_meta_b64 with a character outside the alphabet (upstream drops it)",
            lambda d: d.update(agent_meta_b64="bWV0*YQD/"),
            "AGENT_META_BASE64",
            "/agent_meta_b64",
        ),
        *(
            mutated(
                what,
                lambda d, text=text: d.update(agent_meta_b64=text),
                "AGENT_META_BASE64",
                "/agent_meta_b64",
            )
            for what, text in nonzero_pad_bits()
        ),
        mutated(
            "digest in upper case",
            lambda d: d["tensors"][0]["shards"][0].update(digest=D1.upper()),
            "DIGEST_FORMAT",
            S + "/digest",
        ),
        mutated(
            "digest one character short",
            lambda d: d["tensors"][0]["shards"][0].update(digest=D1[:-1]),
            "DIGEST_FORMAT",
            S + "/digest",
        ),
        mutated(
            "digest with an algorithm prefix",
            lambda d: d["tensors"][0]["shards"][0].update(digest="b2:" + D1),
            "DIGEST_FORMAT",
            S + "/digest",
        ),
        mutated(
            "publisher_step is negative",
            lambda d: d.update(publisher_step=-1),
            "STEP_RANGE",
            "/publisher_step",
        ),
        mutated(
            "publisher_step is 2^63",
            lambda d: d.update(publisher_step=2**63),
            "STEP_RANGE",
            "/publisher_step",
        ),
        mutated(
            "shard_offset has fewer dims than shape",
            lambda d: d["tensors"][0]["shards"][0].update(shard_offset=[0]),
            "RANK_AGREEMENT",
            S,
        ),
        mutated(
            "shape has more dims than full_shape",
            lambda d: d["tensors"][0]["shards"][0].update(shard_offset=[0, 0, 0], shape=[4, 4, 1]),
            "RANK_AGREEMENT",
            S,
        ),
        mutated(
            "a box past the end of the tensor",
            lambda d: d["tensors"][0]["shards"][0].update(shard_offset=[6, 0]),
            "BOX_IN_BOUNDS",
            S + "/shape/0",
        ),
        mutated(
            "elsize disagrees with dtype",
            lambda d: d["tensors"][0].update(elsize=4),
            "ELSIZE_DTYPE",
            "/tensors/0/elsize",
        ),
        mutated(
            "a shard whose bytes wrap past 2^64",
            lambda d: d["tensors"][0]["shards"][0].update(addr=2**64 - 8),
            "ADDR_SPAN",
            S + "/addr",
        ),
        vector(
            "a standalone shard table is not a rendezvous blob",
            py_dumps({"schema": WIRE, "tensors": []}),
            invalid={"*": ("REQUIRED", "")},
            upstream="rejects",
        ),
        vector(
            "a shard table with a foreign schema id",
            py_dumps({"schema": "other", "tensors": []}),
            document="shard-table",
            invalid={"*": ("SCHEMA_ID", "/schema")},
            upstream="rejects",
        ),
    ]
