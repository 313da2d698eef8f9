"""Decoded-form arithmetic over the wire model, and the protocol's decoded schema generated from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from refitwire import (
    from_decoded,
    released_versions,
    to_decoded,
    unwrap_rendezvous_blob,
    wire,
    wrap_rendezvous_blob,
)
from refitwire.compat.cases._forms import decoded_schema, project

ROOT = Path(__file__).resolve().parents[2]


def test_the_decoded_schema_file_is_generated_from_the_model() -> None:
    """schema/protocol/decoded.json is not hand-kept: tools/build_protocol.py writes it, and a
    file that differs from what the model gives fails here (and in `--check`)."""
    on_disk = json.loads((ROOT / "schema" / "protocol" / "decoded.json").read_text(encoding="utf-8"))
    assert on_disk == decoded_schema(
        wire.default_registry().wire_model("rendezvous", released_versions()[-1])
    )
    check = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_protocol.py"), "--check"], capture_output=True
    )
    assert check.returncode == 0, check.stderr


def test_a_payload_as_each_version_sees_it() -> None:
    payload = {"agent_name": "a", "metadata_endpoint": None, "agent_meta_b64": "", "publisher_step": 3, "extra": 1,
               "tensors": [{"name": "t", "dtype": "int8", "elsize": 1, "full_shape": [1],
                            "shards": [{"agent_name": "a", "device_id": 0, "addr": 0, "shard_offset": [0],
                                        "shape": [1], "digest": "0" * 32}]}]}  # fmt: skip
    old, new = (wire.default_registry().wire_model("rendezvous", v) for v in ("1.0.0", "1.2.0"))
    assert "publisher_step" not in project(payload, old) and "extra" not in project(payload, new)
    assert "digest" not in project(payload, old)["tensors"][0]["shards"][0]
    # what a reader reports is the library's reader's: an absent or null endpoint reads as ""
    p = from_decoded(project(payload, new))
    blob = wrap_rendezvous_blob(*p[:4], p.publisher_step, spec_version=new.version)
    assert (
        to_decoded(unwrap_rendezvous_blob(blob, spec_version=new.version), new.version)["metadata_endpoint"]
        == ""
    )
