"""subscriptions/listen over Streamable HTTP on a real Hypercorn on 127.0.0.1.

The listen response is one long SSE stream: the acknowledgement first, tagged
notifications, ``:`` keep-alives while quiet, and the result on graceful shutdown.
Every ``data:`` message is validated against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import httpx
import trio
from listen_server import make_server
from support import META, serving

from trio_mcp import Server
from trio_mcp.testing import check_message

WAIT = 10.0
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def body(request_id: Any, method: str, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"_meta": META, **params},
    }


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        out["mcp-name"] = name
    return out


class Stream:
    """One listen response over a raw socket, read line by line (chunked SSE).

    A raw HTTP/1.1 client keeps the test free of httpx's nested async generators,
    which cannot be closed early without warnings.
    """

    def __init__(self, socket: trio.SocketStream) -> None:
        self.socket = socket
        self.raw = b""
        self.text = ""
        self.done = False
        self.keepalives = 0
        self.status = 0
        self.headers: dict[str, str] = {}

    async def _more(self) -> None:
        data = await self.socket.receive_some()
        if not data:
            self.done = True
        self.raw += data

    async def start(self) -> None:
        while b"\r\n\r\n" not in self.raw:
            await self._more()
        head, _, self.raw = self.raw.partition(b"\r\n\r\n")
        status, *fields = head.decode("latin-1").split("\r\n")
        self.status = int(status.split()[1])
        self.headers = dict(f.lower().split(": ", 1) for f in fields)
        assert "chunked" == self.headers.get("transfer-encoding")

    async def _line(self) -> str | None:
        """The next SSE line, decoding chunks as needed; None at the end."""
        while "\n" not in self.text:
            size_line, sep, rest = self.raw.partition(b"\r\n")
            if sep:
                size = int(size_line, 16)
                if size == 0:
                    return None
                if len(rest) >= size + 2:
                    self.text += rest[:size].decode()
                    self.raw = rest[size + 2 :]
                    continue
            if self.done:
                return None
            await self._more()
        line, _, self.text = self.text.partition("\n")
        return line

    async def next_message(self) -> dict[str, Any]:
        """Return the next ``data:`` message, counting ``:`` comments on the way."""
        with trio.fail_after(WAIT):
            while (line := await self._line()) is not None:
                if line.startswith(":"):
                    self.keepalives += 1
                elif line.startswith("data: "):
                    message: dict[str, Any] = json.loads(line[len("data: ") :])
                    is_result = "id" in message and "method" not in message
                    check_message(
                        message, "subscriptions/listen" if is_result else None
                    )
                    return message
        raise AssertionError("the stream ended")

    async def keepalive(self) -> None:
        """Read up to the next ``:`` comment; nothing but blank lines may precede it."""
        with trio.fail_after(WAIT):
            while (line := await self._line()) is not None:
                if line.startswith(":"):
                    self.keepalives += 1
                    return
                assert "" == line
        raise AssertionError("the stream ended")

    async def rest(self) -> list[str]:
        """Every line left until the response ends."""
        lines = []
        with trio.fail_after(WAIT):
            while (line := await self._line()) is not None:
                lines.append(line)
        return lines


@asynccontextmanager
async def listening(
    client: httpx.AsyncClient, url: str, request_id: Any, **notifications: Any
) -> AsyncIterator[Stream]:
    """POST a listen over a raw socket; yield the stream once its headers arrived."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    payload = json.dumps(
        body(request_id, "subscriptions/listen", notifications=notifications)
    ).encode()
    fields = {
        "host": f"127.0.0.1:{port}",
        "content-type": "application/json",
        "content-length": str(len(payload)),
        **headers("subscriptions/listen"),
    }
    request = "POST /mcp HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in fields.items()
    )
    with trio.fail_after(WAIT):
        socket = await trio.open_tcp_stream("127.0.0.1", port)
    async with socket:
        await socket.send_all(request.encode() + b"\r\n" + payload)
        stream = Stream(socket)
        with trio.fail_after(WAIT):
            await stream.start()
        assert 200 == stream.status
        assert "text/event-stream" == stream.headers["content-type"]
        yield stream


