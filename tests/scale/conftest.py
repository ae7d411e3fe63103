"""Fixtures for the scale-out tests: a real redis-server and trio-mcp replicas.

A machine without ``redis-server`` fails these tests loudly: ``scripts/bootstrap``
installs Debian's package.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from scale_procs import RedisServer, Replicas


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A fresh redis-server for one test, stopped afterwards."""
    executable = shutil.which("redis-server")
    if executable is None:
        pytest.fail(
            "redis-server is not installed, and the scale-out tests need a real one: "
            "run 'bash scripts/bootstrap' (it installs Debian's redis-server)"
        )
    server = RedisServer(executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def replicas() -> Iterator[Replicas]:
    group = Replicas()
    try:
        yield group
    finally:
        group.stop_all()
