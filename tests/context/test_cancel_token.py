"""``ctx.cancel`` reports the transport's cancellation, so sync handlers can stop."""

from __future__ import annotations

import threading
import time

import pytest
import trio

from trio_mcp import Server, ToolContext, tool
from trio_mcp.testing import McpTestClient

seen_cancel = threading.Event()
started = threading.Event()


@pytest.fixture(autouse=True)
def _clear_events() -> None:
    """Events set by an earlier run (a rerun in the same process) must not leak."""
    seen_cancel.clear()
    started.clear()


@tool
def poll_until_cancelled() -> str:
    """
    Work in a worker thread until the call is cancelled.
    """
    ctx = ToolContext.current()
    started.set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if ctx.cancel.cancelled:
            seen_cancel.set()
            return "stopped"
        time.sleep(0.005)
    return "never cancelled"


async def test_a_sync_handler_sees_notifications_cancelled_through_ctx_cancel() -> None:
    """Our choice: the token reflects the request's scope, not only the deadline."""
    outcomes: list[str] = []
    server = Server(
        "cancel",
        "1",
        tools=[poll_until_cancelled],
        receipts=lambda r: outcomes.append(r.outcome),
    )
    async with McpTestClient(server) as client, trio.open_nursery() as nursery:
        nursery.start_soon(client.call_tool, "poll_until_cancelled")
        with trio.fail_after(10):
            await trio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
        await client.notify("notifications/cancelled", {"requestId": 1})
        with trio.fail_after(10):
            await trio.to_thread.run_sync(seen_cancel.wait, abandon_on_cancel=True)
        with trio.fail_after(10):
            while not outcomes:  # noqa: ASYNC110 - the receipt is the event
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()

    # The handler returned "stopped" inside the cancelled request: the call ends
    # cancelled, and no result was sent for it.
    assert ["cancelled"] == outcomes