async def call(client: httpx.AsyncClient, url: str, name: str, **arguments: Any) -> Any:
    with trio.fail_after(WAIT):
        response = await client.post(
            f"{url}/mcp",
            json=body(name, "tools/call", name=name, arguments=arguments),
            headers=headers("tools/call", name),
        )
    message = response.json()
    check_message(message, "tools/call")
    return message["result"]["structuredContent"]


async def wait_until_no_subscribers(server: Server) -> None:
    # The server notices a closed socket asynchronously; poll, bounded.
    with trio.fail_after(WAIT):
        while server.broadcast.statistics().subscribers:  # noqa: ASYNC110 - no event exists
            await trio.sleep(0.01)


async def test_a_listen_streams_the_ack_changes_and_keepalives_as_sse() -> None:
    """Spec §8/§12: text/event-stream, ack first, tagged list_changed after a change
    made by another request, ``:`` comments while quiet."""
    server = make_server()
    async with (
        serving(server, keepalive_interval=0.05) as url,
        httpx.AsyncClient() as client,
        listening(
            client, url, "h1", toolsListChanged=True, promptsListChanged=True
        ) as s,
    ):
        ack = await s.next_message()
        await s.keepalive()
        await s.keepalive()
        assert "toggled" == await call(client, url, "toggle_prompt")
        change = await s.next_message()

    assert "notifications/subscriptions/acknowledged" == ack["method"]
    assert {"toolsListChanged": True, "promptsListChanged": True} == ack["params"][
        "notifications"
    ]
    assert "notifications/prompts/list_changed" == change["method"]
    assert "h1" == change["params"]["_meta"][SUBSCRIPTION]


async def test_listens_take_no_slot_and_updates_reach_only_their_subscribers() -> None:
    """Our choice: listen streams hold no max_concurrent slot; spec §8: updates go
    only to streams subscribed to the URI."""
    server = make_server()
    async with (
        serving(server, keepalive_interval=0.05, max_concurrent=1) as url,
        httpx.AsyncClient() as client,
        listening(client, url, 1, resourceSubscriptions=["test://watched"]) as a,
        listening(client, url, 2, resourceSubscriptions=["test://other"]) as b,
    ):
        await a.next_message()
        await b.next_message()
        assert "touched" == await call(client, url, "touch", uri="test://other")
        update = await b.next_message()
        assert "touched" == await call(client, url, "touch", uri="test://watched")
        other = await a.next_message()

    assert {"_meta": {SUBSCRIPTION: 2}, "uri": "test://other"} == update["params"]
    assert {"_meta": {SUBSCRIPTION: 1}, "uri": "test://watched"} == other["params"]


async def test_closing_the_stream_ends_the_subscription() -> None:
    """Spec §8: on HTTP the client ends a subscription by closing the stream."""
    server = make_server()
    async with (
        serving(server, keepalive_interval=0.05) as url,
        httpx.AsyncClient() as client,
    ):
        async with listening(client, url, "gone", toolsListChanged=True) as s:
            await s.next_message()
            assert 1 == server.broadcast.statistics().subscribers
        await wait_until_no_subscribers(server)
        answered = await call(client, url, "toggle_tool")

    assert "toggled" == answered


async def test_shutdown_ends_the_stream_with_the_listen_result() -> None:
    """Spec §8: on graceful teardown the server sends the listen's result, then
    closes; serve_http returns."""
    server = make_server()
    async with trio.open_nursery() as nursery, httpx.AsyncClient() as client:
        port = await nursery.start(partial(server.serve_http, port=0))
        url = f"http://127.0.0.1:{port}"
        async with listening(client, url, 9, toolsListChanged=True) as s:
            await s.next_message()
            server.shutdown()
            result = await s.next_message()
            rest = await s.rest()

    assert 9 == result["id"]
    assert 9 == result["result"]["_meta"][SUBSCRIPTION]
    assert "complete" == result["result"]["resultType"]
    assert [] == [line for line in rest if line.strip()]
