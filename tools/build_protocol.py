"""Write schema/protocol/decoded.json and envelope.json from the newest released wire model
(``--check``: only compare)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _clone
from refitwire.compat.cases._forms import decoded_schema, envelope_schema

FOLDER = Path(__file__).resolve().parents[1] / "schema" / "protocol"


def generated() -> dict[Path, str]:
    model = _clone.registry().wire_model("rendezvous", _clone.registry().released_versions()[-1])
    return {
        FOLDER / f"{name}.json": json.dumps(schema(model), indent=2) + "\n"
        for name, schema in (("decoded", decoded_schema), ("envelope", envelope_schema))
    }


def main() -> int:
    texts = generated()
    if "--check" in sys.argv[1:]:
        stale = [path for path, text in texts.items() if path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"{path} is out of date: run python tools/build_protocol.py", file=sys.stderr)
        return 1 if stale else 0
    _clone.writable()
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
