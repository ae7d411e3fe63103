"""Upstreams that misbehave: each fault is a clear error naming the upstream, and
the gateway goes on serving its own tools and its other upstreams.

The misbehaving upstream is a raw ASGI app (``support.liar``) on a real Hypercorn:
nothing on its side checks what it sends.
"""

from __future__ import annotations

import logging

import pytest
import trio
from support import serving_app
from support.gateway import listed
from support.liar import Liar
from support.tools import echo

from trio_mcp import Server, Upstream
from trio_mcp.testing import McpTestClient, ProtocolError


async def test_each_fault_is_an_error_naming_the_upstream_and_the_gateway_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serving_app(Liar()) as base:
        url = f"{base}/mcp"
        gateway = Server(
            "gw", "1", tools=[echo], upstreams=[Upstream(url, prefix="l_")]
        )
        async with McpTestClient(gateway) as client:
            await listed(client.list_tools, "l_fine")
            with pytest.raises(ProtocolError) as broken:
                await client.call_tool("l_broken")
            garbage = await client.call_tool("l_garbage")
            huge = await client.call_tool("l_huge")
            fine = await client.call_tool("l_fine")
            own = await client.call_tool("echo", {"text": "still here"})

    # A result that breaks the schema we list is never relayed: -32603 with a
    # reference, whose log record names the upstream's tool.
    assert -32603 == broken.value.code
    data = broken.value.data
    assert isinstance(data, dict)
    reference = data["reference"]
    assert isinstance(reference, str)
    record = next(r for r in caplog.records if reference in r.getMessage())
    assert f"upstream {base}/mcp tool 'broken'" in record.getMessage()
    assert "a word" not in broken.value.message
    for result in (garbage, huge):
        assert result.is_error
        assert result.text.startswith(f"upstream {base}/mcp: ")
    assert "JSON" in garbage.text
    assert "4 MiB" in huge.text or "limit" in huge.text
    assert {"n": 1} == fine.structured
    assert "still here" == own.structured


async def test_an_upstream_that_redirects_is_not_followed_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "trio_mcp")
    liar = Liar(redirect=True)
    async with serving_app(liar) as base:
        gateway = Server(
            "gw", "1", tools=[echo], upstreams=[Upstream(f"{base}/mcp", prefix="r_")]
        )
        async with McpTestClient(gateway) as client:
            with trio.fail_after(10):
                while "is not served" not in caplog.text:  # noqa: ASYNC110 - the log is the event
                    await trio.sleep(0.02)
            names = [t["name"] for t in await client.list_tools()]
            own = await client.call_tool("echo", {"text": "x"})

    line = next(m for m in caplog.messages if "is not served" in m)
    assert line.startswith(f"upstream {base}/mcp is not served: ")
    assert "redirect" in line
    assert "127.0.0.1:1/elsewhere" in line
    assert ["echo"] == names
    assert "x" == own.structured
    assert all("/elsewhere" not in h.get("host", "") for h in liar.headers)


async def test_an_unreachable_upstream_is_retried_after_half_a_second_doubling_to_30(
    autojump_clock: trio.abc.Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "trio_mcp")
    gateway = Server(
        "gw", "1", tools=[echo], upstreams=[Upstream("http://127.0.0.1:9/mcp")]
    )

    def delays() -> list[str]:
        return [
            m.rsplit("trying again in ", 1)[1]
            for m in caplog.messages
            if "is not served" in m
        ]

    async with McpTestClient(gateway) as client:
        with trio.fail_after(300):
            while len(delays()) < 9:  # noqa: ASYNC110 - the log is the event
                await trio.sleep(0.1)
        own = await client.call_tool("echo", {"text": "served meanwhile"})

    assert ["0.5 s", "1 s", "2 s", "4 s", "8 s", "16 s", "30 s", "30 s", "30 s"] == (
        delays()[:9]
    )
    assert "served meanwhile" == own.structured
