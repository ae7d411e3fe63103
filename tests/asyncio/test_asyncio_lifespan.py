"""When the guest run starts and stops: with the host's lifespan, or lazily.

``mcp_app.lifespan`` given to FastAPI (or entered in the host's own lifespan, or run
by uvicorn through the ASGI lifespan protocol when the app is the top-level one)
starts the server before any request and stops it with the host: listen streams get
their result, running tool calls as tasks are cancelled, the Trio run ends. Without
a lifespan the first request starts it and the end of the loop stops it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from asgi_hosts import (
    add,
    fastapi_host,
    open_listen,
    post_call,
    run_clean,
    serving_uvicorn,
    tasks_left,
)
from fastapi import FastAPI
from support import META
from support.mcp_http import headers_for, request_body
from support.waiting import Forever

from trio_mcp import Receipt, Server, tool
from trio_mcp.asyncio import mount

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS: dict[str, Any] = {"extensions": {TASKS: {}}}


@tool(task="optional")
async def sleepy(seconds: float) -> str:
    """Sleep, as a task when the client can take one.

    Args:
        seconds: How long to sleep.
    """
    await trio.sleep(seconds)
    return "rested"


async def _post(
    endpoint: str,
    method: str,
    params: dict[str, Any],
    name: str | None = None,
    request_id: int = 1,
) -> dict[str, Any]:
    """One JSON-RPC POST from a client that takes tasks; the reply message."""
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": WITH_TASKS}
    async with httpx.AsyncClient() as client:
        response = await client.post(
            endpoint,
            json=request_body(method, params, request_id, meta),
            headers=headers_for(method, name),
        )
    reply: dict[str, Any] = response.json()
    return reply


async def _add(endpoint: str, a: int, b: int) -> Any:
    """Call ``add`` at ``endpoint``; its structured result."""
    params = {"name": "add", "arguments": {"a": a, "b": b}}
    reply = await _post(endpoint, "tools/call", params, "add")
    return reply["result"]["structuredContent"]


def test_the_lifespan_given_to_fastapi_starts_before_requests_and_stops_with_the_app() -> (
    None
):
    """Before any request Trio runs with the task nursery open (a call becomes a
    task); once uvicorn has stopped, no Trio run and no task is left."""
    app, _ = fastapi_host(Server("lifespan", "1.0", tools=[add, sleepy]))

    async def main() -> tuple[bool, dict[str, Any], dict[str, Any], list[str]]:
        async with serving_uvicorn(app) as url:
            running_before = trio.lowlevel.in_trio_run()
            params = {"name": "sleepy", "arguments": {"seconds": 60}}
            created = await _post(url + "/mcp/", "tools/call", params, "sleepy")
            task_id = created["result"]["taskId"]
            task = await _post(
                url + "/mcp/", "tasks/get", {"taskId": task_id}, task_id, 2
            )
        return running_before, created, task, tasks_left()

    running_before, created, task, left = run_clean(main)

    assert running_before
    assert "task" == created["result"]["resultType"]
    assert "working" == task["result"]["status"]
    assert [] == left


def test_without_a_lifespan_the_first_request_starts_it_and_the_loop_end_stops_it() -> (
    None
):
    """FastAPI does not pass lifespan events to a mount: the first request starts
    the guest run, and ``asyncio.run``'s end stops it cleanly (``run_clean``)."""
    server = Server("lazy", "1.0", tools=[add])
    app = FastAPI()
    app.mount("/mcp", mount(server, path="/"))

    async def main() -> tuple[bool, Any, bool, list[str]]:
        async with serving_uvicorn(app) as url:
            before = trio.lowlevel.in_trio_run()
            summed = await _add(url + "/mcp/", 1, 2)
            after = trio.lowlevel.in_trio_run()
        return before, summed, after, tasks_left()

    before, summed, after, left = run_clean(main)

    assert (False, True) == (before, after)
    assert 3 == summed
    assert ["trio_mcp guest run"] == left  # until asyncio.run's end stopped it


def test_the_lifespan_entered_inside_the_hosts_own_lifespan() -> None:
    """``async with mcp_app.lifespan(app):`` composes with the host's own set-up."""
    server = Server("composed", "1.0", tools=[add])
    mcp_app = mount(server, path="/")
    steps: list[str] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        steps.append("host up")
        async with mcp_app.lifespan(app):
            steps.append(f"mcp up: {trio.lowlevel.in_trio_run()}")
            yield
        steps.append(f"mcp down: {trio.lowlevel.in_trio_run()}")

    app = FastAPI(lifespan=lifespan)
    app.mount("/mcp", mcp_app)

    async def main() -> Any:
        async with serving_uvicorn(app) as url:
            return await _add(url + "/mcp/", 2, 2)

    assert 4 == run_clean(main)
    assert ["host up", "mcp up: True", "mcp down: False"] == steps


