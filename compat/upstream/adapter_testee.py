"""Compat-matrix testee backed by a *released* ``modelexpress`` package.

Run it with the python of an environment built by ``refitwire.compat.upstream.envs``
(refitwire itself is not installed there, so this file is stdlib-only). With
``--source DIR`` it runs a source tree's code instead (``DIR`` holds the
``modelexpress`` package; it goes first on ``sys.path``) and names itself with
``--version V`` (the tree's version and commit), never with the version of a
``modelexpress`` that may be installed beside it; ``--spec-version V`` is the version it
declares (what the pull request implements; default 1.2.0), and each ``--member LEVEL:NAME``
a member V adds: it is handed to the tree's writer where the writer (or the record it builds,
``PublishedTensor``, ``PublishedShard``) takes a parameter of that name, and read back from
what the reader returns. It speaks
the matrix's JSON-lines protocol on stdin/stdout, one UTF-8 JSON object per line
each way; diagnostics go to stderr. Every request is answered by the release's own
code: ``wrap_rendezvous_blob`` / ``unwrap_rendezvous_blob`` with its
``PublishedTensor`` / ``PublishedShard``, and ``verify.tensor_digest``.

Commands:

``{"cmd": "start", "protocol": 1}``
    -> ``{"implementation": {...}, "spec_version": "1.2.0", "roles": ["reader", "writer"]}``
``{"cmd": "write", "seq": N, "payload": DECODED}``
    -> ``{"seq": N, "blob_b64": ...}``; an exception from upstream -> ``errored``.
``{"cmd": "read", "seq": N, "blob_b64": ...}``
    -> ``{"seq": N, "payload": DECODED}``, or ``{"seq": N, "rejected": true,
    "message": "<ExceptionType>: <msg>"}`` when upstream's unwrap raises.
``{"cmd": "count", "seq": N, "blob_b64": ...}``
    -> ``{"seq": N, "envelope": DECODED_BUT_TENSORS, "entries": N}``: the count-only read the
    release's quorum check makes, ``unwrap_rendezvous_blob(blob, with_tensors=False)`` and its
    ``entry_count()``; rejected as for ``read``; skipped where the release has no such read.
``{"cmd": "merge", "seq": N, "tables": [TENSORS, ...]}``
    -> ``{"seq": N, "merged": TENSORS}``: the release's ``merge_shard_tables`` of the tables
    (decoded ``tensors`` arrays, built as the writer builds them); rejected when it raises.
``{"cmd": "stop"}``
    -> no answer; exit status 0. End of input does the same.

``digest`` (protocol 1, SPEC.md section 4):

``{"cmd": "digest", "seq": N, "data_b64": ..., "dtype": "int32", "shape": [...], "box": {...}}``
    -> ``{"seq": N, "digest": ...}``: ``verify.tensor_digest`` of a CPU torch tensor
    holding exactly those bytes, viewed as ``dtype`` (``"int32"`` or
    ``"torch.int32"``) and reshaped to ``shape`` (flat when ``shape`` is absent);
    with ``box`` (``{"shard_offset": [...], "shape": [...]}``), of the box the
    release's own ``verify.shard_region`` cuts out of it, as a receiver does; and the digest
    of the box as a view of the tensor (``narrow``, as a publisher holds its shard) must be
    the same, else ``errored`` naming both.

Anything else gets ``{"seq": N, "skipped": true, "reason": "unknown command"}``;
a request that is not valid JSON, not an object, or misses a field gets
``{"seq": N|null, "errored": true, "message": ...}``. One bad request never stops
the process.

The read result is reported as upstream returns it, not normalized: the reader
``int()``s ``device_id``, ``addr``, ``elsize`` and ``publisher_step`` and turns
shapes and offsets into tuples without touching their elements, so
``"addr": "4096"`` comes back as ``4096`` while ``"shape": ["4", "4"]`` comes back
as strings. Tuples become JSON arrays; ``agent_metadata`` bytes become standard
padded base64. A value JSON cannot carry (a non-finite float) is ``errored``,
since upstream did accept the blob.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
import operator
import os
import sys
from importlib import metadata
from typing import Any

if __package__:  # imported as part of refitwire (the vector tools read SPEC_VERSION)
    from refitwire.compat.upstream.adapter_io import adapter_options, answer_text, collector, protocol_stdout
    from refitwire.compat.upstream.upstream_objects import (
        Malformed,
        Unrepresentable,
        json_image,
        published_tensors,
    )
    from refitwire.compat.upstream.upstream_objects import member as _field
else:  # run as a script inside an upstream environment: its own folder is on sys.path
    from adapter_io import adapter_options, answer_text, collector, protocol_stdout  # type: ignore[import-not-found,no-redef]
    from upstream_objects import (  # type: ignore[import-not-found,no-redef]
        Malformed,
        Unrepresentable,
        json_image,
        published_tensors,
    )
    from upstream_objects import member as _field  # type: ignore[no-redef]

PROTOCOL = 1
#: What a released modelexpress implements; a source tree declares what ``--spec-version`` says.
SPEC_VERSION = "1.2.0"
ROLES = ["reader", "writer"]
#: The levels of the blob a member sits at (``--member LEVEL:NAME``): top, tensor, shard.
LEVELS = ("", "tensors", "tensors.shards")


#: The request itself is malformed (not upstream's fault); the shard table builder raises it too.
BadRequest = Malformed
#: What a release's ``unwrap_rendezvous_blob`` returns, first four: read by name, else by position.
_PAYLOAD_FIELDS = ("agent_metadata", "agent_name", "metadata_endpoint", "tensors")


class AdapterError(Exception):
    """This adapter cannot call the tree's API or read what it returned (a class of another
    kind, say): reported as the adapter's, never as the tree's verdict on the blob."""

    def __init__(self, what: str, cause: BaseException) -> None:
        super().__init__(f"refitwire's upstream adapter: {what}, which it cannot use "
                         f"({type(cause).__name__}: {cause}); not the tree's verdict")  # fmt: skip


class TreeDisagrees(Exception):
    """Two of the tree's own paths give different answers to one question: its verdict, errored."""


