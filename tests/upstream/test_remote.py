"""A gateway in front of real remote servers: a trio_mcp server over Streamable HTTP
and over stdio (both eras), called through the gateway by our test client.

Each relayed call gives what the same call made directly gives; the gateway starts
without waiting for its upstreams, serves a live one beside a dead one, follows an
upstream's catalog changes, and an inbound cancel or deadline reaches the upstream's
handler within a second.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pytest
import trio
from support import serving, serving_websocket
from support.gateway import listed
from support.tools import echo as own_echo
from support.upstream import make_server, stdio_command, wait_for_text

from trio_mcp import McpError, RateLimit, Server, Upstream, tool
from trio_mcp.client import Client
from trio_mcp.testing import McpTestClient


@asynccontextmanager
async def http_upstream() -> AsyncIterator[str]:
    async with serving(make_server()) as base:
        yield f"{base}/mcp"


TARGETS = ["http", "ws", "stdio", "stdio-legacy"]


@asynccontextmanager
async def target_of(kind: str) -> AsyncIterator[str | list[str]]:
    if kind == "http":
        async with http_upstream() as url:
            yield url
    elif kind == "ws":
        async with serving_websocket(make_server()) as port:
            yield f"ws://127.0.0.1:{port}/mcp"
    else:
        yield stdio_command("--legacy") if kind == "stdio-legacy" else stdio_command()


@asynccontextmanager
async def gateway_of(kind: str, **options: Any) -> AsyncIterator[McpTestClient]:
    """A test client of a gateway in front of ``kind``'s upstream, listed."""
    async with target_of(kind) as target:
        gateway = Server("gw", "1", upstreams=[Upstream(target, **options)])
        async with McpTestClient(gateway) as client:
            await listed(client.list_tools, "wait_cancel")
            yield client


def era_of(kind: str) -> Literal["auto", "legacy"]:
    return "legacy" if kind == "stdio-legacy" else "auto"


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_relayed_call_gives_what_the_direct_call_gives(kind: str) -> None:
    async with target_of(kind) as target:
        gateway = Server(
            "gw",
            "1",
            tools=[own_echo],
            upstreams=[Upstream(target, prefix="up_", era=era_of(kind))],
        )
        async with (
            Client(target, era=era_of(kind)) as direct,
            McpTestClient(gateway) as client,
        ):
            names = await listed(client.list_tools, "up_add")
            want = await direct.call_tool("add", {"a": 2, "b": 3})
            got = await client.call_tool("up_add", {"a": 2, "b": 3})
            want_fail = await direct.call_tool("fail", {"why": "no luck"})
            got_fail = await client.call_tool("up_fail", {"why": "no luck"})
            read = await client.read_resource("note://a")
            prompt = await client.get_prompt("up_review", {"language": "Rust"})

    assert {"echo", "up_echo", "up_add", "up_wait_cancel"} <= set(names)
    assert (want.content, want.structured, want.is_error) == (
        got.content,
        got.structured,
        got.is_error,
    )
    assert (want_fail.content, True) == (got_fail.content, got_fail.is_error)
    assert "note a" == read["contents"][0]["text"]  # type: ignore[index,call-overload]
    assert "review this Rust" in str(prompt["messages"])


@pytest.mark.parametrize("kind", TARGETS)
async def test_an_inbound_cancel_reaches_the_upstream_handler(
    kind: str, tmp_path: Path
) -> None:
    mark = tmp_path / "mark"
    async with (
        gateway_of(kind, era=era_of(kind)) as client,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(client.call_tool, "wait_cancel", {"mark": str(mark)})
        await wait_for_text(mark, "started")
        await client.notify("notifications/cancelled", {"requestId": _last_id(client)})
        took = await wait_for_text(mark, "cancelled", within=5.0)
        nursery.cancel_scope.cancel()

    assert took < 1.0


def _last_id(client: McpTestClient) -> int:
    """The id of the request the test client sent last."""
    return next(client._ids) - 1


@pytest.mark.parametrize("kind", ["http", "stdio"])
async def test_the_upstreams_timeout_cancels_the_upstream_handler(
    kind: str, tmp_path: Path
) -> None:
    mark = tmp_path / "mark"
    async with gateway_of(kind, timeout=0.5) as client:
        result = await client.call_tool("wait_cancel", {"mark": str(mark)})
        took = await wait_for_text(mark, "cancelled", within=5.0)

    assert result.is_error
    assert "timed out after 0.5 seconds" in result.text
    assert took < 1.0


async def test_the_gateway_serves_its_own_at_once_and_a_live_upstream_beside_a_dead_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "trio_mcp")
    async with http_upstream() as live:
        gateway = Server(
            "gw",
            "1",
            tools=[own_echo],
            upstreams=[
                Upstream(
                    "http://nobody:s3cret@127.0.0.1:9/mcp?key=k3y",
                    prefix="dead_",
                    connect_timeout=0.5,
                ),
                Upstream(live, prefix="live_"),
            ],
        )
        async with McpTestClient(gateway) as client:
            first = [t["name"] for t in await client.list_tools()]
            names = await listed(client.list_tools, "live_echo")
            echoed = await client.call_tool("live_echo", {"text": "hi"})
            with trio.fail_after(5):
                while "is not served" not in caplog.text:  # noqa: ASYNC110 - the log is the event
                    await trio.sleep(0.02)

    assert ["echo"] == first[:1]
    assert not [n for n in names if n.startswith("dead_")]
    assert "hi" == echoed.structured
    assert "upstream http://127.0.0.1:9/mcp is not served" in caplog.text
    for secret in ("s3cret", "k3y", "nobody"):
        assert secret not in caplog.text


