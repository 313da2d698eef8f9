"""Witnesses for changes to SPEC.md's rules: blobs the reference reader of a released version reads
or rejects, built where a blob can show the break (gate/_spec.py says which changes)."""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from refitwire.gate._rules import Direction
from refitwire.gate._witness import Witness
from refitwire.wire import Registry

#: The reference reader of a released version: None when it reads the blob, else its rejection.
Reads = Callable[[bytes, str], "str | None"]


def witness(direction: Direction, version: str, spec_rule: str | None, limit: tuple[int, int] | None,
             dtype: tuple[str, int | None, int | None] | None, registry: Registry) -> Witness | None:  # fmt: skip
    """A blob that shows the break, checked by the reference reader of the released ``version``
    (``registry``'s)."""
    if version not in registry.released_versions():
        return None
    reads = functools.partial(_reads, registry=registry)
    if limit is not None and spec_rule == "BLOB_SIZE":
        return (_size_witness if direction == "BACKWARD" else _over_old_limit_witness)(version, *limit, reads)
    if dtype is not None and direction == "BACKWARD" and dtype[2] is not None:
        return _dtype_witness(version, dtype[0], dtype[2], reads)
    if spec_rule is not None and direction == "FORWARD" and limit is None and dtype is None:
        return _rule_witness(version, spec_rule, reads)
    return None


def _reads(blob: bytes, version: str, *, registry: Registry) -> str | None:
    """None when the reference reader of ``version`` reads ``blob``, else its rejection."""
    from refitwire import InvalidBlob, unwrap_rendezvous_blob

    try:
        unwrap_rendezvous_blob(blob, spec_version=version, registry=registry)
    except InvalidBlob as exc:
        return f"{exc.rule} at {json.dumps(exc.pointer)}: {exc}"
    return None


def _vectors(name: str) -> list[dict[str, Any]]:
    data = resources.files("refitwire.schema").joinpath("vectors").joinpath(name).read_bytes()
    vectors: list[dict[str, Any]] = json.loads(data)["vectors"]
    return vectors


def _base_blob(version: str, reads: Reads) -> dict[str, Any] | None:
    """A blob a writer of ``version`` wrote (the golden writer output), that its reader reads."""
    for vector in _vectors("writer-output.json"):
        blob = json.loads(vector["blob"]) if isinstance(vector.get("blob"), str) else vector.get("blob")
        valid = vector.get("expect", {}).get(version, {}).get("valid")
        readable = isinstance(blob, dict) and valid and reads(json.dumps(blob).encode(), version) is None
        if vector.get("document") == "rendezvous" and readable and isinstance(blob, dict):
            return dict(blob)
    return None


def _size_witness(version: str, old_limit: int, new_limit: int, reads: Reads) -> Witness | None:
    """A blob of ``new_limit + 1`` bytes (at most ``old_limit``) that ``version``'s reader reads."""
    blob = _blob_of(version, new_limit + 1, reads) if new_limit < old_limit else None
    if blob is None or reads(json.dumps(blob).encode(), version) is not None:
        return None
    rejection = f'BLOB_SIZE at "": {new_limit + 1} bytes is over the new limit of {new_limit} bytes'
    return Witness("BACKWARD", f"{version} (the ref's SPEC.md)", f"{version} (SPEC.md as changed)", blob, rejection,
                   version, version)  # fmt: skip


def _over_old_limit_witness(version: str, old_limit: int, new_limit: int, reads: Reads) -> Witness | None:
    """A blob of ``old_limit + 1`` bytes (at most ``new_limit``), valid but for its size: the
    raised limit lets a writer write it, and ``version``'s reader, held to the old limit, rejects it."""
    blob = _blob_of(version, old_limit + 1, reads) if old_limit < new_limit else None
    if blob is None:
        return None
    read = reads(json.dumps(blob).encode(), version)  # this process may hold either limit
    if read is not None and not read.startswith("BLOB_SIZE "):
        return None
    rejection = f'BLOB_SIZE at "": {old_limit + 1} bytes is over the limit of {old_limit} bytes'
    return Witness("FORWARD", f"{version} (SPEC.md as changed)", f"{version} (the ref's SPEC.md)", blob, rejection,
                   version, version)  # fmt: skip


