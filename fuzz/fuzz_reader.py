"""Coverage-guided fuzzing of the reference reader (atheris / libFuzzer).

Every input is fed, as bytes, to the three ways a blob is read:

* ``unwrap_rendezvous_blob(data)`` (the full read),
* ``unwrap_rendezvous_blob(data, with_tensors=False)`` (the quorum read, msgspec fast path),
* ``decode_shard_table(data)`` (the standalone table),

each for every released spec version. ``InvalidBlob`` is the one documented error; any
other exception escaping is a crash. Two more properties are checked, because a fuzzer
only finds what the harness asserts:

* the quorum read accepts every blob the full read accepts, and agrees on the envelope;
  where it accepts a blob the full read rejects, the rejection is about the entries it
  does not read (a pointer under ``/tensors/``, or a JSON limit it skipped);
* an accepted blob decodes to a JSON-serializable decoded form (``to_decoded``);
* what the reader's fast path (the compiled-schema typed decode) accepts, the exact
  engine (JSON parse, jsonschema-rs, the rules) accepts too, for both document kinds.

Usage (see README.md): ``python fuzz/fuzz_reader.py -runs=20000 fuzz/corpus``.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["refitwire"]):
    from refitwire import (
        InvalidBlob,
        decode_shard_table,
        released_versions,
        to_decoded,
        unwrap_rendezvous_blob,
    )
    from refitwire._validate import fast_read, parse, violations
    from refitwire.wire import default_registry

    REGISTRY = default_registry()  # the fuzzer is an entry point: one registry for every input


def _read(fn, *args, **kwargs):
    """(True, value) on acceptance, (False, exc) on InvalidBlob; anything else propagates."""
    try:
        return True, fn(*args, **kwargs)
    except InvalidBlob as exc:
        if not exc.rule or not isinstance(exc.pointer, str):
            raise AssertionError(f"InvalidBlob without a rule or pointer: {exc!r}") from None
        str(exc)  # the message itself must render
        return False, exc


def _about_entries(exc: InvalidBlob) -> bool:
    """The quorum read leaves the entries to the table read: a rejection it may miss is one
    at or under ``/tensors/<i>``, or a JSON-level limit (depth, integer range) that only the
    full parse applies to the entries it skipped."""
    return all(v.pointer.startswith("/tensors/") or v.rule == "JSON" for v in exc.violations)


def _fast_path_agrees(data: bytes, kind: str, version: str) -> None:
    """What the compiled-schema fast path accepts, the exact engine accepts too."""
    if fast_read(data, kind, version, build=False, registry=REGISTRY) is None:
        return
    try:
        found = violations(parse(data, version, registry=REGISTRY), kind, version, REGISTRY)
    except InvalidBlob as exc:
        found = list(exc.violations)
    if found:
        raise AssertionError(f"{kind} {version}: the fast path accepts a blob that breaks {found[0]}")


def check_one(data: bytes) -> None:
    for version in released_versions():
        for kind in ("rendezvous", "shard-table"):
            _fast_path_agrees(data, kind, version)
        full_ok, full = _read(unwrap_rendezvous_blob, data, spec_version=version)
        quick_ok, quick = _read(unwrap_rendezvous_blob, data, with_tensors=False, spec_version=version)
        if full_ok and not quick_ok:
            raise AssertionError(
                f"spec {version}: the quorum read rejects a blob the full read accepts: {quick!r}"
            )
        if quick_ok and not full_ok and not _about_entries(full):
            raise AssertionError(
                f"spec {version}: the quorum read accepts a blob whose envelope is bad: {full!r}"
            )
        if full_ok:
            for member in ("agent_name", "metadata_endpoint", "agent_metadata", "publisher_step"):
                if getattr(full, member) != getattr(quick, member):
                    raise AssertionError(f"spec {version}: quorum read disagrees on {member}")
            if quick.tensor_count != len(full.tensors):
                raise AssertionError(
                    f"spec {version}: quorum count {quick.tensor_count} != {len(full.tensors)}"
                )
            to_decoded(full, version)
        _read(decode_shard_table, data, spec_version=version)


def test_one_input(data: bytes) -> None:
    check_one(data)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