async def test_an_upstreams_catalog_change_reaches_the_gateways_clients() -> None:
    @tool
    def late() -> str:
        """A tool added while serving."""
        return "late"

    upstream = Server("dyn", "1", tools=[own_echo], dynamic=True)
    async with serving(upstream) as base:
        gateway = Server("gw", "1", upstreams=[Upstream(f"{base}/mcp", prefix="d_")])
        async with McpTestClient(gateway) as client:
            await listed(client.list_tools, "d_echo")
            async with client.listen(tools_list_changed=True) as listen:
                upstream.replace(tools=[own_echo, late])
                notice = await listen.next(timeout=10)
            names = await listed(client.list_tools, "d_late")

    assert "notifications/tools/list_changed" == notice["method"]
    assert {"d_echo", "d_late"} == set(names)


@pytest.mark.parametrize("kind", ["http", "stdio"])
async def test_an_inbound_http_client_that_goes_away_cancels_the_upstream_handler(
    kind: str, tmp_path: Path
) -> None:
    """The gateway served over HTTP; the inbound client cancels its call, which
    closes its stream: the gateway's call, and the upstream's handler, end."""
    mark = tmp_path / "mark"
    async with target_of(kind) as target:
        gateway = Server("gw", "1", upstreams=[Upstream(target)])
        async with serving(gateway) as base, Client(f"{base}/mcp") as inbound:
            await listed(inbound.list_tools, "wait_cancel")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(
                    partial(inbound.call_tool, "wait_cancel", {"mark": str(mark)})
                )
                await wait_for_text(mark, "started")
                nursery.cancel_scope.cancel()
            took = await wait_for_text(mark, "cancelled", within=5.0)

    assert took < 1.0


async def test_the_gateways_shutdown_cancels_the_upstream_handler(
    tmp_path: Path,
) -> None:
    mark = tmp_path / "mark"
    stop = trio.CancelScope()

    async def serve(gateway: Server, *, task_status: trio.TaskStatus[int]) -> None:
        with stop:
            await gateway.serve_http(port=0, task_status=task_status)

    async def call(inbound: Client) -> None:
        with contextlib.suppress(McpError.Transport):  # the gateway went away
            await inbound.call_tool("wait_cancel", {"mark": str(mark)})

    async with http_upstream() as url, trio.open_nursery() as nursery:
        port = await nursery.start(serve, Server("gw", "1", upstreams=[Upstream(url)]))
        async with Client(f"http://127.0.0.1:{port}/mcp") as inbound:
            await listed(inbound.list_tools, "wait_cancel")
            nursery.start_soon(call, inbound)
            await wait_for_text(mark, "started")
            stop.cancel()  # the gateway stops serving
            took = await wait_for_text(mark, "cancelled", within=5.0)

    assert took < 1.0


async def test_an_upstreams_input_request_is_not_relayed() -> None:
    """``greet`` asks for a name (elicitation): the gateway declares none, so the
    call is a tool error naming the upstream, and the gateway goes on."""
    async with gateway_of("http") as client:
        asked = await client.call_tool("greet")
        echoed = await client.call_tool("echo", {"text": "still"})

    assert asked.is_error
    assert asked.text.startswith("upstream http://127.0.0.1:")
    assert "elicitation" in asked.text  # the gateway declares none
    assert "still" == echoed.structured


async def test_a_relayed_call_counts_against_the_gateways_rate_limit() -> None:
    async with http_upstream() as url:
        gateway = Server("gw", "1", upstreams=[Upstream(url)])
        async with (
            serving(gateway, rate_limit=RateLimit(2, per=60)) as base,
            Client(f"{base}/mcp") as client,
        ):
            await listed(client.list_tools, "echo")
            await client.call_tool("echo", {"text": "1"})
            await client.call_tool("echo", {"text": "2"})
            with pytest.raises(McpError.Remote, match="rate limited") as raised:
                await client.call_tool("echo", {"text": "3"})

    assert -32000 == raised.value.code


async def test_an_upstream_that_goes_away_is_withdrawn_and_served_again_when_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "trio_mcp")
    upstream = make_server()

    async def serve_once(port: int, *, task_status: trio.TaskStatus[int]) -> None:
        await upstream.serve_http(port=port, task_status=task_status)

    async with trio.open_nursery() as outer:
        first = trio.CancelScope()

        async def first_life(*, task_status: trio.TaskStatus[int]) -> None:
            with first:
                await serve_once(0, task_status=task_status)

        port = await outer.start(first_life)
        gateway = Server(
            "gw", "1", upstreams=[Upstream(f"http://127.0.0.1:{port}/mcp")]
        )
        async with McpTestClient(gateway) as client:
            await listed(client.list_tools, "echo")
            first.cancel()  # the upstream goes away
            with trio.fail_after(30):
                while await client.list_tools():  # noqa: ASYNC110 - polled: another server
                    await trio.sleep(0.05)
            withdrawn = await client.list_tools()
            await outer.start(serve_once, port)  # back, on the same port
            names = await listed(client.list_tools, "echo")
            echoed = await client.call_tool("echo", {"text": "back"})
        outer.cancel_scope.cancel()

    assert [] == withdrawn
    assert "echo" in names
    assert "back" == echoed.structured
    assert any("is not served" in m for m in caplog.messages)
