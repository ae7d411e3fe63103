"""The pytest plugin (entry point ``pytest11``): an ``mcp_client`` fixture.

Define an ``mcp_server`` fixture returning a ``Server`` in a test module (or
conftest); ``mcp_client`` is then an ``McpTestClient`` for it, under pytest-trio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .._server import Server
from ._client import McpTestClient


@pytest.fixture
async def mcp_client(mcp_server: Server) -> AsyncIterator[McpTestClient]:
    """An in-process client for the test's ``mcp_server`` fixture."""
    async with McpTestClient(mcp_server) as client:
        yield client
