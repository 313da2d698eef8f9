"""Accepted breaks: a JSON file of findings a person has looked at and let through, each until a date.

Each entry is tied to the content it accepted: ``change`` is the hash the report prints
beside every finding (the rule, the pointer and both sides of the change), so an entry
written for a typo fix in a released file does not also accept a later change to it.
The default file is ``schema/gate-baseline.json`` (used when it exists and ``--baseline``
is not given).

An entry that no longer matches any finding (``BASELINE_STALE``) or whose ``expires`` date
has passed (``BASELINE_EXPIRED``) fails the gate, so the file never silently outlives the
break it excuses.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema_rs
from refitwire.gate._errors import GateError
from refitwire.wire import pointer, show_pointer

#: The schema of a baseline file.
BASELINE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["accepted"],
    "properties": {
        "$schema": {"type": "string"},
        "accepted": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "pointer", "change", "reason", "link", "expires"],
                "properties": {
                    "rule": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                    "pointer": {"type": "string", "description": 'as the report prints it; the root is ""'},
                    "change": {
                        "type": "string",
                        "pattern": "^[0-9a-f]{16}$",
                        "description": "the change hash",
                    },
                    "file": {"type": "string", "description": "the candidate file; any when absent"},
                    "against": {"type": "string", "description": "the released version; any when absent"},
                    "reason": {"type": "string", "minLength": 1},
                    "link": {"type": "string", "minLength": 1},
                    "expires": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class Accepted:
    """One accepted break."""

    index: int
    rule: str
    pointer: str
    reason: str
    link: str
    expires: datetime.date
    file: str | None = None
    against: str | None = None
    change: str = ""
    source: str = "baseline"

    def matches(self, rule: str, pointer: str, file: str, against: str | None, change: str) -> bool:
        return (
            self.rule == rule
            and self.pointer == pointer
            and self.change == change
            and (self.file is None or self.file == file)
            and (self.against is None or self.against == against)
        )

    def expired(self, today: datetime.date) -> bool:
        return today > self.expires


def load_baseline(path: Path, label: str | None = None) -> list[Accepted]:
    """The entries of a baseline file; GateError if it is missing or malformed.

    ``label`` is how findings about the file name it (default: the path as given)."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise GateError(str(path), exc.strerror or "cannot read") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GateError(str(path), f"not JSON: {exc}") from None
    except RecursionError:
        raise GateError(str(path), "not a baseline file: nested too deep") from None
    try:
        jsonschema_rs.validate(BASELINE_SCHEMA, data)
    except (ValueError, RecursionError) as exc:  # jsonschema-rs bounds its own recursion
        if not isinstance(exc, jsonschema_rs.ValidationError):
            raise GateError(str(path), f"not a baseline file: {exc}") from None
        where = show_pointer(pointer(*exc.instance_path))
        raise GateError(str(path), f"not a baseline file at {where}: {exc.message}") from None
    entries = []
    for i, item in enumerate(data["accepted"]):
        try:
            expires = datetime.date.fromisoformat(item["expires"])
        except ValueError:
            raise GateError(
                str(path), f"{pointer('accepted', i, 'expires')}: {item['expires']!r} is not a date"
            ) from None
        entries.append(
            Accepted(
                i,
                item["rule"],
                item["pointer"],
                item["reason"],
                item["link"],
                expires,
                item.get("file"),
                item.get("against"),
                item["change"],
                label or str(path),
            )
        )
    return entries
