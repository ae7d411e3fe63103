"""When the stdio stream closes, every running handler's ``ctx.cancel`` fires (api.md
"The way out"), in a worker thread too.

Before, stdin's end cancelled the request tasks after the grace period, but
``ctx.cancel`` never fired: an async handler saw ``Cancelled`` with
``ctx.cancel.cancelled`` still false, and a sync handler polling the token in its
worker thread never learned that nobody waits for it any more. The handlers write a
marker file when they see the token fire; the test reads the files after the
server process exited.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
import trio
from support.wayout_peer import META, WAIT, spawn
from trio_websocket import open_websocket_url

from trio_mcp import Limits, Server, ToolContext, tool


@pytest.mark.parametrize("tool", ["sync_watch_cancel", "async_watch_cancel"])
async def test_stdin_end_fires_ctx_cancel_of_a_running_handler(
    tool: str, tmp_path: Path
) -> None:
    args = ("--grace", "0.2", "--marker-dir", str(tmp_path), "--linger", "20")
    async with spawn(*args) as peer:
        await peer.call(1, tool, label="watcher")
        await peer.probe("started watcher")

        exit_status = await peer.close_stdin_and_wait()

    assert exit_status == 0
    assert await trio.Path(tmp_path / "watcher").read_text() == "seen"
    # ctx.cancel fires at the close, so a handler that stops when it sees it may
    # still answer within the grace period (test_stdio); never with an error.
    reply = peer.find(1)
    assert reply is None or "result" in reply, reply


async def test_stdin_end_fires_ctx_cancel_of_sync_and_async_handlers_together(
    tmp_path: Path,
) -> None:
    args = ("--grace", "0", "--marker-dir", str(tmp_path), "--linger", "20")
    async with spawn(*args) as peer:
        for number in range(3):
            await peer.call(number, "sync_watch_cancel", label=f"sync-{number}")
            await peer.call(10 + number, "async_watch_cancel", label=f"async-{number}")
        for number in range(3):
            await peer.probe(f"started sync-{number}")
            await peer.probe(f"started async-{number}")

        exit_status = await peer.close_stdin_and_wait()

    assert exit_status == 0
    assert sorted(p.name for p in await trio.Path(tmp_path).iterdir()) == [
        *(f"async-{n}" for n in range(3)),
        *(f"sync-{n}" for n in range(3)),
    ]


async def test_a_closed_websocket_fires_ctx_cancel_before_the_handler_sees_it() -> None:
    """The same on WebSocket: a closed connection cancels its requests at once, and
    ``ctx.cancel`` has fired when an async handler sees ``Cancelled``. At once even
    with an hour's grace period configured: nobody is left to read their replies."""
    started = trio.Event()
    seen: list[bool] = []

    @tool
    async def wait_here() -> str:
        """Wait until cancelled; note whether ctx.cancel had fired."""
        ctx = ToolContext.current()
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            seen.append(ctx.cancel.cancelled)
        raise AssertionError("unreachable")

    server = Server("ws-close", "1", tools=[wait_here])
    async with trio.open_nursery() as nursery:
        serve = partial(
            server.serve_websocket, port=0, limits=Limits(grace_period=3600)
        )
        port = await nursery.start(serve)
        url = f"ws://127.0.0.1:{port}/mcp"
        async with open_websocket_url(url, subprotocols=["mcp"]) as ws:
            call = {"name": "wait_here", "arguments": {}, "_meta": META}
            await ws.send_message(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
                )
            )
            with trio.fail_after(WAIT):
                await started.wait()
        with trio.fail_after(WAIT):
            while not seen:  # noqa: ASYNC110 - the handler's finally appends
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()

    assert seen == [True]
