"""A call the test stops waiting for is cancelled on the server (issue 45, item 6).

The official client sends ``notifications/cancelled`` when its caller's scope is
cancelled (stdio, HTTP); the test client does the same, so the handler sees its
cancel at once and leaving ``async with McpTestClient(server)`` does not wait out
the server's grace period for it.
"""

from __future__ import annotations

import pytest
import trio

from trio_mcp import McpError, Receipt, Server, tool
from trio_mcp.testing import McpTestClient


def slow_server(cancelled: trio.Event, receipts: list[Receipt]) -> Server:
    @tool
    async def wait_forever() -> str:
        """Wait until cancelled."""
        try:
            await trio.sleep(3600)
        finally:
            cancelled.set()
        return "never"  # pragma: no cover - cancelled first

    return Server("slow", "1.0", tools=[wait_forever], receipts=receipts.append)


async def test_an_abandoned_call_is_cancelled_on_the_server() -> None:
    cancelled = trio.Event()
    receipts: list[Receipt] = []
    async with McpTestClient(slow_server(cancelled, receipts)) as client:
        with trio.move_on_after(0.05):
            await client.call_tool("wait_forever")
        # Inside the block: the handler's cancel comes from the abandonment, not
        # from the end of the block (a bound, not a timing: without the
        # cancellation it never comes).
        with trio.fail_after(10):
            await cancelled.wait()
        assert client.notifications == []  # nothing the server sent back about it

    assert ["cancelled"] == [receipt.outcome for receipt in receipts]


async def test_a_timed_out_call_is_cancelled_too() -> None:
    cancelled = trio.Event()
    async with McpTestClient(slow_server(cancelled, []), timeout=0.05) as client:
        with pytest.raises(trio.TooSlowError):
            await client.call_tool("wait_forever")
        with trio.fail_after(10):
            await cancelled.wait()


async def test_the_client_still_answers_after_an_abandoned_call() -> None:
    cancelled = trio.Event()
    async with McpTestClient(slow_server(cancelled, [])) as client:
        with trio.move_on_after(0.05):
            await client.call_tool("wait_forever")
        tools = await client.list_tools()

    assert ["wait_forever"] == [entry["name"] for entry in tools]


def test_the_client_outside_trio_says_to_mark_the_test() -> None:
    """Under asyncio (pytest-asyncio's auto mode), not Trio's internals."""
    import asyncio

    async def under_asyncio() -> None:
        async with McpTestClient(Server("x", "1.0")):
            pass  # pragma: no cover - refused on entry

    with pytest.raises(McpError, match=r"Mark it @pytest\.mark\.trio"):
        asyncio.run(under_asyncio())
