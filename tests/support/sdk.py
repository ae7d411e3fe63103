"""The official Python SDK's client (``mcp``) as the interop tests drive it.

The client runs on anyio, so the same steps serve a test under Trio (Hypercorn) and
one under asyncio (uvicorn beside FastAPI).
"""

from __future__ import annotations

import pytest
from mcp import Client

__all__ = ["Progress", "check_list_and_call", "sdk_streams_left_open"]

# mcp 2.3.0's streamable HTTP client leaves its SSE reader with ``break`` once the
# reply arrives (mcp/client/streamable_http.py, ``async for sse in event_source``),
# never closing the async generators under it (its own, httpx2's and httpcore2's).
# Trio's finalizer reports each as a ResourceWarning; asyncio stays silent.
_SDK_GENERATORS = (
    r"(EventSource\.__aiter__|PoolByteStream\.__aiter__|Response\.aiter_(bytes|text)"
    r"|HTTP11ConnectionByteStream\.__aiter__)"
)

#: For a test under Trio that runs the SDK's client: only those generators' reports
#: are ignored.
sdk_streams_left_open = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object "
    + _SDK_GENERATORS
    + ":pytest.PytestUnraisableExceptionWarning"
)


class Progress:
    """A ``progress_callback`` that keeps every progress value it is given."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    async def __call__(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        self.seen.append(progress)


async def check_list_and_call(client: Client, tools: list[str]) -> None:
    """The interop round of a server with ``add`` and ``steps`` (support.tools):
    the client adopted 2026-07-28, the server lists ``tools`` in order, ``add``
    sums, and ``steps`` reports each step's progress before its result."""
    assert "2026-07-28" == client.protocol_version
    listed = await client.list_tools()
    assert tools == [t.name for t in listed.tools]
    summed = await client.call_tool("add", {"a": 2, "b": 40})
    assert (False, 42) == (summed.is_error, summed.structured_content)
    progress = Progress()
    stepped = await client.call_tool("steps", {"count": 3}, progress_callback=progress)
    assert "3 steps" == stepped.structured_content
    assert [1, 2, 3] == progress.seen
