"""Every invalid message names its member: what is missing or wrong, and what it must be.

A reply that breaks response.json is explained from response.json itself (compat/_protocol.py:
the kind it means, then that kind's own errors), so these tests walk the schema's kinds and
required members instead of listing them: a member or kind added to the schema is tested
here without a new line, and a message that falls back to the validator's 'oneOf' wording
fails. The end-to-end tests send malformed replies through the runner's own exchange from a
scripted testee (scripted_testee.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from refitwire.compat import _protocol, _results, _testee
from refitwire.compat._errors import ProtocolError
from refitwire.compat._protocol import REPLY_WORDS, check_message, expected, kinds

SCRIPTED = Path(__file__).with_name("scripted_testee.py")
PAYLOAD = {"agent_name": "a", "metadata_endpoint": "", "agent_meta_b64": "", "tensors": []}
STARTED = {"implementation": {"name": "n", "version": "1", "language": "x"}, "spec_version": "1.2.0",
           "roles": ["reader"]}  # fmt: skip
#: One valid reply of each kind of response.json (a kind without one fails the first test).
VALID: dict[str, dict[str, Any]] = {
    "started": STARTED,
    "written": {"seq": 1, "blob_b64": "e30="},
    "read": {"seq": 1, "payload": PAYLOAD},
    "counted": {"seq": 1, "envelope": {k: v for k, v in PAYLOAD.items() if k != "tensors"}, "entries": 0},
    "merged": {"seq": 1, "merged": []},
    "digested": {"seq": 1, "digest": "0" * 32},
    "rejected": {"seq": 1, "rejected": True, "message": "m"},
    "skipped": {"seq": 1, "skipped": True, "reason": "r"},
    "errored": {"seq": 1, "errored": True, "message": "m"},
}
REQUIRED = [(k.name, m) for k in kinds("response") for m in k.schema.get("required", ())]
WRONG: tuple[Any, ...] = (7, "7", None, [], {}, False)  # a member's wrong value: the first its schema refuses


def failure(message: Any, kind: str = "response") -> str:
    with pytest.raises(ProtocolError) as caught:
        check_message(message, kind)
    text = str(caught.value)
    assert "oneOf" not in text and "not valid under any" not in text, text
    return text


def kind(name: str) -> _protocol.Kind:
    return next(k for k in kinds("response") if k.name == name)


def test_every_kind_of_reply_has_words_and_a_valid_example() -> None:
    assert {k.name for k in kinds("response")} == set(VALID) == set(REPLY_WORDS)
    for k in kinds("response"):
        check_message(VALID[k.name], "response")
        assert k.markers or k.flags, f"{k.name}: nothing tells it from the other kinds"


def test_the_two_messages_of_the_issue() -> None:
    """The wording pinned: the start reply without `implementation`, a rejection without `message`."""
    no_impl = {k: v for k, v in STARTED.items() if k != "implementation"}
    assert failure(no_impl) == (
        "invalid reply: the start reply needs `implementation`: an object with `name`, `version`, `language`"
    )
    assert failure({"seq": 1, "rejected": True, "rule": "ADDR_RANGE"}) == (
        "invalid reply: a rejection needs `message`: a string"
    )


@pytest.mark.parametrize(("name", "member"), REQUIRED, ids=[f"{n}-without-{m}" for n, m in REQUIRED])
def test_a_reply_without_a_required_member_names_it(name: str, member: str) -> None:
    k = kind(name)
    reply = {key: value for key, value in VALID[name].items() if key != member}
    text = failure(reply)
    assert f"`{member}`" in text and k.words in text, text
    if any(m in reply for m in k.markers) or any(reply.get(f) is v for f, v in k.flags.items()):
        # still recognisably this kind: the member and what it must be
        assert f"{k.words} needs `{member}`: {expected(k.schema['properties'][member])}" in text, text


@pytest.mark.parametrize(("name", "member"), REQUIRED, ids=[f"{n}-with-a-wrong-{m}" for n, m in REQUIRED])
def test_a_required_member_of_the_wrong_type_is_named_with_its_value(name: str, member: str) -> None:
    k = kind(name)
    schema = k.schema["properties"][member]
    wrong = next(v for v in WRONG if not jsonschema_rs.validator_for(dict(schema)).is_valid(v))
    text = failure({**VALID[name], member: wrong})
    assert f"{k.words}: /{member} holds {json.dumps(wrong)}, expected {expected(schema)}" in text, text


def test_a_nested_member_is_named_at_its_pointer() -> None:
    reply: dict[str, Any] = {**STARTED, "implementation": {"name": "n", "version": "1"}}
    assert (
        failure(reply)
        == "invalid reply: the start reply needs `language` at /implementation/language: a string"
    )
    reply: dict[str, Any] = {"seq": 1, "payload": {**PAYLOAD, "tensors": [{"name": "w"}]}}
    assert "a read's reply needs `dtype` at /payload/tensors/0/dtype: a string" in failure(reply)


def test_a_reply_of_no_kind_names_the_members_of_each_kind() -> None:
    text = failure({"seq": 1, "status": "ok"})
    assert "this one has `seq`, `status`" in text, text
    for k in kinds("response"):
        assert k.words in text and all(f"`{m}`" in text for m in k.markers), (k.name, text)
    assert failure([1]) == "invalid reply: a reply is a JSON object, not [1]"


def test_a_reply_of_two_kinds_at_once_names_both() -> None:
    text = failure({**VALID["read"], "digest": "0" * 32})
    assert "one kind only; this one is a read's reply and a digest's reply" in text, text


def test_a_request_is_named_by_its_cmd() -> None:
    assert (
        failure({"cmd": "read", "seq": 1}, "request")
        == "invalid request: a `read` request needs `blob_b64`: a string"
    )
    assert failure({"cmd": "nope", "seq": 1}, "request").startswith(
        'invalid request: a request needs `cmd`: one of "start", "write", "read"'
    )


# -- through the runner: a scripted testee's replies ---------------------------------------------


def scripted(start: dict[str, Any], reply: dict[str, Any] | None = None) -> _testee.Testee:
    argv = [sys.executable, str(SCRIPTED), json.dumps(start), *([json.dumps(reply)] if reply else [])]
    return _testee.Testee(argv, timeout_s=30.0, max_restarts=0)


def test_a_handshake_without_implementation_names_it() -> None:
    testee = scripted({"spec_version": "1.2.0", "roles": ["reader"]})
    try:
        with pytest.raises(ProtocolError) as caught:
            testee.start()
    finally:
        testee.stop()
    assert str(caught.value) == (
        "invalid reply: the start reply needs `implementation`: an object with `name`, `version`, `language`"
    )


@pytest.mark.parametrize(
    ("reply", "at", "words"),
    [
        ({"rejected": True, "rule": "ADDR_RANGE"}, "/message", "a rejection needs `message`: a string"),
        ({"skipped": True}, "/reason", "a skipped reply needs `reason`: a string"),
        ({"errored": True, "message": 5}, "/message", "an errored reply: /message holds 5, expected a string"),
        ({"rejected": "yes", "message": "m"}, "/rejected", 'a rejection: /rejected holds "yes", expected true'),
        ({"status": "ok"}, "", "a read's reply needs `payload`: an object with `agent_name`"),
    ],
    ids=["rejection-without-message", "skipped-without-reason", "errored-message-a-number", "rejected-not-true",
         "no-kind"],
)  # fmt: skip
def test_a_malformed_answer_to_a_read_is_named_by_its_member(
    reply: dict[str, Any], at: str, words: str
) -> None:
    testee = scripted(STARTED, reply)
    try:
        testee.start()
        answer = _results.exchange(testee, {"cmd": "read", "blob_b64": "e30="})
    finally:
        testee.stop()
    assert isinstance(answer, _results.Broken) and answer.malformed, answer
    assert answer.pointer == at and words in answer.message, answer
