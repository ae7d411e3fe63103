"""Waiting for a gateway to serve an upstream's entries: they arrive when the
upstream has been listed, after the gateway started."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio

__all__ = ["listed"]


async def listed(
    list_tools: Callable[[], Awaitable[Sequence[Any]]],
    name: str,
    within: float = 30.0,
) -> list[str]:
    """The tool names ``list_tools()`` gives once ``name`` is among them (bounded;
    an upstream on a loaded machine may take seconds to start):
    ``list_tools`` is a test client's or a ``trio_mcp.client.Client``'s."""
    with trio.fail_after(within):
        while True:
            names = [str(t["name"]) for t in await list_tools()]
            if name in names:
                return names
            await trio.sleep(0.02)
