from __future__ import annotations

import faulthandler
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    # A NIXL call that blocks in C cannot be interrupted; dump stacks and end
    # the run rather than hang CI.
    faulthandler.dump_traceback_later(180, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
