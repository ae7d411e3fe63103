"""Used wrongly, or failing: a clear McpError, 500/503 answers, never a hung host.

The app refuses to run under Trio (``server.mount`` is the app for Trio servers)
and beside another Trio run in the thread. A guest run that crashes, or an app
whose lifespan fails, is logged; the request it cut gets 500, later ones 503
(``/healthz`` too), and the host still stops.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import outcome
import pytest
import trio
from asgi_hosts import add, fastapi_host, post_call, run_clean, serving_uvicorn
from fastapi import FastAPI
from support.asgi import http_scope

from trio_mcp import McpError, RedisBroadcast, Server, tool
from trio_mcp.asyncio import mount


async def test_awaited_under_trio_the_app_says_to_use_server_mount() -> None:
    """Hypercorn's Trio worker (or any Trio code) must serve ``server.mount()``."""
    app = mount(Server("trio", "1.0", tools=[add]))

    async def receive() -> dict[str, Any]:
        raise AssertionError("nothing is read")

    async def send(message: Any) -> None:
        raise AssertionError("nothing is sent")

    with pytest.raises(McpError, match=r"this is Trio: serve server\.mount\(\)"):
        await app(http_scope([]), receive, send)
    with pytest.raises(McpError, match=r"server\.mount\(\)"):
        async with app.lifespan():
            pass


def test_outside_any_loop_the_lifespan_says_it_needs_asyncio() -> None:
    app = mount(Server("none", "1.0", tools=[add]))

    with pytest.raises(McpError, match="from a running asyncio loop"):
        app.lifespan().__aenter__().send(None)


def test_an_unknown_option_is_refused_when_mounting() -> None:
    with pytest.raises(McpError.InvalidArgument, match="unexpected HTTP option"):
        mount(Server("options", "1.0", tools=[add]), bogus=1)  # type: ignore[call-arg]


@asynccontextmanager
async def _another_trio_run() -> AsyncIterator[None]:
    """A guest run of someone else's on this loop, for the block."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[outcome.Outcome[None]] = loop.create_future()
    stop = trio.Event()
    trio.lowlevel.start_guest_run(
        stop.wait,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        done_callback=done.set_result,
        host_uses_signal_set_wakeup_fd=True,
    )
    try:
        yield
    finally:
        trio.lowlevel.current_trio_token().run_sync_soon(stop.set)
        (await done).unwrap()


def test_beside_another_trio_run_the_app_refuses_to_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One Trio run per thread: the lifespan raises; a lazy start is logged and
    answered 503."""
    server = Server("beside", "1.0", tools=[add])
    app = FastAPI()
    app.mount("/mcp", mount(server, path="/"))

    async def main() -> tuple[str, httpx.Response]:
        async with _another_trio_run():
            with pytest.raises(McpError, match="already runs Trio") as raised:
                async with mount(server).lifespan():
                    pass
            async with serving_uvicorn(app) as url, httpx.AsyncClient() as client:
                response = await post_call(
                    client, url + "/mcp/", "add", {"a": 1, "b": 2}
                )
        return str(raised.value), response

    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"):
        message, response = run_clean(main)

    assert "serve server.mount() from that Trio run" in message
    assert 503 == response.status_code
    assert "failed" in response.json()["error"]["message"]
    assert any("could not start serving" in r.getMessage() for r in caplog.records)


def test_a_crash_of_the_guest_run_is_logged_and_answered_without_hanging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler crashes Trio itself (a failing system task): its request gets
    500, later requests and ``/healthz`` 503, and uvicorn still stops."""

    async def fail() -> None:
        raise RuntimeError("a system task failed")

    @tool
    async def crash() -> str:
        """Crash the Trio run."""
        trio.lowlevel.spawn_system_task(fail)
        await trio.sleep_forever()

    app, _ = fastapi_host(Server("crash", "1.0", tools=[add, crash]))

    async def main() -> list[httpx.Response]:
        async with serving_uvicorn(app) as url, httpx.AsyncClient() as client:
            return [
                await post_call(client, url + "/mcp/", "crash"),
                await post_call(client, url + "/mcp/", "add", {"a": 1, "b": 2}),
                await client.get(url + "/mcp/healthz"),
            ]

    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"):
        cut, later, health = run_clean(main)

    assert [500, 503, 503] == [cut.status_code, later.status_code, health.status_code]
    assert "failed while serving" in cut.json()["error"]["message"]
    assert "restart the process" in later.json()["error"]["message"]
    assert "1" == later.headers["retry-after"]
    crashed = [r for r in caplog.records if "crashed" in r.getMessage()]
    assert 1 == len(crashed)
    assert crashed[0].exc_info is not None
    assert isinstance(crashed[0].exc_info[1], trio.TrioInternalError)


class _LostRedis(RedisBroadcast):
    """A broadcast whose Redis is gone for good once ``lost`` is set."""

    def __init__(self) -> None:
        super().__init__("redis://127.0.0.1:1/0")
        self.lost = trio.Event()
        self.at_start = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        if self.at_start:
            raise ConnectionError("Redis is unreachable")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._fail_when_lost)
            yield
            nursery.cancel_scope.cancel()

    async def _fail_when_lost(self) -> None:
        await self.lost.wait()
        raise ConnectionError("Redis went away")


def test_a_lifespan_that_fails_at_start_is_an_mcp_error_with_its_cause() -> None:
    broadcast = _LostRedis()
    broadcast.at_start = True
    mcp_app = mount(Server("start", "1.0", tools=[add], broadcast=broadcast))

    async def main() -> McpError:
        with pytest.raises(McpError) as raised:
            async with mcp_app.lifespan():
                pass
        return raised.value

    error = run_clean(main)

    assert "could not start serving: ConnectionError: Redis is unreachable" in str(
        error
    )
    assert isinstance(error.__cause__, ConnectionError)


def test_a_lifespan_that_fails_while_serving_fails_the_app(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The request in flight gets 500, later ones 503; the failure is logged once."""
    broadcast = _LostRedis()
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait until the broadcast is lost."""
        started.set()
        await trio.sleep_forever()

    mcp_app = mount(Server("lost", "1.0", tools=[add, wait], broadcast=broadcast))

    async def main() -> list[int]:
        transport = httpx.ASGITransport(app=mcp_app)
        async with mcp_app.lifespan(), httpx.AsyncClient(transport=transport) as client:
            cut = asyncio.create_task(post_call(client, "http://127.0.0.1/mcp", "wait"))
            await started.wait()
            broadcast.lost.set()
            first = (await cut).status_code
            later = await post_call(
                client, "http://127.0.0.1/mcp", "add", {"a": 1, "b": 1}
            )
            return [first, later.status_code]

    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"):
        statuses = run_clean(main)

    assert [500, 503] == statuses
    failed = [r for r in caplog.records if "lifespan failed" in r.getMessage()]
    assert 1 == len(failed)
    assert "Redis went away" in json.dumps(str(failed[0].exc_info))
