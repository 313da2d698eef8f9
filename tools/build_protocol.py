"""Write schema/protocol/decoded.json from the newest released wire model (``--check``: only compare)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _clone
from refitwire import released_versions, wire
from refitwire.compat._forms import decoded_schema

TARGET = Path(__file__).resolve().parents[1] / "schema" / "protocol" / "decoded.json"


def generated() -> str:
    return json.dumps(decoded_schema(wire.wire_model("rendezvous", released_versions()[-1])), indent=2) + "\n"


def main() -> int:
    text = generated()
    if "--check" in sys.argv[1:]:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run python tools/build_protocol.py", file=sys.stderr)
            return 1
        return 0
    _clone.writable()
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
