"""Abandoned synchronous handler threads never make a sync call hang (issue 30).

A client that gives up on a blocking sync call leaves its worker thread running
(Trio cannot stop a thread). Before, 256 such threads made every later sync call of
every client wait without an answer. Now, once ``MAX_LINGERING_THREADS`` linger, a
new sync call is refused at once (-32000, over HTTP 503 with ``Retry-After``) and
counted, async calls go on, ``/healthz`` answers 503 with a JSON body saying why, and
everything recovers when the threads return. ``fail_after`` bounds are liveness
bounds, not speed targets.

The budget is spent by counting threads that entered the handler (``ENTERED``),
never calls: a call whose timeout or hang-up comes before its thread starts leaves
no thread behind, which a loaded machine does often enough to matter.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
import trio
from support import port_of, request, serving, serving_websocket, wire
from support.conn_peer import (
    ENTERED,
    RELEASE,
    call_bytes,
    call_headers,
    call_json,
    double,
    make_server,
    read_reply,
)
from trio_websocket import open_websocket_url

from trio_mcp import Receipt, Server, _metrics, tool
from trio_mcp._declare._threads import MAX_LINGERING_THREADS
from trio_mcp.testing import McpTestClient, ProtocolError, check_message

ABANDONED = 320
PARALLEL = 16
SOON = 5.0
LIVENESS = 30.0
SERVER_BUSY = -32000


@pytest.fixture(autouse=True)
def _release_at_the_end() -> Iterator[None]:
    RELEASE.clear()
    while ENTERED.acquire(blocking=False):
        pass
    yield
    RELEASE.set()


async def abandon(port: int, n: int, statuses: list[int]) -> None:
    """Call ``stuck`` and hang up after 0.1 s, unless answered first."""
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        await stream.send_all(call_bytes(port, n, name="stuck", arguments={}))
        with trio.move_on_after(0.1):
            status, body = await read_reply(stream)
            check_message(json.loads(body), "tools/call")
            statuses.append(status)


def take_entries() -> int:
    """How many handler threads entered ``stuck``/``stuck_briefly`` since last asked."""
    entered = 0
    while ENTERED.acquire(blocking=False):
        entered += 1
    return entered


async def abandon_until_spent(abandon: Callable[[], Awaitable[None]]) -> int:
    """Run ``abandon`` until ``MAX_LINGERING_THREADS`` handler threads entered.

    Each ``abandon`` gives up on sync calls; their threads linger. Returns how many
    threads entered (at least the budget).
    """
    entered = 0
    with trio.fail_after(LIVENESS):
        while entered < MAX_LINGERING_THREADS:
            await abandon()
            entered += take_entries()
    return entered


async def call(client: httpx.AsyncClient, name: str, arguments: Any) -> httpx.Response:
    port = client.base_url.port
    assert port is not None
    headers = dict(call_headers(port, name))
    with trio.fail_after(SOON):
        return await client.post(
            "/mcp", content=call_json(1, name, arguments), headers=headers
        )


def checked(response: httpx.Response) -> dict[str, Any]:
    """The response's one JSON-RPC message, validated against the schema."""
    assert response.headers["content-type"] == "application/json"
    message: dict[str, Any] = response.json()
    check_message(message, "tools/call")
    return message


async def test_abandoned_sync_calls_spend_the_budget_then_sync_calls_are_refused_at_once() -> (
    None
):
    statuses: list[int] = []
    calls = 0
    async with (
        serving(make_server()) as base,
        httpx.AsyncClient(base_url=base) as client,
    ):
        port = port_of(base)
        limiter = trio.CapacityLimiter(PARALLEL)

        async def one(n: int) -> None:
            async with limiter:
                await abandon(port, n, statuses)

        async def a_round() -> None:
            nonlocal calls
            async with trio.open_nursery() as nursery:
                for n in range(calls, calls + ABANDONED):
                    nursery.start_soon(one, n)
            calls += ABANDONED

        await abandon_until_spent(a_round)
        # Every call either lingers in its thread or was refused at once with 503.
        assert set(statuses) <= {503}

        # The server notices each hang-up on its own time; then the budget is spent.
        with trio.fail_after(LIVENESS):
            while (health := await client.get("/healthz")).status_code == 200:  # noqa: ASYNC110 - polling a server
                await trio.sleep(0.05)
        assert health.status_code == 503
        report = health.json()
        assert report["status"] == "degraded"
        assert "abandoned synchronous handler threads" in report["reason"]
        assert report["lingeringThreads"] >= MAX_LINGERING_THREADS
        assert report["maxLingeringThreads"] == MAX_LINGERING_THREADS
        # Counted even when the client hung up before reading the refusal.
        assert report["refusedCalls"] >= len(statuses)
        assert report["lingeringThreads"] + report["refusedCalls"] <= calls

        refused = await call(client, "double", {"n": 21})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        error = checked(refused)["error"]
        assert error["code"] == SERVER_BUSY
        assert error["message"].startswith("server busy: ")
        assert "abandoned synchronous handler threads" in error["message"]
        assert error["data"]["retryable"] is True

        echoed = await call(client, "echo", {"text": "async"})
        assert wire(checked(echoed))["result"]["structuredContent"] == ("echo async")

        RELEASE.set()
        with trio.fail_after(LIVENESS):
            while (await client.get("/healthz")).status_code != 200:  # noqa: ASYNC110 - polling a server
                await trio.sleep(0.05)
        assert (await client.get("/healthz")).text == "ok\n"
        doubled = await call(client, "double", {"n": 21})
        assert wire(checked(doubled))["result"]["structuredContent"] == 42


