"""ASGI as the tests drive it: one request in process, and a recording pass-through.

``asgi_exchange`` drives an app as an ASGI server would, for one request;
``Recorder`` sits in front of an app that a real server (Hypercorn, uvicorn) runs
and keeps every exchange, so each message the server sent can be checked against
the revision's schema afterwards; ``HeaderRecorder`` keeps each request's method
and headers (what a client sent, credentials included).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import trio

from trio_mcp.testing import check_message

from .sse import sse_frames

__all__ = ["Exchange", "Recorder", "asgi_exchange", "http_scope", "receiving"]


def http_scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of a ``POST /mcp`` from 127.0.0.1 with ``headers``, as Hypercorn gives it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


def receiving(
    chunks: list[bytes], stay: Callable[[], Awaitable[object]]
) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI ``receive`` that delivers ``chunks`` as the request body, then awaits
    ``stay`` (``trio.sleep_forever``, say): the client stays connected, so the app
    answers on its own."""
    pending = list(chunks)

    async def receive() -> dict[str, Any]:
        if pending:
            body = pending.pop(0)
            return {"type": "http.request", "body": body, "more_body": bool(pending)}
        await stay()
        raise AssertionError("unreachable")

    return receive


async def asgi_exchange(
    app: Any, scope: dict[str, Any], *chunks: bytes
) -> list[dict[str, Any]]:
    """Send ``chunks`` as the whole request body to ``app`` and return what it sent.

    After the body the client stays connected (``receive`` never reports a
    disconnect), so the app answers on its own; ten seconds bound the exchange.
    """
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with trio.fail_after(10):
        await app(scope, receiving(list(chunks), trio.sleep_forever), send)
    return sent


@attrs.define(eq=False)
class Exchange:
    """One HTTP request and its response, as an app in front of the server saw it."""

    method: str
    path: str
    status: int = 0
    content_type: str = ""
    request: bytearray = attrs.Factory(bytearray)
    response: bytearray = attrs.Factory(bytearray)


class Recorder:
    """An ASGI pass-through that keeps each HTTP exchange (method, path, status,
    request and response bodies) of the app behind it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = Exchange(scope["method"], scope["path"])

        async def recv() -> Any:
            message = await receive()
            exchange.request.extend(message.get("body", b""))
            return message

        async def snd(message: Any) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
                headers = dict(message.get("headers", []))
                exchange.content_type = headers.get(b"content-type", b"").decode()
                self.exchanges.append(exchange)
            else:
                exchange.response.extend(message.get("body", b""))
            await send(message)

        await self.app(scope, recv, snd)

    @property
    def paths(self) -> list[tuple[str, str, int]]:
        """Each exchange's method, path and status, in the order they began."""
        return [(e.method, e.path, e.status) for e in self.exchanges]

    def check_all(self) -> int:
        """Validate every JSON-RPC message the server sent; return how many."""
        count = 0
        for exchange in self.exchanges:
            if not exchange.response:
                continue
            method = (
                json.loads(exchange.request).get("method") if exchange.request else None
            )
            sse = exchange.content_type == "text/event-stream"
            for text in (
                sse_frames(bytes(exchange.response)) if sse else [exchange.response]
            ):
                check_message(json.loads(text), method)
                count += 1
        return count


class HeaderRecorder:
    """An ASGI pass-through that keeps each HTTP request's method and headers."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.requests.append((scope["method"], headers))
        await self.app(scope, receive, send)
