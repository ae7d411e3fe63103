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
from asgi_hosts import Recorder, raw_call, run_clean, serving_uvicorn, tasks_left
from fastapi import FastAPI
from mcp import Client

from trio_mcp import Receipt, Server, ToolContext, tool
from trio_mcp.asyncio import mount


@tool
async def add(a: int, b: int) -> int:
    """Add two integers after a Trio checkpoint.

    Args:
        a: The first addend.
        b: The second addend.
    """
    await trio.lowlevel.checkpoint()
    return a + b


@tool
async def steps(count: int = 3) -> str:
    """Report progress once per step, then finish.

    Args:
        count: How many steps to take.
    """
    ctx = ToolContext.current()
    for done in range(1, count + 1):
        await ctx.progress(done, count)
    return f"{count} steps"


@tool
def blocking_add(a: int, b: int) -> int:
    """Add in a worker thread (a plain def).

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def _host(server: Server) -> tuple[FastAPI, Recorder]:
    """FastAPI with a route of its own and the server mounted at /mcp."""
    mcp_app = mount(server, path="/")
    app = FastAPI(lifespan=mcp_app.lifespan)

    @app.get("/hello")
    async def hello() -> dict[str, str]:
        return {"hello": "world"}

    recorder = Recorder(mcp_app)
    app.mount("/mcp", recorder)
    return app, recorder


def test_fastapi_serves_its_own_routes_and_the_official_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The client discovers 2026-07-28, lists and calls (progress, a thread) at
    /mcp, the app's own route answers, and uvicorn stops with nothing left over."""
    server = Server("fastapi", "1.0", tools=[add, steps, blocking_add])
    app, recorder = _host(server)
    seen_progress: list[float] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        seen_progress.append(progress)

    async def main() -> tuple[object, ...]:
        async with serving_uvicorn(app) as url:
            async with httpx.AsyncClient() as web:
                hello = (await web.get(url + "/hello")).json()
            async with Client(url + "/mcp/") as client:
                version = client.protocol_version
                tools = await client.list_tools()
                summed = await client.call_tool("add", {"a": 2, "b": 40})
                stepped = await client.call_tool(
                    "steps", {"count": 3}, progress_callback=on_progress
                )
                threaded = await client.call_tool("blocking_add", {"a": 1, "b": 1})
        return hello, version, tools, summed, stepped, threaded, tasks_left()

    with caplog.at_level(logging.WARNING):
        hello, version, tools, summed, stepped, threaded, left = run_clean(main)

    assert {"hello": "world"} == hello
    assert "2026-07-28" == version
    assert ["add", "steps", "blocking_add"] == [t.name for t in tools.tools]  # type: ignore[attr-defined]
    assert (False, 42) == (summed.is_error, summed.structured_content)  # type: ignore[attr-defined]
    assert "3 steps" == stepped.structured_content  # type: ignore[attr-defined]
    assert 2 == threaded.structured_content  # type: ignore[attr-defined]
    assert [1, 2, 3] == seen_progress
    assert recorder.check_all() >= 5
    assert [] == left  # the lifespan stopped the guest run with the app
    assert [] == [r.getMessage() for r in caplog.records]


def test_the_official_client_follows_fastapis_redirect_to_the_mount() -> None:
    """``/mcp`` (no slash) is redirected by FastAPI to the mount (307); the client
    follows it with the same POST."""
    server = Server("redirect", "1.0", tools=[add])
    app, _ = _host(server)

    async def main() -> object:
        async with serving_uvicorn(app) as url, Client(url + "/mcp") as client:
            return await client.call_tool("add", {"a": 1, "b": 2})

    assert 3 == run_clean(main).structured_content  # type: ignore[attr-defined]


def test_a_call_whose_client_went_away_is_cancelled() -> None:
    """Closing the connection mid-call fires the handler's ``ctx.cancel``: uvicorn's
    ``http.disconnect`` reaches the Trio side, which cancels the call."""
    receipts: list[Receipt] = []
    seen: list[bool] = []
    started = asyncio.Event()
    ended = asyncio.Event()

    @tool
    async def forever() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            seen.append(ToolContext.current().cancel.cancelled)
            ended.set()

    server = Server("leave", "1.0", tools=[forever], receipts=receipts.append)
    app, _ = _host(server)

    async def main() -> None:
        async with serving_uvicorn(app) as url:
            _, writer = await raw_call(url, "/mcp/", "forever", {})
            await started.wait()
            writer.close()
            await writer.wait_closed()
            await ended.wait()

    run_clean(main)

    assert [True] == seen
    assert ["cancelled"] == [r.outcome for r in receipts]


def test_an_official_client_that_gives_up_on_a_call_cancels_it() -> None:
    """The SDK's client cancelled mid-call closes its stream; the handler stops."""
    seen: list[bool] = []
    started = asyncio.Event()
    ended = asyncio.Event()

    @tool
    async def forever() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            seen.append(ToolContext.current().cancel.cancelled)
            ended.set()

    server = Server("give-up", "1.0", tools=[forever])
    app, _ = _host(server)

    async def main() -> None:
        async with serving_uvicorn(app) as url, Client(url + "/mcp/") as client:
            call = asyncio.create_task(client.call_tool("forever", {}))
            await started.wait()
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            await ended.wait()

    run_clean(main)

    assert [True] == seen


def test_uvicorn_lets_a_running_call_finish_when_it_stops() -> None:
    """Asked to stop mid-call, uvicorn stops accepting, the call finishes and
    answers, then the lifespan stops the server: a graceful stop."""
    started = asyncio.Event()
    release = trio.Event()

    @tool
    async def slow() -> str:
        """Answer once released."""
        started.set()
        await release.wait()
        return "finished"

    server = Server("graceful", "1.0", tools=[slow])
    app, _ = _host(server)

    async def main() -> bytes:
        async with serving_uvicorn(app) as url:
            reader, writer = await raw_call(url, "/mcp/", "slow", {})
            await started.wait()
            stopping = asyncio.create_task(_release_once_refusing(url, release))
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
    seen: list[bool] = []
    started = asyncio.Event()

    @tool
    async def forever() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await trio.sleep_forever()
        finally:
            seen.append(ToolContext.current().cancel.cancelled)

    server = Server("timeout", "1.0", tools=[forever], receipts=receipts.append)
    app, _ = _host(server)

    async def main() -> list[str]:
        async with serving_uvicorn(app, timeout_graceful_shutdown=0.2) as url:
            _, writer = await raw_call(url, "/mcp/", "forever", {})
            await started.wait()
        writer.close()
        return tasks_left()

    with caplog.at_level(logging.ERROR, logger="uvicorn.error"):
        left = run_clean(main)

    assert [True] == seen
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
    app, recorder = _host(server)
    seen: list[float] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        seen.append(progress)

    async def main() -> object:
        async with serving_uvicorn(app) as url, Client(url + "/mcp/") as client:
            return await client.call_tool(
                "steps", {"count": 100}, progress_callback=on_progress
            )

    result = run_clean(main)

    assert "100 steps" == result.structured_content  # type: ignore[attr-defined]
    assert list(range(1, 101)) == seen
    assert recorder.check_all() >= 101
