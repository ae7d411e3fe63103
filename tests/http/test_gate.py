"""The HTTP gate's places and tokens over many calls (issue 34's mutation testing).

``Limits.max_concurrent`` + ``max_waiting`` places are counted in and out around
each call: a call that ends, a call refused by its rate limit and a call that was
never placed must leave the count where it found it, or the bound drifts (more
calls than it promises run, or a server with nothing running answers 503). A
rate limit whose store cannot be reached limits in this process alone and says
so in the log; a store that answers leaves no such line.

Real Hypercorn on 127.0.0.1 and httpx; the callers are told apart by
``X-Forwarded-For`` from the trusted loopback proxy.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx
import pytest
import trio
from support import logged, serving
from support.asgi import asgi_exchange, http_scope
from support.mcp_http import call_tool, headers_for, request_body

from trio_mcp import Limits, RateLimit, RedisStore, Server, tool

ONE_AT_A_TIME = Limits(max_concurrent=1, max_waiting=0)
#: A Redis nobody listens on: every command of the store fails at once.
NOWHERE = "redis://127.0.0.1:1/0"


def held_server(**options: Any) -> tuple[Server, trio.Event, trio.Event]:
    """A server whose ``slow`` holds its slot until ``release`` is set, and ``ping``."""
    started, release = trio.Event(), trio.Event()

    @tool
    async def slow() -> str:
        """Hold a slot until the test releases it."""
        started.set()
        await release.wait()
        return "done"

    @tool
    def ping() -> str:
        """Answer at once."""
        return "pong"

    return Server("gate", "1", tools=[slow, ping], **options), started, release


async def ping_from(client: httpx.AsyncClient, url: str, who: str) -> int:
    with trio.fail_after(10):
        response = await call_tool(
            client, url, "ping", None, "", **{"x-forwarded-for": who}
        )
    return response.status_code


async def assert_one_runs_and_one_more_is_busy(
    client: httpx.AsyncClient, url: str, started: trio.Event, release: trio.Event
) -> None:
    """With one place in all: while ``slow`` holds it, another call is 503 at once."""
    held: list[int] = []

    async def hold() -> None:
        response = await call_tool(
            client, url, "slow", None, "", **{"x-forwarded-for": "192.0.2.99"}
        )
        held.append(response.status_code)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold)
        with trio.fail_after(10):
            await started.wait()
        with trio.fail_after(5):  # a place left by mistake would make it wait
            busy = await ping_from(client, url, "192.0.2.98")
        release.set()
    assert [503, 200] == [busy, *held]


async def test_calls_that_ended_leave_the_bound_as_it_was() -> None:
    server, started, release = held_server()
    async with (
        serving(server, limits=ONE_AT_A_TIME, trusted_proxies=["127.0.0.1"]) as url,
        httpx.AsyncClient(timeout=30) as client,
    ):
        ended = [await ping_from(client, url, f"192.0.2.{n}") for n in range(1, 4)]
        await assert_one_runs_and_one_more_is_busy(client, url, started, release)

    assert [200, 200, 200] == ended


async def test_a_call_refused_by_its_rate_limit_gives_its_place_back() -> None:
    """Caller .1 spends its one token, then is refused (429): its place is free
    again, so caller .2 is served, and the bound of one place still holds."""
    server, started, release = held_server()
    async with (
        serving(
            server,
            limits=ONE_AT_A_TIME,
            rate_limit=RateLimit(1, 60),
            trusted_proxies=["127.0.0.1"],
        ) as url,
        httpx.AsyncClient(timeout=30) as client,
    ):
        first = [await ping_from(client, url, "192.0.2.1") for _ in range(3)]
        other = await ping_from(client, url, "192.0.2.2")
        await assert_one_runs_and_one_more_is_busy(client, url, started, release)

    assert [200, 429, 429] == first
    assert 200 == other


async def two_callers(server: Server) -> tuple[list[int], int]:
    """Three calls from one client address and one from another, under a limit of
    two calls a minute: their statuses."""
    async with (
        serving(
            server, rate_limit=RateLimit(2, 60), trusted_proxies=["127.0.0.1"]
        ) as url,
        httpx.AsyncClient(timeout=30) as client,
    ):
        one = [await ping_from(client, url, "192.0.2.1") for _ in range(3)]
        two = await ping_from(client, url, "192.0.2.2")
    return one, two


async def test_a_store_that_answers_takes_the_tokens_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _, _ = held_server()
    with caplog.at_level(logging.WARNING, "trio_mcp.http"):
        one, two = await two_callers(server)

    assert [200, 200, 429] == one
    assert 200 == two
    assert [] == logged(caplog, "trio_mcp.http", "store failed")


async def test_a_store_that_cannot_be_reached_limits_in_this_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis down: the buckets of this process stand in (the limit still holds,
    per caller), and each call's warning says why."""
    server, _, _ = held_server(store=RedisStore(NOWHERE))
    with caplog.at_level(logging.WARNING, "trio_mcp.http"):
        one, two = await two_callers(server)

    assert [200, 200, 429] == one
    assert 200 == two
    failures = logged(caplog, "trio_mcp.http", "store failed")
    assert 4 == len(failures)
    for line in failures:
        match = re.fullmatch(
            r"rate limit: the store failed \((.+)\); limiting locally", line
        )
        assert match is not None, line
        assert NOWHERE in match[1] or "the store is not running" in match[1]


async def test_a_429_names_its_headers_as_asgi_requires() -> None:
    """ASGI's ``http.response.start``: header names lower-cased (HTTP/2 servers
    refuse others). The 429 carries ``retry-after`` with the whole seconds."""
    server, _, _ = held_server()
    app = server.mount(rate_limit=RateLimit(1, 3600))
    body = json.dumps(request_body("tools/call", {"name": "ping"})).encode()
    fields = {"host": "127.0.0.1:8000", **headers_for("tools/call", "ping")}
    headers = [(k.encode(), v.encode()) for k, v in fields.items()]
    answers: list[dict[str, Any]] = []
    for _ in range(2):
        sent = await asgi_exchange(app, http_scope(headers), body)
        answers.append(sent[0])

    assert [200, 429] == [a["status"] for a in answers]
    names = [name for name, _ in answers[1]["headers"]]
    assert all(name == name.lower() for name in names), names
    assert (b"retry-after", b"3600") in answers[1]["headers"]