def test_uvicorn_runs_the_lifespan_of_the_app_served_alone() -> None:
    """As uvicorn's top-level app, the ASGI lifespan protocol starts and stops it."""
    server = Server("alone", "1.0", tools=[add])
    mcp_app = mount(server)

    async def main() -> tuple[bool, Any, list[str]]:
        async with serving_uvicorn(mcp_app, lifespan="on") as url:
            running = trio.lowlevel.in_trio_run()
            summed = await _add(url + "/mcp", 5, 5)
        return running, summed, tasks_left()

    running, summed, left = run_clean(main)

    assert running
    assert 10 == summed
    assert [] == left


def test_leaving_the_lifespan_ends_listen_streams_with_their_result() -> None:
    """The graceful stop of ``serve_http``: an open listen stream gets its result."""
    server = Server("listen", "1.0", tools=[add])
    mcp_app = mount(server)

    acknowledged = asyncio.Event()

    async def noting_the_first_event(scope: Any, receive: Any, send: Any) -> None:
        async def noting(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.body":
                acknowledged.set()

        await mcp_app(scope, receive, noting)

    async def main() -> str:
        transport = httpx.ASGITransport(app=noting_the_first_event)
        async with httpx.AsyncClient(transport=transport) as client:
            async with mcp_app.lifespan():
                listen = asyncio.create_task(_listen_via(client))
                await acknowledged.wait()
            return await listen

    body = run_clean(main)

    result = body.strip().split("\n\n")[-1].removeprefix("data: ")
    assert '"resultType":"complete"' in result


async def _listen_via(client: httpx.AsyncClient) -> str:
    params = {"notifications": {"toolsListChanged": True}}
    response = await client.post(
        "http://127.0.0.1/mcp",
        json=request_body("subscriptions/listen", params, 7),
        headers=headers_for("subscriptions/listen"),
    )
    return response.text


def test_server_shutdown_ends_listen_streams_so_uvicorn_can_stop() -> None:
    """uvicorn drains open responses before the lifespan's shutdown, so a listen
    stream would keep it waiting; ``server.shutdown()``, called from asyncio code,
    ends it with its result first (docs/guides/fastapi.md)."""
    server = Server("drain", "1.0", tools=[add])
    app, _ = fastapi_host(server)

    async def main() -> dict[str, Any]:
        async with serving_uvicorn(app) as url:
            listen = await open_listen(url, "/mcp/", 9)
            server.shutdown()
            result = await listen.next_message()
            assert {} == await listen.next_message()
            listen.close()
        return result

    result = run_clean(main)

    assert 9 == result["id"]
    assert "complete" == result["result"]["resultType"]


@pytest.mark.parametrize("entered", [1, 2])
def test_a_lifespan_entered_twice_stops_with_the_last_exit(entered: int) -> None:
    """Two holders (the host's lifespan and the protocol's, say): the first to
    leave does not stop the server under the other."""
    server = Server("twice", "1.0", tools=[add])
    mcp_app = mount(server)

    async def main() -> list[bool]:
        seen = []
        async with mcp_app.lifespan():
            if entered == 2:
                async with mcp_app.lifespan():
                    pass
            seen.append(trio.lowlevel.in_trio_run())
        seen.append(trio.lowlevel.in_trio_run())
        return seen

    assert [True, False] == run_clean(main)


def test_a_call_still_running_when_the_lifespan_ends_is_cancelled_and_answered() -> (
    None
):
    """After the grace, a running call ends as if its client had left (its
    ``ctx.cancel`` fires, a ``cancelled`` receipt), and the client still there is
    answered 503."""
    receipts: list[Receipt] = []
    forever = Forever(asyncio.Event)
    server = Server("stopping", "1.0", tools=[forever.tool], receipts=receipts.append)
    mcp_app = mount(server)

    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=mcp_app)
        async with httpx.AsyncClient(transport=transport) as client:
            async with mcp_app.lifespan():
                call = asyncio.create_task(
                    post_call(client, "http://127.0.0.1/mcp", "forever")
                )
                await forever.started.wait()
            return await call

    response = run_clean(main)

    assert [True] == forever.cancelled
    assert ["cancelled"] == [r.outcome for r in receipts]
    assert 503 == response.status_code
    assert "shutting down" in response.json()["error"]["message"]
