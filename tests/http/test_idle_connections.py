"""Connections end when HTTP says they should (issue 30): an idle keep-alive
connection after ``Limits.idle_timeout``, and a reply to ``Connection: close`` or to
an HTTP/1.0 request at once.

Real sockets against ``serve_http`` on 127.0.0.1: each client sends raw HTTP/1.x, reads
its whole reply, then waits for the server's end of file. Before the fix, the app's
disconnect watcher cancelled the request while Hypercorn was still inside its final
``send``, so Hypercorn never re-armed its idle timer nor closed the connection.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math

import pytest
import trio
from support import port_of, serving
from support.conn_peer import call_bytes, make_server, read_reply, read_until_closed

from trio_mcp import Limits
from trio_mcp.testing import check_message

IDLE = 0.5
CLIENTS = 20
#: Liveness bounds, not speed targets.
SLACK = 5.0


async def closed_by_server(stream: trio.SocketStream) -> bool:
    """Whether the server closes ``stream`` (end of file or reset) within ``SLACK``."""
    with trio.move_on_after(SLACK):
        await read_until_closed(stream)
        return True
    return False


async def one_call_then_idle(port: int, n: int, closed: list[float]) -> None:
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        await stream.send_all(call_bytes(port, n))
        status, body = await read_reply(stream)
        assert status == 200
        reply = json.loads(body)
        check_message(reply, "tools/call")
        assert reply["result"]["structuredContent"] == f"echo {n}"
        answered = trio.current_time()
        assert await closed_by_server(stream)
        closed.append(trio.current_time() - answered)


async def test_idle_keep_alive_connections_are_closed_after_the_idle_timeout() -> None:
    closed: list[float] = []
    async with (
        serving(make_server(), limits=Limits(idle_timeout=IDLE)) as url,
        trio.open_nursery() as n,
    ):
        for i in range(CLIENTS):
            n.start_soon(one_call_then_idle, port_of(url), i, closed)
    assert len(closed) == CLIENTS
    # Not before the timeout (the connection really was kept alive), soon after it.
    assert min(closed) >= IDLE * 0.8
    assert max(closed) < IDLE + SLACK


async def test_a_connection_stays_open_for_its_next_request_within_the_timeout() -> (
    None
):
    async with (
        serving(make_server(), limits=Limits(idle_timeout=3.0)) as url,
        await trio.open_tcp_stream("127.0.0.1", port_of(url)) as stream,
    ):
        for n in range(3):
            await stream.send_all(call_bytes(port_of(url), n))
            status, body = await read_reply(stream)
            assert status == 200
            assert json.loads(body)["id"] == n
            await trio.sleep(0.2)


async def test_connection_close_closes_the_socket_after_the_reply() -> None:
    async with (
        serving(make_server(), limits=Limits(idle_timeout=60)) as url,
        await trio.open_tcp_stream("127.0.0.1", port_of(url)) as stream,
    ):
        await stream.send_all(call_bytes(port_of(url), 7, close=True))
        status, body = await read_reply(stream)
        assert status == 200
        assert json.loads(body)["id"] == 7
        assert await closed_by_server(stream)


async def test_an_http_1_0_request_is_answered_and_its_socket_closed() -> None:
    async with (
        serving(make_server(), limits=Limits(idle_timeout=60)) as url,
        await trio.open_tcp_stream("127.0.0.1", port_of(url)) as stream,
    ):
        await stream.send_all(call_bytes(port_of(url), 8, version=b"HTTP/1.0"))
        status, body = await read_reply(stream)
        assert status == 200
        assert json.loads(body)["id"] == 8
        assert await closed_by_server(stream)


@pytest.mark.parametrize("field", ["idle_timeout", "body_timeout"])
@pytest.mark.parametrize("value", [0, -1.0, math.nan])
def test_a_connection_timeout_must_be_positive_seconds(
    field: str, value: float
) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: value})  # type: ignore[arg-type]


def test_connection_timeouts_take_timedeltas_and_have_defaults() -> None:
    limits = Limits(idle_timeout=datetime.timedelta(milliseconds=250))
    assert limits.idle_timeout == 0.25
    assert (Limits().idle_timeout, Limits().body_timeout) == (5.0, 30.0)


async def test_request_headers_sent_a_byte_at_a_time_are_cut_off_at_the_idle_timeout() -> (
    None
):
    """Slowloris: incomplete headers count as idle time, so the timer closes them."""
    async with (
        serving(make_server(), limits=Limits(idle_timeout=IDLE)) as url,
        await trio.open_tcp_stream("127.0.0.1", port_of(url)) as stream,
        trio.open_nursery() as nursery,
    ):
        await stream.send_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")

        async def drip() -> None:
            with contextlib.suppress(
                trio.BrokenResourceError, trio.ClosedResourceError
            ):
                while True:
                    await trio.sleep(0.1)
                    await stream.send_all(b"a")

        nursery.start_soon(drip)
        started = trio.current_time()
        assert await closed_by_server(stream)
        assert trio.current_time() - started < IDLE + SLACK
        nursery.cancel_scope.cancel()
