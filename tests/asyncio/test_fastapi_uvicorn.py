"""A FastAPI app with its own routes and a trio_mcp mount, under a real uvicorn.

The server runs on Trio as the guest of uvicorn's asyncio loop; the official Python
SDK's client (``mcp`` 2.3.0, revision 2026-07-28) talks to it over 127.0.0.1. Each
test runs its own asyncio loop (``run_clean``), which also checks that everything
ended cleanly: no exception left to the loop, no task, no Trio run.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
import trio
from asgi_hosts import (
    add,
    fastapi_host,
    raw_call,
    run_clean,
    serving_uvicorn,
    tasks_left,
)
from mcp import Client
from support.sdk import Progress, check_list_and_call
from support.tools import steps
from support.waiting import Forever, Held

from trio_mcp import Receipt, Server, tool


@tool
def blocking_add(a: int, b: int) -> int:
    """Add in a worker thread (a plain def).

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def test_fastapi_serves_its_own_routes_and_the_official_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client discovers 2026-07-28, lists and calls (progress, a thread) at
    /mcp, the app's own route answers, and uvicorn stops with nothing left over."""
    server = Server("fastapi", "1.0", tools=[add, steps, blocking_add])
    app, recorder = fastapi_host(server)

    async def main() -> tuple[object, ...]:
        async with serving_uvicorn(app) as url:
            async with httpx.AsyncClient() as web:
                hello = (await web.get(url + "/hello")).json()
            async with Client(url + "/mcp/") as client:
                await check_list_and_call(client, ["add", "steps", "blocking_add"])
                threaded = await client.call_tool("blocking_add", {"a": 1, "b": 1})
        return hello, threaded, tasks_left()

    with caplog.at_level(logging.WARNING):
        hello, threaded, left = run_clean(main)

    assert {"hello": "world"} == hello
    assert 2 == threaded.structured_content  # type: ignore[attr-defined]
    assert recorder.check_all() >= 5
    assert [] == left  # the lifespan stopped the guest run with the app
    assert [] == [r.getMessage() for r in caplog.records]


def test_the_official_client_follows_fastapis_redirect_to_the_mount() -> None:
    """``/mcp`` (no slash) is redirected by FastAPI to the mount (307); the client
    follows it with the same POST."""
    server = Server("redirect", "1.0", tools=[add])
    app, _ = fastapi_host(server)

    async def main() -> object:
        async with serving_uvicorn(app) as url, Client(url + "/mcp") as client:
            return await client.call_tool("add", {"a": 1, "b": 2})

    assert 3 == run_clean(main).structured_content  # type: ignore[attr-defined]


def test_a_call_whose_client_went_away_is_cancelled() -> None:
    """Closing the connection mid-call fires the handler's ``ctx.cancel``: uvicorn's
    ``http.disconnect`` reaches the Trio side, which cancels the call."""
    receipts: list[Receipt] = []
    forever = Forever(asyncio.Event)
    server = Server("leave", "1.0", tools=[forever.tool], receipts=receipts.append)
    app, _ = fastapi_host(server)

    async def main() -> None:
        async with serving_uvicorn(app) as url:
            _, writer = await raw_call(url, "/mcp/", "forever", {})
            await forever.started.wait()
            writer.close()
            await writer.wait_closed()
            await forever.ended.wait()

    run_clean(main)

    assert [True] == forever.cancelled
    assert ["cancelled"] == [r.outcome for r in receipts]


def test_an_official_client_that_gives_up_on_a_call_cancels_it() -> None:
    """The SDK's client cancelled mid-call closes its stream; the handler stops."""
    forever = Forever(asyncio.Event)
    server = Server("give-up", "1.0", tools=[forever.tool])
    app, _ = fastapi_host(server)

    async def main() -> None:
        async with serving_uvicorn(app) as url, Client(url + "/mcp/") as client:
            call = asyncio.create_task(client.call_tool("forever", {}))
            await forever.started.wait()
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            await forever.ended.wait()

    run_clean(main)

    assert [True] == forever.cancelled


def test_uvicorn_lets_a_running_call_finish_when_it_stops() -> None:
    """Asked to stop mid-call, uvicorn stops accepting, the call finishes and
    answers, then the lifespan stops the server: a graceful stop."""
    slow = Held("slow", "finished", asyncio.Event)
    server = Server("graceful", "1.0", tools=[slow.tool])
    app, _ = fastapi_host(server)

    async def main() -> bytes:
        async with serving_uvicorn(app) as url:
            reader, writer = await raw_call(url, "/mcp/", "slow", {})
            await slow.started.wait()
            stopping = asyncio.create_task(_release_once_refusing(url, slow.release))
        reply = await reader.read()
        writer.close()
        await stopping
        return reply

    reply = run_clean(main)

    assert reply.startswith(b"HTTP/1.1 200")
    assert b'"structuredContent":"finished"' in reply


async def _release_once_refusing(url: str, release: trio.Event) -> None:
    """Set ``release`` once uvicorn refuses new connections (it is stopping)."""
    host, port = url.removeprefix("http://").split(":")
    while True:
        try:
            _, writer = await asyncio.open_connection(host, int(port))
        except OSError:
            break
        writer.close()
        await asyncio.sleep(0.02)
    release.set()  # a sync Trio call from the host loop: allowed in guest mode


def test_uvicorns_graceful_timeout_cancels_a_call_that_would_not_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """uvicorn cancels the app's task after ``timeout_graceful_shutdown``: the
    bridge cancels the Trio side (``ctx.cancel`` fires, a ``cancelled`` receipt),
    waits for it, and the lifespan then stops the server."""
    receipts: list[Receipt] = []
    forever = Forever(asyncio.Event)
    server = Server("timeout", "1.0", tools=[forever.tool], receipts=receipts.append)
    app, _ = fastapi_host(server)

    async def main() -> list[str]:
        async with serving_uvicorn(app, timeout_graceful_shutdown=0.2) as url:
            _, writer = await raw_call(url, "/mcp/", "forever", {})
            await forever.started.wait()
        writer.close()
        return tasks_left()

    with caplog.at_level(logging.ERROR, logger="uvicorn.error"):
        left = run_clean(main)

    assert [True] == forever.cancelled
    assert ["cancelled"] == [r.outcome for r in receipts]
    assert [] == left
    # uvicorn's own two lines: the cancellation, then the app's CancelledError
    # (uvicorn reports any app it cancels so).
    assert [
        "Cancel 1 running task(s), timeout graceful shutdown exceeded",
        "Exception in ASGI application\n",
    ] == [r.getMessage() for r in caplog.records]
    assert asyncio.CancelledError is caplog.records[1].exc_info[0]  # type: ignore[index]


def test_a_long_event_stream_arrives_whole_and_in_order() -> None:
    """More notifications than the bridge queues at once (``QUEUED_MESSAGES``): the
    Trio side waits for the host's sends, and every one arrives in order."""
    server = Server("stream", "1.0", tools=[steps])
    app, recorder = fastapi_host(server)
    progress = Progress()

    async def main() -> object:
        async with serving_uvicorn(app) as url, Client(url + "/mcp/") as client:
            return await client.call_tool(
                "steps", {"count": 100}, progress_callback=progress
            )

    result = run_clean(main)

    assert "100 steps" == result.structured_content  # type: ignore[attr-defined]
    assert list(range(1, 101)) == progress.seen
    assert recorder.check_all() >= 101