def _blob_of(version: str, size: int, reads: Reads) -> dict[str, Any] | None:
    """A golden writer blob of ``version`` grown to exactly ``size`` bytes (its metadata and agent name)."""
    base = _base_blob(version, reads)
    if base is None:
        return None
    base["agent_meta_b64"] = ""
    room = size - len(json.dumps(base).encode())
    if room < 4:
        return None
    words, extra = divmod(room, 4)
    base["agent_meta_b64"] = base64.b64encode(bytes(3 * words)).decode("ascii")
    base["agent_name"] = str(base["agent_name"]) + "x" * extra
    return base if len(json.dumps(base).encode()) == size else None


def _dtype_witness(version: str, label: str, size: int, reads: Reads) -> Witness | None:
    base = _base_blob(version, reads)
    if base is None or not base.get("tensors"):
        return None
    other = 1 if size != 1 else 2
    base["tensors"] = [dict(base["tensors"][0], dtype=f"torch.{label}", elsize=other)]
    if reads(json.dumps(base).encode(), version) is not None:
        return None
    rejection = f'ELSIZE_DTYPE at "/tensors/0/elsize": {label} is {size} bytes, elsize says {other}'
    return Witness("BACKWARD", f"{version} (the ref's SPEC.md)", f"{version} (SPEC.md as changed)", base, rejection,
                   version, version)  # fmt: skip


def _rule_witness(version: str, rule_id: str, reads: Reads) -> Witness | None:
    """A golden vector that ``version``'s reader rejects by ``rule_id`` (and, since the vector breaks
    that one rule, nothing else): with the rule gone or weakened a writer may write it."""
    for vector in _vectors("invalid.json"):
        expect = vector.get("expect", {}).get(version, {})
        if vector.get("document") != "rendezvous" or expect.get("rule") != rule_id:
            continue
        raw = (
            base64.b64decode(vector["blob_b64"])
            if "blob_b64" in vector
            else str(vector.get("blob", "")).encode()
        )
        try:
            blob = json.loads(raw)
        except ValueError:
            continue
        rejection = reads(json.dumps(blob).encode(), version)
        if rejection is not None and rejection.startswith(f"{rule_id} "):
            return Witness("FORWARD", f"{version} (SPEC.md as changed)", f"{version} (the ref's SPEC.md)", blob,
                           f"{rejection} (golden vector {vector['id']}: {vector.get('description', '')})",
                           version, version)  # fmt: skip
    return None


def refuted(
    witness: Witness, spec_rule: str | None, old_side: Registry, new_side: Registry
) -> tuple[str | None, str | None]:
    """Why ``witness`` shows no break of ``spec_rule`` (None: it does), and the reader's own
    complaint. The check every SPEC witness passes before it is shown: the reference as the
    writer's side of SPEC.md says (``old_side`` for BACKWARD, ``new_side`` for FORWARD) reads it
    at the writer's version, but for the very rule the change takes away (a rule removed or
    weakened, a limit raised: what that side no longer holds its writers to), and the reference
    as the reader's side says rejects it at the reader's version by ``spec_rule``."""
    writers, readers = (old_side, new_side) if witness.direction == "BACKWARD" else (new_side, old_side)
    data = json.dumps(witness.blob).encode()
    wrote = _complaint(data, witness.writer_version, writers)
    if wrote is not None and not (witness.direction == "FORWARD" and wrote[0] == spec_rule):
        return f"{witness.writer_version}'s writer could not write it: {wrote[1]}", None
    read = _complaint(data, witness.reader_version, readers)
    if read is None:
        return f"{witness.reader_version}'s reader reads it", None
    if read[0] != spec_rule:
        return f"{witness.reader_version}'s reader rejects it for another reason: {read[1]}", None
    return None, read[1]


def _complaint(blob: bytes, version: str | None, registry: Registry) -> tuple[str | None, str] | None:
    """The rule and complaint of the reference reader of ``version`` in ``registry``; None when it reads ``blob``."""
    if version is None or version not in registry.known_versions():
        return None, f"no reader of {version} to ask"
    from refitwire import InvalidBlob, unwrap_rendezvous_blob

    try:
        unwrap_rendezvous_blob(blob, spec_version=version, registry=registry)
    except InvalidBlob as exc:
        return exc.rule, f"{exc.rule} at {json.dumps(exc.pointer)}: {exc}"
    return None
