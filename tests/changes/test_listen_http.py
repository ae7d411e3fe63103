"""subscriptions/listen over Streamable HTTP on a real Hypercorn on 127.0.0.1.

The listen response is one long SSE stream: the acknowledgement first, tagged
notifications, ``:`` keep-alives while quiet, and the result on graceful shutdown.
Every ``data:`` message is validated against the 2026-07-28 schema.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import httpx
import trio
from listen_server import make_server
from support import serving
from support.mcp_http import rpc
from support.sse import listening

from trio_mcp import Limits, Server

WAIT = 10.0
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


async def call(client: httpx.AsyncClient, url: str, name: str, **arguments: Any) -> Any:
    params = {"name": name, "arguments": arguments}
    message = await rpc(client, url, "tools/call", params, name=name)
    return message["result"]["structuredContent"]


async def wait_until_no_subscribers(server: Server) -> None:
    # The server notices a closed socket asynchronously; poll, bounded.
    with trio.fail_after(WAIT):
        while server.broadcast.statistics().subscribers:  # noqa: ASYNC110 - no event exists
            await trio.sleep(0.01)


async def test_a_listen_streams_the_ack_changes_and_keepalives_as_sse() -> None:
    """Spec §8/§12: text/event-stream, ack first, tagged list_changed after a change
    made by another request, ``:`` comments while quiet."""
    server = make_server()
    async with (
        serving(server, limits=Limits(keepalive_interval=0.05)) as url,
        httpx.AsyncClient() as client,
        listening(
            f"{url}/mcp", "h1", toolsListChanged=True, promptsListChanged=True
        ) as s,
    ):
        ack = await s.next_message()
        await s.keepalive()
        await s.keepalive()
        assert "toggled" == await call(client, url, "toggle_prompt")
        change = await s.next_message()

    assert "notifications/subscriptions/acknowledged" == ack["method"]
    assert {"toolsListChanged": True, "promptsListChanged": True} == ack["params"][
        "notifications"
    ]
    assert "notifications/prompts/list_changed" == change["method"]
    assert "h1" == change["params"]["_meta"][SUBSCRIPTION]


async def test_listens_take_no_slot_and_updates_reach_only_their_subscribers() -> None:
    """Our choice: listen streams hold no max_concurrent slot; spec §8: updates go
    only to streams subscribed to the URI."""
    server = make_server()
    async with (
        serving(
            server, limits=Limits(keepalive_interval=0.05, max_concurrent=1)
        ) as url,
        httpx.AsyncClient() as client,
        listening(f"{url}/mcp", 1, resourceSubscriptions=["test://watched"]) as a,
        listening(f"{url}/mcp", 2, resourceSubscriptions=["test://other"]) as b,
    ):
        await a.next_message()
        await b.next_message()
        assert "touched" == await call(client, url, "touch", uri="test://other")
        update = await b.next_message()
        assert "touched" == await call(client, url, "touch", uri="test://watched")
        other = await a.next_message()

    assert {"_meta": {SUBSCRIPTION: 2}, "uri": "test://other"} == update["params"]
    assert {"_meta": {SUBSCRIPTION: 1}, "uri": "test://watched"} == other["params"]


async def test_closing_the_stream_ends_the_subscription() -> None:
    """Spec §8: on HTTP the client ends a subscription by closing the stream."""
    server = make_server()
    async with (
        serving(server, limits=Limits(keepalive_interval=0.05)) as url,
        httpx.AsyncClient() as client,
    ):
        async with listening(f"{url}/mcp", "gone", toolsListChanged=True) as s:
            await s.next_message()
            assert 1 == server.broadcast.statistics().subscribers
        await wait_until_no_subscribers(server)
        answered = await call(client, url, "toggle_tool")

    assert "toggled" == answered


async def test_shutdown_ends_the_stream_with_the_listen_result() -> None:
    """Spec §8: on graceful teardown the server sends the listen's result, then
    closes; serve_http returns."""
    server = make_server()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(server.serve_http, port=0))
        async with listening(
            f"http://127.0.0.1:{port}/mcp", 9, toolsListChanged=True
        ) as s:
            await s.next_message()
            server.shutdown()
            result = await s.next_message()
            rest = await s.rest()

    assert 9 == result["id"]
    assert 9 == result["result"]["_meta"][SUBSCRIPTION]
    assert "complete" == result["result"]["resultType"]
    assert [] == [line for line in rest if line.strip()]
