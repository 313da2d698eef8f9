"""The kit's one set of Hypothesis settings draws the same values whatever test profile is loaded."""

from __future__ import annotations

import json

import _profiles
import hypothesis
from refitwire import wire
from refitwire.compat import hypothesis_settings as deterministic
from refitwire.compat.cases import _cases

SCHEMA = json.dumps({"type": "string", "pattern": "^[a-z]{3,5}$"}, sort_keys=True)


def _values() -> tuple[object, ...]:
    return _cases.member_values.__wrapped__(SCHEMA)


def test_a_loaded_test_profile_does_not_change_the_values_the_kit_draws() -> None:
    """A profile with other examples, a database and random draws leaves the kit's settings alone."""
    before = (_values(), _cases.generated_payloads(3, 4, wire.default_registry()))
    hypothesis.settings.register_profile(
        "i24-probe", max_examples=2, derandomize=False, deadline=50, phases=[hypothesis.Phase.generate]
    )
    hypothesis.settings.load_profile("i24-probe")
    try:
        chosen = deterministic(80, shrink=False)
        assert (chosen.max_examples, chosen.derandomize, chosen.deadline, chosen.database) == (
            80,
            True,
            None,
            None,
        )
        assert hypothesis.Phase.shrink not in chosen.phases
        assert hypothesis.Phase.shrink in deterministic().phases
        assert not deterministic(seeded=True).derandomize
        assert (_values(), _cases.generated_payloads(3, 4, wire.default_registry())) == before
    finally:
        _profiles.load()  # the suite's own profile (get_current_profile_name is newer than the floor)


_DRAW = (
    "import hashlib, json, sys; from refitwire import wire; from refitwire.compat.cases._cases import generated_payloads; "
    "p = generated_payloads(int(sys.argv[1]), 6, wire.default_registry()); "
    "print(hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest())"
)


def _drawn_elsewhere(seed: int) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _DRAW, str(seed)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_seed_draws_the_same_payloads_in_every_process() -> None:
    """``--case gen-N`` rebuilds its payload in a new process from the run's seed: it must be the
    one the run drew, whatever else that process drew first."""
    import hashlib

    _cases.generated_payloads(5, 6, wire.default_registry())  # this process has drawn other things
    here = hashlib.sha256(
        json.dumps(_cases.generated_payloads(3, 6, wire.default_registry()), sort_keys=True).encode()
    ).hexdigest()
    assert _drawn_elsewhere(3) == here == _drawn_elsewhere(3)
    assert _drawn_elsewhere(4) != here  # the check can fail: another seed draws other payloads