def _b64decode(value: object, field: str) -> bytes:
    if not isinstance(value, str):
        raise BadRequest(f"{field} must be a base64 string, got {type(value).__name__}")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise BadRequest(f"{field} is not valid base64: {exc}") from None


def _as_given(value: object) -> object:
    """What upstream's types say: sequences as tuples; anything else untouched."""
    return tuple(value) if isinstance(value, list) else value


class _Fields:
    """The values of some members of a record the tree returned, by key from a dict (what
    ``json.loads`` gives), else by attribute (a NamedTuple, a dataclass, a pydantic model, a plain
    object); its KeyError or AttributeError when it lacks one (the adapter's error: it cannot read
    the record). Built once per record kind: a table at the limit holds ~372,000 shards."""

    def __init__(self, *names: str) -> None:
        self.by_key, self.by_attribute = operator.itemgetter(*names), operator.attrgetter(*names)

    def __call__(self, record: Any) -> Any:
        return self.by_key(record) if isinstance(record, dict) else self.by_attribute(record)


def _optional(record: Any, name: str) -> Any:
    """An optional member of a record the tree returned, found as :class:`_Fields` finds one; None
    when the record lacks it (a tree that does not read the member)."""
    return record.get(name) if isinstance(record, dict) else getattr(record, name, None)


#: What every release's ``unwrap_rendezvous_blob`` result (first four), ``PublishedTensor`` and
#: ``PublishedShard`` hold; ``digest`` and later members are read where they are.
_PAYLOAD = _Fields(*_PAYLOAD_FIELDS)
_TENSOR = _Fields("name", "dtype", "elsize", "full_shape", "shards")
_SHARD = _Fields("agent_name", "device_id", "addr", "shard_offset", "shape")


