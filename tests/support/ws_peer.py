"""A WebSocket MCP client for tests: send frames, collect schema-checked replies.

Every frame the server sends is decoded and validated against the revision's schema
(``check_message``) as it arrives; ``reply`` waits on arrivals, never on time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from trio_mcp.testing import check_message

from . import META

__all__ = ["WAIT", "WsPeer", "connected", "handshake_answer"]

WAIT = 10.0


class WsPeer:
    """The client side of one connection: send frames, collect validated replies."""

    def __init__(self, ws: WebSocketConnection) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []
        self.methods: dict[Any, str] = {}
        self._changed = trio.Event()

    async def read(self) -> None:
        try:
            while True:
                message = json.loads(await self.ws.get_message())
                check_message(message, self.methods.get(message.get("id")))
                self.messages.append(message)
                self._changed.set()
                self._changed = trio.Event()
        except ConnectionClosed:
            self._changed.set()

    async def call(self, request_id: Any, tool: str, /, **arguments: Any) -> None:
        self.methods[request_id] = "tools/call"
        await self.ws.send_message(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments, "_meta": META},
                }
            )
        )

    async def cancel(self, request_id: Any) -> None:
        await self.ws.send_message(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id},
                }
            )
        )

    def find(self, request_id: Any) -> dict[str, Any] | None:
        for message in self.messages:
            if message.get("id") == request_id:
                return message
        return None

    async def reply(self, *request_ids: Any) -> dict[str, Any]:
        """Wait for replies to all ``request_ids``; return the last one's."""
        with trio.fail_after(WAIT):
            while not all(self.find(i) for i in request_ids):
                await self._changed.wait()
        found = self.find(request_ids[-1])
        assert found is not None
        return found


@asynccontextmanager
async def connected(
    port: int, path: str = "/mcp", headers: dict[str, str] | None = None
) -> AsyncIterator[WsPeer]:
    """A connection to ``ws://127.0.0.1:port/path``, its handshake carrying ``headers``."""
    extra = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    async with (
        open_websocket_url(
            f"ws://127.0.0.1:{port}{path}", subprotocols=["mcp"], extra_headers=extra
        ) as ws,
        trio.open_nursery() as nursery,
    ):
        peer = WsPeer(ws)
        nursery.start_soon(peer.read)
        yield peer
        await ws.aclose()


async def handshake_answer(
    port: int,
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
    protocols: str | None = "mcp",
    host: str | None = None,
) -> tuple[int, dict[str, str]]:
    """Send an opening handshake by hand (trio-websocket 0.12's client leaks its
    socket when refused), offering the subprotocols ``protocols`` (none if None),
    with ``Host: host`` (by default the address connected to); return the HTTP
    status and lower-cased headers."""
    offered = [] if protocols is None else [f"Sec-WebSocket-Protocol: {protocols}"]
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *offered,
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    with trio.fail_after(WAIT):
        async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
            await stream.send_all("\r\n".join([*lines, "", ""]).encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = await stream.receive_some(4096)
                assert chunk, "the server closed before answering"
                head += chunk
    status, *fields = head.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    found = dict(f.split(": ", 1) for f in fields)
    return int(status.split(" ", 2)[1]), {k.lower(): v for k, v in found.items()}
