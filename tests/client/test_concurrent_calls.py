"""Many calls at once through one client: each gets its own reply, on every
transport, and HTTP opens no more connections than its bound."""

from __future__ import annotations

import pytest
import trio
from support import serving, serving_websocket
from support.upstream import make_server, stdio_command

from trio_mcp.client import Client
from trio_mcp.client._h11 import MAX_CONNECTIONS

CALLS = 100


async def _all_answered(client: Client) -> None:
    got: dict[int, str] = {}

    async def one(n: int) -> None:
        got[n] = (await client.call_tool("echo", {"text": f"call {n}"})).text

    async with trio.open_nursery() as nursery:
        for n in range(CALLS):
            nursery.start_soon(one, n)

    assert {n: f"call {n}" for n in range(CALLS)} == got


@pytest.mark.parametrize("transport", ["in-process", "stdio", "http", "websocket"])
async def test_concurrent_calls_each_get_their_own_reply(transport: str) -> None:
    if transport == "in-process":
        async with Client(make_server()) as client:
            await _all_answered(client)
    elif transport == "stdio":
        async with Client(stdio_command()) as client:
            await _all_answered(client)
    elif transport == "http":
        async with serving(make_server()) as url, Client(url + "/mcp") as client:
            await _all_answered(client)
    else:
        async with (
            serving_websocket(make_server()) as port,
            Client(f"ws://127.0.0.1:{port}/mcp") as client,
        ):
            await _all_answered(client)


async def test_http_opens_at_most_its_bound_of_connections() -> None:
    async with serving(make_server()) as url, Client(url + "/mcp") as client:
        got: list[str] = []

        async def one(n: int) -> None:
            got.append((await client.call_tool("echo", {"text": str(n)})).text)

        async with trio.open_nursery() as nursery:
            for n in range(3 * MAX_CONNECTIONS):
                nursery.start_soon(one, n)
        pool = client._open.link._pool  # type: ignore[attr-defined]

    assert 3 * MAX_CONNECTIONS == len(got)
    assert 1 < pool.most_open <= MAX_CONNECTIONS
