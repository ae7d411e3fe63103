"""The blocked-loop warning (``Limits.blocked_warning``, api.md "Where Python users
already are"): an ``async def`` handler that holds the event loop is named in the
``trio_mcp`` log, once per handler, with what to do instead.

The handlers really block (``time.sleep``, a blocking socket read) for four times
the threshold (the watchdog polls ten times per threshold, so a busy machine has room
to be late); nothing here asserts how long anything took, only what was logged.
"""

from __future__ import annotations

import json
import logging
import math
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from support import META, request, serving, serving_app

from trio_mcp import Limits, Server, tool
from trio_mcp.testing import check_message

THRESHOLD = 0.2
HOLD = 4 * THRESHOLD


@tool
async def sleepy(note: str) -> str:
    """
    Sleep the wrong way: time.sleep inside an async def.

    Args:
        note: Echoed back.
    """
    time.sleep(HOLD)  # noqa: ASYNC251 - blocks: sleepy
    return note


@tool
async def reads_a_socket() -> str:
    """Await once, then read a socket with a blocking call."""
    await trio.lowlevel.checkpoint()
    left, right = socket.socketpair()
    with left, right:
        left.settimeout(HOLD)
        with suppress(TimeoutError):
            left.recv(1)  # nothing is ever sent - blocks: reads_a_socket
    return "read"


@tool
async def blocks_then_awaits() -> str:
    """Block first, then await."""
    time.sleep(HOLD)  # noqa: ASYNC251 - blocks: blocks_then_awaits
    await trio.lowlevel.checkpoint()
    return "done"


@tool
async def polite() -> str:
    """Sleep the Trio way."""
    await trio.sleep(HOLD)
    return "slept"


@tool
def threaded() -> str:
    """Sleep in a plain def: trio_mcp runs it in a worker thread."""
    time.sleep(HOLD)
    return "slept"


def blocking_line(name: str) -> int:
    """The line of this file where the handler ``name`` blocks (marked)."""
    lines = Path(__file__).read_text().splitlines()
    return 1 + next(i for i, text in enumerate(lines) if f"- blocks: {name}" in text)


def make_server() -> Server:
    return Server(
        "blocky",
        "1.0",
        tools=[sleepy, reads_a_socket, blocks_then_awaits, polite, threaded],
    )


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "trio_mcp" and r.levelno == logging.WARNING
    ]


@asynccontextmanager
async def serving_messages(limits: Limits) -> AsyncIterator[Any]:
    """``serve_messages`` on memory channels; yields ``call(name, args)``."""
    server = make_server()
    send_in, receive_in = trio.open_memory_channel[str](16)
    send_out, receive_out = trio.open_memory_channel[str](16)
    ids = iter(range(1, 1000))

    async def call(name: str, arguments: dict[str, Any] | None = None) -> Any:
        message = request(next(ids), "tools/call", name=name, arguments=arguments or {})
        await send_in.send(json.dumps(message))
        reply = json.loads(await receive_out.receive())
        check_message(reply, "tools/call")
        return reply["result"]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: server.serve_messages(receive_in, send_out.send, limits=limits)
        )
        yield call
        await send_in.aclose()


async def test_a_handler_that_blocks_the_loop_is_named_once_with_what_to_do(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trio_mcp")

    async with serving_messages(Limits(blocked_warning=THRESHOLD)) as call:
        first = await call("sleepy", {"note": "a"})
        again = await call("sleepy", {"note": "b"})
        await call("reads_a_socket")
        await call("blocks_then_awaits")
    warnings = warnings_of(caplog)

    assert [first["structuredContent"], again["structuredContent"]] == ["a", "b"]
    # Each way a step can hold the loop: a handler that never awaits (its call
    # begins and ends in the step), one that awaited first, one that awaits after.
    assert ["sleepy", "reads_a_socket", "blocks_then_awaits"] == [
        w.split("'")[1] for w in warnings
    ], warnings
    for warning, name in zip(
        warnings, ["sleepy", "reads_a_socket", "blocks_then_awaits"], strict=True
    ):
        line = blocking_line(name)
        assert f" held the event loop for more than {THRESHOLD:g} s " in warning
        assert f"(Limits.blocked_warning) at {__file__}:{line} in " in warning
        assert "timeout= could not fire" in warning
        assert "Make the handler a plain def" in warning
        assert "await trio.sleep()" in warning


async def test_handlers_that_wait_the_trio_way_or_in_a_thread_and_code_outside_calls_are_not_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trio_mcp")

    async with serving_messages(Limits(blocked_warning=THRESHOLD)) as call:
        await call("polite")
        await call("threaded")
        time.sleep(HOLD)  # noqa: ASYNC251 - the test's own task, outside any call

    assert [] == warnings_of(caplog)


async def test_an_infinite_threshold_turns_the_warning_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trio_mcp")

    async with serving_messages(Limits(blocked_warning=math.inf)) as call:
        await call("sleepy", {"note": "a"})

    assert [] == warnings_of(caplog)


async def test_the_warning_is_logged_over_http_by_serve_http(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trio_mcp")
    limits = Limits(blocked_warning=THRESHOLD)

    async with serving(make_server(), limits=limits) as url:
        await post_call(f"{url}/mcp", "sleepy")

    assert ["sleepy"] == [w.split("'")[1] for w in warnings_of(caplog)]


async def test_a_mounted_app_watches_while_its_lifespan_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="trio_mcp")
    app = make_server().mount(limits=Limits(blocked_warning=THRESHOLD))

    async with serving_app(app) as url:
        await post_call(f"{url}/mcp", "reads_a_socket")

    assert ["reads_a_socket"] == [w.split("'")[1] for w in warnings_of(caplog)]


async def post_call(url: str, name: str) -> None:
    message = request(1, "tools/call", name=name, arguments={"note": "x"})
    if name != "sleepy":
        message["params"]["arguments"] = {}
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(
            url,
            json=message,
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": META["io.modelcontextprotocol/protocolVersion"],
                "mcp-method": "tools/call",
                "mcp-name": name,
            },
        )
    assert 200 == response.status_code, response.text
