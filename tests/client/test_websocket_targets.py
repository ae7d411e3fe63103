"""The client against ``serve_websocket`` on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import serving_websocket
from support.raw_server import answering
from support.upstream import cancelled_across, make_server, tour

from trio_mcp import McpError
from trio_mcp.client import Client


async def test_a_websocket_server_answers_every_kind_of_request() -> None:
    async with (
        serving_websocket(make_server()) as port,
        Client(f"ws://127.0.0.1:{port}/mcp") as client,
    ):
        assert "2026-07-28" == client.server.revision
        await tour(client)


async def test_a_cancel_reaches_the_handler_over_websocket(tmp_path: Path) -> None:
    async with (
        serving_websocket(make_server()) as port,
        Client(f"ws://127.0.0.1:{port}/mcp") as client,
    ):
        await cancelled_across(client, tmp_path / "mark")
        assert "x" == (await client.call_tool("echo", {"text": "x"})).text


async def test_a_refused_handshake_names_the_status() -> None:
    async with serving_websocket(make_server(), require_auth=True) as port:
        with pytest.raises(McpError.Transport, match="401"):
            async with Client(f"ws://127.0.0.1:{port}/mcp"):
                pass


async def test_a_redirected_handshake_is_not_followed() -> None:
    redirect = (
        b"HTTP/1.1 301 Moved Permanently\r\n"
        b"Location: ws://127.0.0.1:9/elsewhere\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    async with answering(redirect) as port:
        with pytest.raises(McpError.Transport, match=r"301.*ws://127\.0\.0\.1:9/"):
            async with Client(f"ws://127.0.0.1:{port}/mcp", auth="secret"):
                pass