def _accepts(function: Any, name: str) -> bool:
    """Whether ``function`` (the tree's writer, or a record's constructor) takes ``name``."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


class Adapter:
    def __init__(
        self,
        rendezvous: Any,
        verify: Any,
        version: str | None = None,
        spec_version: str = SPEC_VERSION,
        members: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.rendezvous = rendezvous
        self.verify = verify
        self.version = version
        self.spec_version = spec_version
        # (level, name) of each member the declared version adds beyond the ones this file knows
        self.members = members

    def _given(self, function: Any, level: str, source: dict[str, Any]) -> dict[str, Any]:
        """The declared new members of ``level`` that ``source`` holds, for ``function`` where it
        takes them (a tree whose API does not take a member cannot write it, and the run shows that)."""
        return {
            name: _as_given(source[name])
            for at, name in self.members
            if at == level and source.get(name) is not None and _accepts(function, name)
        }

    def _read_back(self, record: Any, level: str, *at: str | int) -> dict[str, Any]:
        return {
            name: json_image(_optional(record, name), *at, name) for on, name in self.members if on == level
        }

    # -- commands --------------------------------------------------------------

    def start(self, request: dict[str, Any]) -> dict[str, Any]:
        protocol = request.get("protocol")
        if protocol != PROTOCOL:
            raise BadRequest(f"unsupported protocol {protocol!r} (this testee speaks {PROTOCOL})")
        return {
            "implementation": {
                "name": "modelexpress",
                "version": self.version or metadata.version("modelexpress"),
                "language": "python",
            },
            "spec_version": self.spec_version,
            "roles": list(ROLES),
        }

    def write(self, seq: object, request: dict[str, Any]) -> dict[str, Any]:
        payload = _field(request, "payload", "request")
        if not isinstance(payload, dict):
            raise BadRequest(f"payload must be an object, got {type(payload).__name__}")
        try:
            tensors = published_tensors(
                self.rendezvous, _field(payload, "tensors", "payload"), members=self.members
            )
        except Malformed:
            raise
        except Exception as exc:  # the tree's classes are not built as this adapter builds them
            raise AdapterError("the tree's PublishedTensor or PublishedShard", exc) from None
        agent_meta = _b64decode(_field(payload, "agent_meta_b64", "payload"), "payload.agent_meta_b64")
        agent_name = _field(payload, "agent_name", "payload")
        endpoint = _field(payload, "metadata_endpoint", "payload")
        step = payload.get("publisher_step")
        wrap = self.rendezvous.wrap_rendezvous_blob
        given = self._given(wrap, "", payload)
        with collector(on=True):  # upstream's own code
            blob = wrap(agent_meta, agent_name, endpoint, tensors, publisher_step=step, **given)
        return {"seq": seq, "blob_b64": base64.b64encode(blob).decode("ascii")}

    def read(self, seq: object, request: dict[str, Any]) -> dict[str, Any]:
        blob = _b64decode(_field(request, "blob_b64", "request"), "blob_b64")
        try:
            with collector(on=True):  # upstream's own code
                result = self.rendezvous.unwrap_rendezvous_blob(blob)
        except Exception as exc:
            return {"seq": seq, "rejected": True, "message": f"{type(exc).__name__}: {exc}"}
        try:
            decoded = self._decoded(result)
        except Unrepresentable:
            raise
        except Exception as exc:  # it read the blob; this adapter cannot read what it returned
            raise AdapterError(f"unwrap_rendezvous_blob returned a {type(result).__name__}", exc) from None
        return {"seq": seq, "payload": decoded}

    def count(self, seq: object, request: dict[str, Any]) -> dict[str, Any]:
        """The tree's count-only read, the one its quorum check makes: ``unwrap_rendezvous_blob(blob,
        with_tensors=False)``, its top-level fields and ``entry_count()``."""
        blob = _b64decode(_field(request, "blob_b64", "request"), "blob_b64")
        unwrap = self.rendezvous.unwrap_rendezvous_blob
        if not _accepts(unwrap, "with_tensors"):
            return {"seq": seq, "skipped": True, "reason": "no count-only read (unwrap_rendezvous_blob "
                    "takes no with_tensors)"}  # fmt: skip
        try:
            with collector(on=True):  # upstream's own code
                result = unwrap(blob, with_tensors=False)
        except Exception as exc:
            return {"seq": seq, "rejected": True, "message": f"{type(exc).__name__}: {exc}"}
        try:
            envelope = self._decoded(result)
            del envelope["tensors"]
            entries = result.entry_count()  # (it came with with_tensors: the tensors are left empty)
        except Unrepresentable:
            raise
        except Exception as exc:  # it read the blob; this adapter cannot read what it returned
            raise AdapterError(f"unwrap_rendezvous_blob(with_tensors=False) returned a {type(result).__name__}",
                               exc) from None  # fmt: skip
        return {"seq": seq, "envelope": envelope, "entries": json_image(entries, "entries")}

    def merge(self, seq: object, request: dict[str, Any]) -> dict[str, Any]:
        """The tree's ``merge_shard_tables`` of the tables (decoded ``tensors`` arrays) given."""
        tables = _field(request, "tables", "request")
        if not isinstance(tables, list):
            raise BadRequest("tables must be an array of decoded tables")
        merge = getattr(self.rendezvous, "merge_shard_tables", None)
        if merge is None:
            return {"seq": seq, "skipped": True, "reason": "no merge_shard_tables"}
        try:
            built = [
                published_tensors(self.rendezvous, t, f"tables[{i}]", self.members)
                for i, t in enumerate(tables)
            ]
        except Malformed:
            raise
        except Exception as exc:  # the tree's classes are not built as this adapter builds them
            raise AdapterError("the tree's PublishedTensor or PublishedShard", exc) from None
        try:
            with collector(on=True):  # upstream's own code
                merged = merge(built)
        except Exception as exc:
            return {"seq": seq, "rejected": True, "message": f"{type(exc).__name__}: {exc}"}
        try:
            return {"seq": seq, "merged": self._tensors(merged)}
        except Unrepresentable:
            raise
        except Exception as exc:
            raise AdapterError(f"merge_shard_tables returned a {type(merged).__name__}", exc) from None

    def _decoded(self, result: Any) -> dict[str, Any]:
        # By name (a dict, a NamedTuple, a dataclass, ...); by position where a release returns a
        # plain tuple (the first generations) or names them otherwise.
        try:
            named: tuple[Any, ...] = _PAYLOAD(result)
        except (KeyError, AttributeError):
            if not isinstance(result, tuple):
                raise
            named = tuple(result[:4])
        agent_metadata, agent_name, endpoint, tensors = named
        return {
            "agent_name": json_image(agent_name, "agent_name"),
            "metadata_endpoint": json_image(endpoint, "metadata_endpoint"),
            "agent_meta_b64": base64.b64encode(agent_metadata).decode("ascii"),
            "publisher_step": json_image(_optional(result, "publisher_step"), "publisher_step"),
            **self._read_back(result, ""),
            "tensors": self._tensors(tensors),
        }

    def _tensors(self, tensors: Any) -> list[dict[str, Any]]:
        out = []
        for i, t in enumerate(tensors):
            name, dtype, elsize, full_shape, shards = _TENSOR(t)
            out.append({
                "name": json_image(name, "tensors", i, "name"),
                "dtype": json_image(dtype, "tensors", i, "dtype"),
                "elsize": json_image(elsize, "tensors", i, "elsize"),
                "full_shape": json_image(full_shape, "tensors", i, "full_shape"),
                **self._read_back(t, "tensors", "tensors", i),
                "shards": [self._shard(s, "tensors", i, "shards", j) for j, s in enumerate(shards)],
            })  # fmt: skip
        return out

    def _shard(self, s: Any, *at: str | int) -> dict[str, Any]:
        agent_name, device_id, addr, shard_offset, shape = _SHARD(s)
        return {
            "agent_name": json_image(agent_name, *at, "agent_name"),
            "device_id": json_image(device_id, *at, "device_id"),
            "addr": json_image(addr, *at, "addr"),
            "shard_offset": json_image(shard_offset, *at, "shard_offset"),
            "shape": json_image(shape, *at, "shape"),
            "digest": json_image(_optional(s, "digest"), *at, "digest"),
            **self._read_back(s, "tensors.shards", *at),
        }

    def digest(self, seq: object, request: dict[str, Any]) -> dict[str, Any]:
        import torch

        data = _b64decode(_field(request, "data_b64", "request"), "data_b64")
        label = _field(request, "dtype", "request")
        if not isinstance(label, str):
            raise BadRequest("dtype must be a string such as 'int32'")
        dtype = getattr(torch, label.removeprefix("torch."), None)
        if not isinstance(dtype, torch.dtype):
            raise BadRequest(f"unknown torch dtype {label!r}")
        shape = request.get("shape")
        if shape is not None and not (isinstance(shape, list) and all(type(d) is int for d in shape)):
            raise BadRequest("shape must be an array of integers")
        raw = (
            torch.frombuffer(bytearray(data), dtype=torch.uint8)
            if data
            else torch.empty(0, dtype=torch.uint8)
        )
        tensor = raw.view(dtype)
        if shape is not None:
            tensor = tensor.reshape(shape)
        box = request.get("box")
        if box is not None and shape is None:
            raise BadRequest("a box needs the tensor's shape")
        with collector(on=True):  # upstream's own code
            if box is None:
                return {"seq": seq, "digest": self.verify.tensor_digest(tensor)}
            offset: Any = _field(box, "shard_offset", "box")
            extent: Any = _field(box, "shape", "box")
            digest = self.verify.tensor_digest(self.verify.shard_region(tensor, shape, offset, extent))
            view = tensor
            for d, (start, length) in enumerate(zip(offset, extent)):
                view = view.narrow(d, start, length)
            published = self.verify.tensor_digest(view)  # a publisher digests its shard as a view
        if published != digest:  # SPEC section 4 digests the box's bytes, however they are held
            raise TreeDisagrees(f"the tree digests the box as a view of its tensor (a publisher's shard) as "
                             f"{published}, and the box shard_region recovers (a receiver's) as {digest}")  # fmt: skip
        return {"seq": seq, "digest": digest}

    # -- dispatch --------------------------------------------------------------

    def handle(self, line: bytes) -> tuple[dict[str, Any] | None, bool]:
        """The answer to one request line (``None``: no answer) and whether to stop."""
        seq = None
        try:
            try:
                request = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                raise BadRequest(f"not a UTF-8 JSON line: {exc}") from None
            if not isinstance(request, dict):
                raise BadRequest(f"a request must be an object, got {type(request).__name__}")
            seq = request.get("seq")
            cmd = request.get("cmd")
            if cmd is None:
                raise BadRequest("request has no 'cmd'")
            if cmd == "stop":
                return None, True
            if cmd == "start":
                return self.start(request), False
            handler = {
                "write": self.write,
                "read": self.read,
                "count": self.count,
                "merge": self.merge,
                "digest": self.digest,
            }.get(cmd)
            if handler is None:
                return {"seq": seq, "skipped": True, "reason": "unknown command"}, False
            if "seq" not in request:
                raise BadRequest(f"{cmd!r} request has no 'seq'")
            return handler(seq, request), False
        except (BadRequest, Unrepresentable, AdapterError, TreeDisagrees) as exc:
            return {"seq": seq, "errored": True, "message": str(exc)}, False
        except Exception as exc:  # upstream raised while writing/digesting, or a bug here
            return {"seq": seq, "errored": True, "message": f"{type(exc).__name__}: {exc}"}, False


