"""Participants start a few at a time, the ones that are not the kit's own first.

A released package or a source tree imports torch (seconds), the kit's own participants start in
about a second; started in the plan's order, the slow ones come last and the run waits for them
alone. Their results keep the plan's order whatever order they started in.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from refitwire import wire
from refitwire.compat import Participant, Plan
from refitwire.compat.runner._run import start_all, stop_all

#: A testee that notes its start in a log, then answers the handshake and nothing else.
_PROGRAM = """
import json, sys
with open(sys.argv[1], "a") as log:
    log.write(sys.argv[2] + "\\n")
start = {"implementation": {"name": sys.argv[2], "version": "1", "language": "python"},
         "spec_version": "1.2.0", "roles": ["reader", "writer"]}
for line in sys.stdin:
    if json.loads(line).get("cmd") == "stop":
        break
    sys.stdout.write(json.dumps(start) + "\\n")
    sys.stdout.flush()
"""


def test_the_others_start_before_the_kits_own_and_keep_their_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two at a time, as on a two-core machine
    log = tmp_path / "started.log"

    def participant(label: str, kind: str) -> Participant:
        return Participant(label, (sys.executable, "-c", _PROGRAM, str(log), label), kind)

    plan_order = [participant(f"generation-{i}", "generation") for i in range(3)]
    plan_order += [participant("the-tree", "upstream-source")]
    plan = Plan(participants=plan_order, registry=wire.default_registry())
    started, failed = start_all(plan)
    try:
        assert not failed, [json.dumps(r.message) for r in failed]
        assert [s.label for s in started] == [p.label for p in plan_order]
        first_two = log.read_text().split()[:2]
        assert "the-tree" in first_two, first_two
    finally:
        stop_all(started)
