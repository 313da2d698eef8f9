"""NIXL progress modes: ``poll`` sleeps while idle, ``spin`` (the wrapper's delay 0) never does."""

from __future__ import annotations

import resource
import time

import pytest
from refitwire.refit._errors import NixlMissing

_nixl = pytest.importorskip(
    "refitwire.refit._nixl", reason="needs NIXL (the refit extra)", exc_type=NixlMissing
)

pytestmark = pytest.mark.nixl


def _idle_cpu_s(progress: str, seconds: float) -> float:
    """CPU seconds this process spends while one agent of ``progress`` mode sits idle."""
    with _nixl.Agent(f"idle-{progress}-{time.monotonic_ns()}", progress=progress):
        time.sleep(0.2)  # let the thread start
        before = resource.getrusage(resource.RUSAGE_SELF)
        time.sleep(seconds)
        after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_an_idle_polling_agent_leaves_the_cores_alone_and_a_spinning_one_does_not() -> None:
    poll = _idle_cpu_s("poll", 1.0)
    spin = _idle_cpu_s("spin", 1.0)
    off = _idle_cpu_s("off", 1.0)
    # A busy-polling thread burns whatever share of a core it gets; a sleeping one almost none.
    assert spin > 0.05, (poll, spin, off)
    assert poll < spin / 3 and off < spin / 3, (poll, spin, off)


def test_an_unknown_progress_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown progress mode 'busy'"):
        _nixl.Agent("never", progress="busy")
