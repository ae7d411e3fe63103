"""A request body that trickles in gets 408 and its connection closed (issue 30).

Real sockets against ``serve_http`` on 127.0.0.1 with ``Limits(body_timeout=0.5)``:
a body sent a byte at a time, and an endless chunked body, are answered with 408 (a
schema-valid -32600) within the deadline plus slack, and the server closes the
socket; a body that arrives in pieces inside the deadline is served as usual.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio
from support.conn_peer import (
    call_headers,
    call_json,
    make_server,
    read_reply,
    read_until_closed,
)

from trio_mcp import Limits
from trio_mcp.testing import check_message

DEADLINE = 0.5
#: Liveness bound, not a speed target.
SLACK = 5.0


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[int, trio.SocketStream]]:
    limits = Limits(body_timeout=DEADLINE, idle_timeout=60)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: make_server().serve_http(
                port=0, limits=limits, task_status=task_status
            )
        )
        async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
            yield port, stream
        nursery.cancel_scope.cancel()


def head(port: int, framing: tuple[str, str]) -> bytes:
    headers = [*call_headers(port), framing]
    lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers)
    return b"POST /mcp HTTP/1.1\r\n" + lines + b"\r\n"


async def trickle(stream: trio.SocketStream, pieces: list[bytes], pause: float) -> None:
    for piece in pieces:
        try:
            await stream.send_all(piece)
        except trio.BrokenResourceError:
            return  # the server answered and closed
        await trio.sleep(pause)


async def refused_then_closed(stream: trio.SocketStream, pieces: list[bytes]) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trickle, stream, pieces, 0.1)
        with trio.fail_after(DEADLINE + SLACK):
            status, body, headers = await read_reply_with_headers(stream)
            nursery.cancel_scope.cancel()
    assert status == 408
    assert headers["connection"] == "close"
    message = json.loads(body)
    check_message(message, None)
    assert message["error"]["code"] == -32600
    assert "did not arrive within 0.5 seconds" in message["error"]["message"]
    with trio.fail_after(SLACK):
        await read_until_closed(stream)


async def read_reply_with_headers(
    stream: trio.SocketStream,
) -> tuple[int, bytes, dict[str, str]]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive_some()
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in lines[1:])
    while len(body) < int(fields["content-length"]):
        body += await stream.receive_some()
    return int(lines[0].split()[1]), body, fields


async def test_a_body_sent_a_byte_at_a_time_gets_408_and_the_socket_closes() -> None:
    body = call_json(1)
    async with connected() as (port, stream):
        await stream.send_all(head(port, ("Content-Length", str(len(body)))))
        await refused_then_closed(stream, [body[i : i + 1] for i in range(len(body))])


async def test_an_endless_chunked_body_gets_408_and_the_socket_closes() -> None:
    async with connected() as (port, stream):
        await stream.send_all(head(port, ("Transfer-Encoding", "chunked")))
        await refused_then_closed(stream, [b"1\r\n \r\n"] * 1000)


async def test_a_body_in_pieces_within_the_deadline_is_served() -> None:
    body = call_json(3)
    async with connected() as (port, stream):
        await stream.send_all(head(port, ("Content-Length", str(len(body)))))
        third = len(body) // 3
        await trickle(stream, [body[:third], body[third:]], 0.1)
        status, reply = await read_reply(stream)
    assert status == 200
    assert json.loads(reply)["result"]["structuredContent"] == "echo 3"
