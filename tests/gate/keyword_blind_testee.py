"""A reader blind to one JSON Schema keyword: the reference at a version of a schema folder,
except that it accepts (and decodes as written) a blob whose only schema errors are of that
keyword. Run as ``python keyword_blind_testee.py KEYWORD SCHEMA_DIR VERSION``; ``none`` is blind
to nothing. The suite must catch each with a named case (tests/gate/test_generated_cases.py)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
from refitwire import released_versions, wire
from refitwire.compat.cases._forms import decoded_document
from refitwire.compat.testees.reference import answer
from refitwire.wire import compile_model

KEYWORD, SCHEMA_DIR, VERSION = sys.argv[1], Path(sys.argv[2]), sys.argv[3]


def main() -> int:
    schema = json.loads((SCHEMA_DIR / "rendezvous" / f"{VERSION}.json").read_text(encoding="utf-8"))
    validator, model = jsonschema_rs.validator_for(schema), compile_model(schema, "rendezvous")
    registry = wire.default_registry()
    if VERSION not in released_versions():
        registry = registry.with_candidates(SCHEMA_DIR.resolve())
    for line in sys.stdin:
        request: dict[str, Any] = json.loads(line)
        if request.get("cmd") == "stop":
            return 0
        reply = answer(request, VERSION, registry)
        if request.get("cmd") == "read" and reply.get("rejected"):
            try:
                document = json.loads(base64.b64decode(request["blob_b64"]))
                errors = {str(e.schema_path[-1]) for e in validator.iter_errors(document)}
            except (
                ValueError,
                RecursionError,
            ):  # not JSON the validator takes: the reference's answer stands
                document, errors = None, set()
            if errors == {KEYWORD} and isinstance(document, dict):  # blind: read it as if valid
                reply = {"seq": request["seq"], "payload": decoded_document(document, model)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
