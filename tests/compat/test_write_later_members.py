"""An older writer handed a newer reader's decoded form: the members a later version added (a
1.0.0 writer gets each shard's ``digest`` and the ``publisher_step``) must not reach its blob
(WRITE_KNOWN_MEMBERS). A writer that serialises its payload whole is caught at every seed,
by the ``+unknown`` write cases."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from refitwire import wire
from refitwire.compat.cases import _write_unknown
from refitwire.compat.runner import _checks
from refitwire.compat.testees.reference import answer


class _Writer:
    """The reference writer of ``version`` in-process; ``copies``: it also copies into its blob
    every payload member the newest version declares and ``version`` does not, at every level,
    as a writer built for the newest version and told an older one might."""

    def __init__(self, version: str, copies: bool) -> None:
        self.version, self.copies, self.label, self.stderr = version, copies, f"writer@{version}", []
        self.testee = self

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        reply = answer(
            {**message, "payload": _known(message.get("payload"))}, self.version, wire.default_registry()
        )
        if not self.copies or "blob_b64" not in reply:
            return reply
        doc = json.loads(base64.b64decode(reply["blob_b64"]))
        _copy_later(
            doc, message["payload"], (), wire.default_registry().wire_model("rendezvous", self.version)
        )
        return {**reply, "blob_b64": base64.b64encode(json.dumps(doc).encode()).decode()}


def _copy_later(
    obj: dict[str, Any], given: dict[str, Any], level: tuple[str, ...], model: wire.WireModel
) -> None:
    """Into ``obj`` (a written object of ``level``), the members of ``given`` (its payload
    object) that the newest version declares and ``model``'s does not; the levels below alike."""
    newest = wire.default_registry().newest_model().level(*level)
    for member in newest.members:
        value = given.get(member.name)
        if member.name not in model.level(*level) and value is not None:
            obj[member.name] = value
        elif member.child is not None and member.name in obj:
            for written, asked in zip(obj[member.name], value or [], strict=True):
                _copy_later(written, asked, member.child, model)


def _known(value: Any) -> Any:
    """``value`` without the members no version declares (``future_*``): dropped, not refused."""
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items() if not k.startswith("future_")}
    return [_known(v) for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_a_writer_that_writes_a_later_versions_members_is_caught(version: str) -> None:
    cases = _write_unknown.unknown_member_cases(version, wire.default_registry())
    for copies in (False, True):
        writer = _Writer(version, copies)
        failed = [
            r
            for case in cases
            for r in _checks.write_vector(writer, case, wire.default_registry())
            if r.outcome.bad
        ]
        if not copies:
            assert not failed, failed[:3]
        else:
            assert failed and all(
                "WRITE_KNOWN_MEMBERS" in r.message for r in failed if not r.case.endswith(":bytes")
            )