@tool(timeout=0.01)
def stuck_briefly() -> str:
    """Block until the test releases every stuck handler; time out at once."""
    ENTERED.release()
    RELEASE.wait(timeout=60)
    return "released"


def counters() -> dict[str, float]:
    """The busy, refused and rate-limited counters, for ``tools/call``."""
    from prometheus_client.parser import text_string_to_metric_families

    text = _metrics.prometheus_text()[0].decode()
    found = dict.fromkeys(("busy", "refused", "rate_limited"), 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            event = sample.name.removeprefix("trio_mcp_server_").removesuffix("_total")
            if event in found and sample.labels["mcp_method_name"] == "tools/call":
                found[event] += sample.value
    return found


def budget_server(receipts: list[Receipt] | None = None) -> Server:
    sink = None if receipts is None else receipts.append
    return Server("budget", "1", tools=[stuck_briefly, double], receipts=sink)


async def test_over_stdio_framing_a_spent_budget_is_minus_32000_and_a_refused_receipt() -> (
    None
):
    receipts: list[Receipt] = []
    _metrics.enable_prometheus()
    async with McpTestClient(budget_server(receipts)) as client:

        async def time_out() -> None:
            refused: ProtocolError | None = None
            try:
                timed_out = await client.call_tool("stuck_briefly", {})
            except ProtocolError as exc:
                refused = exc
            if refused is None:
                assert timed_out.is_error
            else:
                # Spent while the last abandoned threads are still starting.
                assert refused.code == SERVER_BUSY
                await trio.sleep(0.01)

        await abandon_until_spent(time_out)
        before = counters()
        with trio.fail_after(SOON), pytest.raises(ProtocolError) as refused:
            await client.call_tool("double", {"n": 2})
        # Counted as busy, not as a refusal for a missing capability.
        assert {"busy": 1} == {
            k: v - before[k] for k, v in counters().items() if v != before[k]
        }
        assert refused.value.code == SERVER_BUSY
        assert wire(refused.value.data)["retryable"] is True
        assert receipts[-1].outcome == "refused"
        assert receipts[-1].error_type is not None
        assert receipts[-1].error_type.endswith("ThreadsExhausted")

        RELEASE.set()
        with trio.fail_after(LIVENESS):
            while True:
                try:
                    doubled = await client.call_tool("double", {"n": 2})
                except ProtocolError:
                    await trio.sleep(0.05)
                else:
                    break
        assert doubled.structured == 4


async def test_over_a_websocket_a_spent_budget_is_minus_32000_at_once() -> None:
    async with (
        serving_websocket(budget_server()) as port,
        open_websocket_url(f"ws://127.0.0.1:{port}/mcp", subprotocols=["mcp"]) as ws,
    ):

        async def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            await ws.send_message(
                json.dumps(request(n, "tools/call", name=name, arguments=arguments))
            )
            while True:
                reply: dict[str, Any] = json.loads(await ws.get_message())
                if reply.get("id") == n:
                    check_message(reply, "tools/call")
                    return reply

        calls = 0

        async def time_out() -> None:
            nonlocal calls
            calls += 1
            timed_out = await call(calls, "stuck_briefly", {})
            if "error" in timed_out:
                # Spent while the last abandoned threads are still starting.
                assert timed_out["error"]["code"] == SERVER_BUSY
                await trio.sleep(0.01)
            else:
                assert timed_out["result"]["isError"] is True

        await abandon_until_spent(time_out)
        with trio.fail_after(SOON):
            refused = await call(-1, "double", {"n": 2})
        assert refused["error"]["code"] == SERVER_BUSY
        assert refused["error"]["data"]["retryable"] is True
        RELEASE.set()
