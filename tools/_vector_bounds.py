"""Vectors for every numeric bound SPEC.md states (at the bound: accepted; past it: rejected,
at each place the bound applies) and for each precedence between rules that section 2.7 states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _vector_kit import D1, blob_doc, declaring, edge_blob, mutated, py_dumps, shard, tensor, vector

S = "/tensors/0/shards/0"
T = "/tensors/0"


def _accepted(description: str, change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    doc = blob_doc(step=7)
    change(doc)
    return vector(description, py_dumps(doc), tags=["bounds"])


def _shard0(d: dict[str, Any]) -> dict[str, Any]:
    return d["tensors"][0]["shards"][0]  # type: ignore[no-any-return]


def bound_vectors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(accepted at the bound, rejected past it)."""
    at_size_max = blob_doc(
        [
            tensor(
                "huge",
                "torch.bfloat16",
                2,
                (2**63 - 1, 4),
                [
                    shard(
                        4096, (2**63 - 1, 0), (0, 4)
                    ),  # shard_offset at the bound (an empty box at the end)
                    shard(
                        4096, (0, 0), (2**63 - 1, 0)
                    ),  # shape at the bound (zero bytes: the other extent is 0)
                ],
            )
        ],
        step=7,
    )
    valid = [
        _accepted("addr 0", lambda d: _shard0(d).update(addr=0)),
        _accepted(
            "addr 2^64 - 1 for a zero-byte shard", lambda d: _shard0(d).update(addr=2**64 - 1, shape=[0, 4])
        ),
        _accepted("device_id 2^31 - 1", lambda d: _shard0(d).update(device_id=2**31 - 1)),
        vector(
            "full_shape, shard_offset and shape entries of 2^63 - 1", py_dumps(at_size_max), tags=["bounds"]
        ),
        _accepted(
            "elsize 1 for a dtype the spec does not list",
            lambda d: d["tensors"][0].update(dtype="custom_a", elsize=1),
        ),
        _accepted(
            "elsize 64 for a dtype the spec does not list",
            lambda d: d["tensors"][0].update(dtype="custom_b", elsize=64),
        ),
        _accepted(
            "publisher_step 0 and 2^63 - 1 bound the step; 2^63 - 1 here",
            lambda d: d.update(publisher_step=2**63 - 1),
        ),
    ]
    invalid = [
        mutated(
            "device_id is 2^31",
            lambda d: _shard0(d).update(device_id=2**31),
            "DEVICE_ID_RANGE",
            S + "/device_id",
            tags=["bounds"],
        ),
        mutated(
            "device_id is 2^32",
            lambda d: _shard0(d).update(device_id=2**32),
            "DEVICE_ID_RANGE",
            S + "/device_id",
            tags=["bounds"],
        ),
        mutated(
            "a full_shape entry of 2^63",
            lambda d: d["tensors"][0].update(full_shape=[2**63, 4]),
            "SIZE_RANGE",
            T + "/full_shape/0",
            tags=["bounds"],
        ),
        mutated(
            "a shard_offset entry of 2^63",
            lambda d: _shard0(d).update(shard_offset=[2**63, 0]),
            "SIZE_RANGE",
            S + "/shard_offset/0",
            tags=["bounds"],
        ),
        mutated(
            "a shape entry of 2^63",
            lambda d: _shard0(d).update(shape=[2**63, 4]),
            "SIZE_RANGE",
            S + "/shape/0",
            tags=["bounds"],
        ),
        mutated(
            "a shape entry of 2^64",
            lambda d: _shard0(d).update(shape=[4, 2**64]),
            "SIZE_RANGE",
            S + "/shape/1",
            tags=["bounds"],
        ),
        mutated(
            "a negative shard_offset entry",
            lambda d: _shard0(d).update(shard_offset=[0, -1]),
            "SIZE_RANGE",
            S + "/shard_offset/1",
            tags=["bounds"],
        ),
        mutated(
            "elsize 65",
            lambda d: d["tensors"][0].update(dtype="custom_c", elsize=65),
            "ELSIZE_RANGE",
            T + "/elsize",
            tags=["bounds"],
        ),
        mutated(
            "elsize 2^32",
            lambda d: d["tensors"][0].update(dtype="custom_d", elsize=2**32),
            "ELSIZE_RANGE",
            T + "/elsize",
            tags=["bounds"],
        ),
        mutated(
            "a digest one character too long",
            lambda d: _shard0(d).update(digest=D1 + "0"),
            "DIGEST_FORMAT",
            S + "/digest",
            tags=["bounds"],
        ),
    ]
    return valid, invalid


def _edge_bad(description: str, blob: bytes, rule: str, ptr: str) -> dict[str, Any]:
    return vector(description, blob, invalid={"*": (rule, ptr)}, upstream="accepts", tags=["precedence"])


def _box_then_type(d: dict[str, Any]) -> None:
    d["tensors"][0]["shards"] = [
        shard(4096, (6, 0), (4, 4)),
        {**shard(8192, (0, 0), (4, 4)), "device_id": "0"},
    ]


def precedence_vectors() -> list[dict[str, Any]]:
    """One vector per precedence SPEC.md section 2.7 states (each breaks more than one rule, or
    one value could be read as breaking either of two)."""
    step = edge_blob()[0].replace(b'"tensors"', b'"publisher_step": 1e300, "tensors"')
    found = [
        _edge_bad(
            "1e300 as addr: a range rule, not INTEGER_LITERAL (the range is checked with the structure)",
            edge_blob(addr="1e300")[0],
            "ADDR_RANGE",
            S + "/addr",
        ),
        _edge_bad(
            "-1.0 as addr: ADDR_RANGE, not INTEGER_LITERAL",
            edge_blob(addr="-1.0")[0],
            "ADDR_RANGE",
            S + "/addr",
        ),
        _edge_bad(
            "-1.5 as addr: TYPE comes before the range rule at the same pointer",
            edge_blob(addr="-1.5")[0],
            "TYPE",
            S + "/addr",
        ),
        vector(
            "1e300 as publisher_step: STEP_RANGE",
            step,
            invalid=dict.fromkeys(declaring("/publisher_step"), ("STEP_RANGE", "/publisher_step")),
            tags=["precedence"],
        ),
        mutated(
            "SCHEMA_ID comes before every other rule",
            lambda d: d.update(schema="other", agent_name=5),
            "SCHEMA_ID",
            "/schema",
            upstream="rejects",
            tags=["precedence"],
        ),
        mutated(
            "structure (a TYPE in the second shard) comes before geometry (a box outside the first)",
            _box_then_type,
            "TYPE",
            "/tensors/0/shards/1/device_id",
            tags=["precedence"],
        ),
    ]
    found += [
        mutated(
            "document order: /tensors/2 comes before /tensors/10",
            lambda d: d.update(
                tensors=[tensor(f"t{i}", elsize="2" if i in (2, 10) else 2) for i in range(11)]
            ),
            "TYPE",
            "/tensors/2/elsize",
            tags=["precedence", "document-order"],
        ),
        mutated(
            "document order: members in the order written, not alphabetical (name before dtype)",
            lambda d: d["tensors"][0].update(name=5, dtype="BF16"),
            "TYPE",
            T + "/name",
            tags=["precedence", "document-order"],
        ),
        mutated(
            "document order in step 4: /tensors/0/elsize (written before) comes before /publisher_step",
            lambda d: d["tensors"][0].update(elsize=2.0) or d.update(publisher_step=7.0),
            "INTEGER_LITERAL",
            T + "/elsize",
            tags=["precedence", "document-order"],
        ),
    ]
    return found
