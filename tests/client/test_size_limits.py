"""A message past 4 MiB is ``McpError.Transport`` on every transport, read no further
than the limit."""

from __future__ import annotations

import sys

import pytest
from support.raw_server import answering

from trio_mcp import McpError
from trio_mcp.client import Client
from trio_mcp.client._jsonrpc import MAX_MESSAGE_BYTES

BIG = MAX_MESSAGE_BYTES + 10


async def _refused(head: bytes, body: bytes) -> str:
    async with answering(head + body) as port:
        with pytest.raises(McpError.Transport) as raised:
            async with Client(f"http://127.0.0.1:{port}/mcp", era="modern"):
                pass
    return str(raised.value)


async def test_an_announced_body_past_the_limit_is_refused_unread() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    head += b"Content-Length: %d\r\n\r\n" % BIG
    message = await _refused(head, b"")

    assert f"announced a body of {BIG} bytes" in message


async def test_a_chunked_body_past_the_limit_is_refused() -> None:
    chunk = b"x" * 65536
    body = (b"%x\r\n%s\r\n" % (len(chunk), chunk)) * (BIG // len(chunk) + 1)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    head += b"Transfer-Encoding: chunked\r\n\r\n"

    assert "sent a body past the client's limit" in await _refused(head, body)


async def test_an_event_past_the_limit_is_refused() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    head += b"Connection: close\r\n\r\n"
    body = b"data: " + b"x" * BIG + b"\n\n"

    assert "sent an event past the client's limit" in await _refused(head, body)


async def test_a_stdio_line_past_the_limit_is_refused() -> None:
    child = (
        "import sys\n"
        "sys.stdin.readline()\n"
        f"sys.stdout.write('x' * {BIG} + '\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stdin.read()\n"
    )
    with pytest.raises(McpError.Transport, match="past the client's limit"):
        async with Client([sys.executable, "-I", "-S", "-c", child], era="modern"):
            pass