def main(argv: list[str] | None = None) -> int:
    options = adapter_options(sys.argv[1:] if argv is None else argv, LEVELS)
    source, version = options.get("--source"), options.get("--version")
    out = protocol_stdout()
    if source is not None:
        sys.path.insert(0, source)
    # The code under test. An import failure is fatal and reported on stderr.
    from modelexpress.refit.reshard import (
        rendezvous,
        verify,
    )

    if source is not None and not os.path.realpath(rendezvous.__file__).startswith(os.path.realpath(source)):
        raise SystemExit(f"adapter_testee.py: imported {rendezvous.__file__}, not the tree at {source}")
    adapter = Adapter(rendezvous, verify, version, options.get("--spec-version", SPEC_VERSION),
                      tuple(options["members"]))  # fmt: skip
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        with collector(on=False):  # freed before it is back: nothing left to walk
            answer, stop = adapter.handle(line)
            text = None if answer is None else answer_text(answer)
            del answer
        if text is not None:
            try:
                out.write(text + "\n")
                out.flush()
            except BrokenPipeError:
                return 0
        if stop:
            break
    out.flush()
    return 0


if __name__ == "__main__":
    status = main()
    # Every answer is written and flushed: leave without tearing down torch's modules, which
    # took 2 to 11 s per stop on a loaded two-core machine, and every run waits for its slowest stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
