"""HTTP honours ``Limits.max_waiting`` (issue 26): beyond it, 503 at once.

Real Hypercorn on 127.0.0.1, real httpx clients; the calls hold their slots on an
event the test opens, so "running" and "waiting" are states the test controls.
"""

from __future__ import annotations

from typing import Any

import httpx
import trio
from support import serving
from support.mcp_http import call_tool, post

from trio_mcp import Limits, Server, tool
from trio_mcp.testing import check_message

SLOW_CALLS = 4  # max_concurrent=2 running + max_waiting=2 waiting


def gated_server() -> tuple[Server, trio.Event, list[str]]:
    gate = trio.Event()
    entered: list[str] = []

    @tool
    async def slow() -> str:
        """Hold a slot until the test opens the gate."""
        entered.append("slow")
        await gate.wait()
        return "done"

    return Server("overload", "1", tools=[slow]), gate, entered


async def call_slow(
    client: httpx.AsyncClient, url: str, into: list[httpx.Response]
) -> None:
    """Call ``slow``; keep its response in ``into``."""
    into.append(await call_tool(client, url, "slow"))


async def wait_until(condition: Any) -> None:
    with trio.fail_after(10):
        while not condition():  # noqa: ASYNC110 - polling the server from outside
            await trio.sleep(0.01)


async def test_a_call_beyond_running_and_waiting_gets_503_at_once() -> None:
    server, gate, entered = gated_server()
    limits = Limits(max_concurrent=2, max_waiting=2)
    held: list[httpx.Response] = []

    async with (
        serving(server, limits=limits) as url,
        httpx.AsyncClient(timeout=30) as client,
        trio.open_nursery() as nursery,
    ):
        for _ in range(SLOW_CALLS):
            nursery.start_soon(call_slow, client, url, held)
        await wait_until(lambda: len(entered) == 2)
        await trio.sleep(0.2)  # the two others reach their waiting places
        with trio.fail_after(2):
            busy = await call_tool(client, url, "slow")
            discover = await post(client, url, "server/discover")
            listed = await post(client, url, "tools/list")
        gate.set()

    assert 503 == busy.status_code
    assert "1" == busy.headers["retry-after"]
    message = busy.json()
    check_message(message, "tools/call")
    assert {
        "code": -32000,
        "message": "server busy: 2 calls are running and 2 are waiting; retry later",
        "data": {"retryable": True},
    } == message["error"]
    assert [200, 200] == [discover.status_code, listed.status_code]
    assert "capabilities" in discover.json()["result"]
    assert [200] * SLOW_CALLS == [r.status_code for r in held]
    assert all("done" == r.json()["result"]["structuredContent"] for r in held)


async def test_a_client_that_leaves_while_waiting_gives_its_place_up() -> None:
    server, gate, entered = gated_server()
    limits = Limits(max_concurrent=1, max_waiting=1)
    responses: list[httpx.Response] = []

    async def leave(url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as own:
            await call_slow(own, url, responses)

    async with (
        serving(server, limits=limits) as url,
        httpx.AsyncClient(timeout=30) as client,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(call_slow, client, url, responses)
        await wait_until(lambda: len(entered) == 1)
        async with trio.open_nursery() as leaving:
            leaving.start_soon(leave, url)
            await trio.sleep(0.3)  # it waits for the slot...
            leaving.cancel_scope.cancel()  # ...and its client goes away
        await trio.sleep(0.3)  # the server reads the disconnect
        nursery.start_soon(
            call_slow, client, url, responses
        )  # takes the freed waiting place
        await trio.sleep(0.3)
        gate.set()

    assert [200, 200] == [r.status_code for r in responses]
    assert 2 == len(entered)
