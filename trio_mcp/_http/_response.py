"""Writing HTTP responses: one JSON reply, or an SSE stream ending with it.

Each POST carries one JSON-RPC message and gets its own response:
``application/json`` for a plain reply, ``text/event-stream`` once a progress or log
notification precedes the reply (the stream starts lazily at the first
notification and the reply ends it). There are no event ids (MCP revision
2026-07-28, Streamable HTTP). The ASGI types and the small senders of whole answers
(``send_json``, ``send_plain``, ``send_fault``) live here too: every module of the
app writes through them.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import attrs
import trio

from .._dispatch import Reply
from .._dispatch._call import BUSY_RETRY_AFTER
from .._json import JsonObject, encode_message
from .._protocol import _wire as wire

__all__ = [
    "Answer",
    "Message",
    "Receive",
    "Response",
    "Scope",
    "Send",
    "request_headers",
    "retry_after_header",
    "send_fault",
    "send_json",
    "send_plain",
]

# ASGI messages and scopes are plain dicts whose values vary by key; the ASGI
# specification, not us, forces this Any.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: A whole response, ready to send: what a check that refuses a request returns.
Answer = Callable[[Send], Awaitable[None]]

_KEEPALIVE: Final = b":\n\n"
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def retry_after_header(seconds: float) -> tuple[bytes, bytes]:
    """``Retry-After`` in whole seconds (RFC 9110 §10.2.3), at least one."""
    return (b"retry-after", str(max(1, math.ceil(seconds))).encode("ascii"))


def request_headers(scope: Scope) -> dict[str, str]:
    """The request headers with lower-cased names; repeats are comma-joined.

    ASGI gives byte strings (``bytes`` or ``bytearray``; both decode without a copy).
    """
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in out:
            out[name] = f"{out[name]},{value}"
        else:
            out[name] = value
    return out


@attrs.define(eq=False)
class Response:
    """The HTTP response of one request: JSON, or SSE once a notification precedes it.

    The stream starts at the first notification; every write holds ``lock``, so a
    keep-alive comment never splits a message. Once ``scope`` is cancelled (the
    client left) nothing more is written.
    """

    send: Send
    scope: trio.CancelScope
    keepalive_interval: float
    streaming: bool = False
    last_write: float = attrs.field(factory=trio.current_time)
    lock: trio.Lock = attrs.field(factory=trio.Lock)

    async def emit(self, note: JsonObject | bytes) -> None:
        """Send a message (encoded, or a value to encode) before the reply, starting
        the event stream if it is the first."""
        if self.scope.cancel_called:
            return
        data = note if isinstance(note, bytes) else encode_message(note)
        async with self.lock:
            await self._start_stream()
            await self._write(_sse_data(data))

    async def open_stream(self) -> None:
        """Start the event stream now, before anything is sent on it (a handshake-era
        ``GET`` stream, whose client waits for the response headers)."""
        async with self.lock:
            await self._start_stream()

    async def abandon(self) -> None:
        """End the response without a reply (a handshake-era request its client
        cancelled): an event stream that closes, empty if nothing was sent yet."""
        with trio.CancelScope(shield=True):
            async with self.lock:
                await self._start_stream()
                await self._write(b"", more=False)

    async def keep_alive(self) -> None:
        """Write a ``:`` comment after each ``keepalive_interval`` of quiet."""
        while True:
            await trio.sleep_until(self.last_write + self.keepalive_interval)
            async with self.lock:
                if trio.current_time() < self.last_write + self.keepalive_interval:
                    continue
                if self.streaming:
                    await self._write(_KEEPALIVE)
                self.last_write = trio.current_time()

    async def finish(self, reply: Reply, *, shield: bool = False) -> None:
        """Send the reply: the last event of a stream, or the whole JSON response.

        Taking the lock is a checkpoint, so a client that left (the scope is
        cancelled) gets nothing. Hypercorn ends the response inside the last
        ``send`` (re-arming the connection's idle timer, closing it for
        ``Connection: close`` or HTTP/1.0), and the ``http.disconnect`` that the
        finished response itself produces must not cancel that half-way: a request
        watched by ``_disconnect`` is no longer watched by then, and one with its
        own watcher task asks for ``shield`` (Hypercorn shields its socket writes
        anyway, so the shield adds no wait that was not there).
        """
        async with self.lock:
            if shield:
                with trio.CancelScope(shield=True):
                    await self._send_reply(reply)
            else:
                await self._send_reply(reply)

    async def _send_reply(self, reply: Reply) -> None:
        if self.streaming:
            await self._write(_sse_data(reply.body), more=False)
            return
        extra = list(reply.headers) or None
        if extra is None and reply.http_status == 503:
            # Busy (the thread budget is spent): say when to retry.
            extra = [retry_after_header(BUSY_RETRY_AFTER)]
        await send_json(self.send, reply.http_status, reply.body, extra)

    async def _start_stream(self) -> None:
        if not self.streaming:
            self.streaming = True
            start = {"type": "http.response.start", "status": 200}
            await self.send({**start, "headers": _SSE_HEADERS})

    async def _write(self, body: bytes, *, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": body, "more_body": more})
        self.last_write = trio.current_time()


def _sse_data(data: bytes) -> bytes:
    return b"data: " + data + b"\n\n"


async def send_json(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A whole ``application/json`` response."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *_JSON_HEADERS,
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A whole plain-text response (or an empty one)."""
    headers = [(b"content-length", str(len(body)).encode()), *(extra or [])]
    if body:
        headers.append((b"content-type", b"text/plain; charset=utf-8"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_fault(
    send: Send,
    status: int,
    text: str,
    code: int | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Refuse before parsing: a JSON-RPC error without id (it is not read yet)."""
    message = wire.error_message(
        None, code if code is not None else wire.INVALID_REQUEST, text
    )
    await send_json(send, status, encode_message(message), extra)
