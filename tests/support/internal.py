"""Requests that fail inside the server on purpose: -32603, the log kept quiet.

The server logs each internal error with its traceback at ERROR; a test that
provokes them raises ``trio_mcp``'s level to CRITICAL while its client runs, so
the run's output stays readable (the receipts and the reply say what happened).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Final

import pytest

from trio_mcp import Server
from trio_mcp.testing import McpTestClient, ProtocolError

__all__ = ["INTERNAL_ERROR", "fails_internally", "quiet_client"]

INTERNAL_ERROR: Final = -32603


async def fails_internally(request: Awaitable[object]) -> ProtocolError:
    """Await ``request``: it fails with -32603 (internal error). The error."""
    with pytest.raises(ProtocolError) as caught:
        await request
    assert INTERNAL_ERROR == caught.value.code
    return caught.value


@asynccontextmanager
async def quiet_client(server: Server) -> AsyncIterator[McpTestClient]:
    """A test client of ``server``, ``trio_mcp``'s log at CRITICAL meanwhile."""
    logger = logging.getLogger("trio_mcp")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        async with McpTestClient(server) as client:
            yield client
    finally:
        logger.setLevel(level)
