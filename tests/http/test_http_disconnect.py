"""A client that leaves an HTTP call: noticed by a watcher started once the call lasts.

The ASGI app starts a task that reads ``http.disconnect`` only for a request still
running ``GRACE`` seconds after it began (``_http/_disconnect.py``). These
tests play the ASGI server in process, so they choose exactly when the client leaves
and what ``receive()`` does; the end-to-end case (a real socket closed on Hypercorn)
is ``test_http.py::test_client_disconnect_cancels_the_handler``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest
import trio
import trio.testing
from support import META
from support.asgi import http_scope
from support.mcp_http import headers_for

from trio_mcp import Receipt, Server, tool
from trio_mcp._http._disconnect import GRACE


def _scope(name: str) -> dict[str, Any]:
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        **headers_for("tools/call", name),
    }
    return http_scope([(k.encode(), v.encode()) for k, v in headers.items()])


def _body(name: str) -> bytes:
    params = {"_meta": META, "name": name, "arguments": {}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def _exchange(
    server: Server, name: str, after_body: Callable[[], Awaitable[Any]]
) -> list[MutableMapping[str, Any]]:
    """One call of ``name``; after the body, ``receive()`` awaits ``after_body()``."""
    sent: list[MutableMapping[str, Any]] = []
    delivered = False

    async def receive() -> Any:
        nonlocal delivered
        await trio.lowlevel.checkpoint()
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": _body(name), "more_body": False}
        return await after_body()

    async def send(message: MutableMapping[str, Any]) -> None:
        await trio.lowlevel.checkpoint()
        sent.append(message)

    await server.mount()(_scope(name), receive, send)
    return sent


async def test_a_client_that_leaves_at_once_still_cancels_a_long_call() -> None:
    """Gone before the watcher starts: it reads the queued disconnect and cancels."""
    cancelled = trio.Event()
    receipts: list[Receipt] = []

    @tool
    async def forever() -> str:
        """Wait until cancelled."""
        try:
            await trio.sleep_forever()
        finally:
            cancelled.set()

    server = Server("leave", "1", tools=[forever], receipts=receipts.append)
    start = trio.current_time()

    async def leave() -> Any:
        return {"type": "http.disconnect"}

    with trio.fail_after(10):
        sent = await _exchange(server, "forever", leave)

    assert [] == sent
    assert cancelled.is_set()
    assert ["cancelled"] == [r.outcome for r in receipts]
    assert trio.current_time() - start >= GRACE


async def test_a_short_call_is_never_watched_and_answers() -> None:
    """Done before ``GRACE``: nothing reads past the body, the reply is sent."""
    reads_after_body: list[str] = []

    @tool
    async def quick() -> str:
        """Answer at once."""
        return "done"

    async def after_body() -> Any:
        reads_after_body.append("read")
        return {"type": "http.disconnect"}

    server = Server("quick", "1", tools=[quick])
    with trio.fail_after(10):
        sent = await _exchange(server, "quick", after_body)
        await trio.sleep(3 * GRACE)  # a watcher, had one started, would read now

    assert 200 == sent[0]["status"]
    assert "done" == json.loads(sent[1]["body"])["result"]["structuredContent"]
    assert [] == reads_after_body


async def test_a_failing_receive_ends_only_its_watcher(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``receive()`` raising in the watcher is logged; the call still answers."""

    @tool
    async def slow() -> str:
        """Answer after the watcher has started."""
        await trio.sleep(4 * GRACE)
        return "done"

    async def after_body() -> Any:
        raise RuntimeError("the ASGI server broke")

    server = Server("broken", "1", tools=[slow])
    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"), trio.fail_after(10):
        sent = await _exchange(server, "slow", after_body)

    assert 200 == sent[0]["status"]
    assert "done" == json.loads(sent[1]["body"])["result"]["structuredContent"]
    assert any("disconnect" in r.getMessage() for r in caplog.records)


async def test_a_long_call_under_autojump_does_not_keep_the_sweeper_busy(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Once every running request is watched the sweeper parks: a call that sleeps
    a virtual day ends at once instead of after millions of ``GRACE`` wake-ups."""

    @tool
    async def day() -> str:
        """Sleep a (virtual) day."""
        await trio.sleep(86_400)
        return "morning"

    server = Server("day", "1", tools=[day])
    started = time.monotonic()

    async def stay() -> Any:
        await trio.sleep_forever()

    sent = await _exchange(server, "day", stay)

    assert "morning" == json.loads(sent[1]["body"])["result"]["structuredContent"]
    assert time.monotonic() - started < 5


async def test_a_disconnect_read_after_the_call_ended_cancels_nothing() -> None:
    """The finished response's own ``http.disconnect`` (Hypercorn produces one inside
    the final send) must not cancel that send: once the call has ended, its watcher
    cancels nothing, even when it already holds the message."""
    release = trio.Event()

    @tool
    async def late() -> str:
        """Run past GRACE, then let the disconnect in as it returns."""
        await trio.sleep(4 * GRACE)
        release.set()
        return "done"

    async def after_body() -> Any:
        await release.wait()
        return {"type": "http.disconnect"}

    server = Server("late", "1", tools=[late])
    with trio.fail_after(10):
        sent = await _exchange(server, "late", after_body)

    assert 200 == sent[0]["status"]
    assert "done" == json.loads(sent[1]["body"])["result"]["structuredContent"]
