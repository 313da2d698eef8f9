from __future__ import annotations

import faulthandler
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _redis import RedisServer, served


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    # A NIXL call that blocks in C cannot be interrupted; dump stacks and end
    # the run rather than hang CI.
    faulthandler.dump_traceback_later(180, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port, killed afterwards (``_redis.py``)."""
    # The client is the refit extra's; without it (the floors env) the Redis cases skip.
    pytest.importorskip("redis", reason="needs the redis client (the refit extra)")
    yield from served(tmp_path / "redis")


@pytest.fixture(scope="module")
def pubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Two publisher processes of the ``tiny`` model for one test module (see ``_fleet``)."""
    from _fleet import Publishers  # needs NIXL: imported only by the modules that use it

    p = Publishers(tmp_path_factory.mktemp("store"))
    yield p
    p.stop()
