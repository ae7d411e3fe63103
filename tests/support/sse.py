"""Server-sent events as the tests read them: a whole SSE body, or a live stream.

``sse_frames`` splits a body an HTTP client already holds (a call's reply with
progress before it); ``SseStream`` reads a response that stays open (a listen) from
a raw socket, line by line, so a test can stop early without closing httpx's nested
async generators (which warn). Every message is validated against the revision's
schema as it is read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import trio

from trio_mcp.testing import check_message

from . import META, VERSION

__all__ = ["WAIT", "SseStream", "listening", "sse_frames", "sse_messages"]

WAIT = 10.0
LISTEN = "subscriptions/listen"


def sse_frames(body: bytes) -> list[bytes]:
    """The payload of every event of a complete SSE body, as bytes (each event is
    one ``data:`` line: the server sends nothing else)."""
    frames = []
    for frame in body.split(b"\n\n"):
        if frame.strip():
            assert frame.startswith(b"data: "), frame
            frames.append(frame[len(b"data: ") :])
    return frames


def sse_messages(body: bytes, method: str | None) -> list[dict[str, Any]]:
    """Every message of a complete SSE body, each validated (replies as ``method``)."""
    messages = []
    for frame in sse_frames(body):
        message: dict[str, Any] = json.loads(frame)
        check_message(message, method)
        messages.append(message)
    return messages


class SseStream:
    """One SSE response over chunked HTTP/1.1 on a raw socket, read line by line."""

    def __init__(
        self,
        socket: trio.SocketStream,
        wait: float = WAIT,
        check: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.socket = socket
        self.wait = wait
        self.check = check
        """Validates each message (by default against the 2026-07-28 schema)."""
        self.raw = b""
        self.text = ""
        self.done = False
        self.keepalives = 0
        self.status = 0
        self.headers: dict[str, str] = {}

    async def _more(self) -> None:
        data = await self.socket.receive_some()
        self.done = not data
        self.raw += data

    async def start(self, *, chunked: bool = True) -> None:
        """Read the status line and the headers (of a chunked body, unless
        ``chunked`` is false: then any response, whose body ``body()`` reads)."""
        with trio.fail_after(self.wait):
            while b"\r\n\r\n" not in self.raw:
                await self._more()
                assert not self.done, "the server closed before answering"
        head, _, self.raw = self.raw.partition(b"\r\n\r\n")
        status, *fields = head.decode("latin-1").split("\r\n")
        self.status = int(status.split()[1])
        self.headers = dict(f.lower().split(": ", 1) for f in fields)
        if chunked or self.status == 200:
            assert "chunked" == self.headers.get("transfer-encoding")

    async def body(self) -> bytes:
        """The whole body of a response with ``Content-Length``."""
        size = int(self.headers["content-length"])
        with trio.fail_after(self.wait):
            while len(self.raw) < size and not self.done:
                await self._more()
        return self.raw[:size]

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

    async def next_or_end(self) -> dict[str, Any] | None:
        """The next ``data:`` message, counting ``:`` comments on the way; None when
        the stream ends."""
        with trio.fail_after(self.wait):
            while (line := await self._line()) is not None:
                if line.startswith(":"):
                    self.keepalives += 1
                elif line.startswith("data: "):
                    message: dict[str, Any] = json.loads(line[len("data: ") :])
                    if self.check is not None:
                        self.check(message)
                        return message
                    is_result = "id" in message and "method" not in message
                    check_message(message, LISTEN if is_result else None)
                    return message
        return None

    async def next_message(self) -> dict[str, Any]:
        """The next ``data:`` message; fails the test if the stream ended."""
        message = await self.next_or_end()
        if message is None:
            raise AssertionError("the stream ended")
        return message

    async def keepalive(self) -> None:
        """Read up to the next ``:`` comment; nothing but blank lines may precede it."""
        with trio.fail_after(self.wait):
            while (line := await self._line()) is not None:
                if line.startswith(":"):
                    self.keepalives += 1
                    return
                assert "" == line
        raise AssertionError("the stream ended")

    async def rest(self) -> list[str]:
        """Every line left until the response ends."""
        lines = []
        with trio.fail_after(self.wait):
            while (line := await self._line()) is not None:
                lines.append(line)
        return lines


@asynccontextmanager
async def listening(
    url: str,
    request_id: Any = "listen",
    *,
    meta: dict[str, Any] = META,
    wait: float = WAIT,
    headers: dict[str, str] | None = None,
    **notifications: Any,
) -> AsyncIterator[SseStream]:
    """POST ``subscriptions/listen`` to the endpoint ``url`` over a raw socket (with
    ``headers`` added); yield the stream once its headers (200,
    ``text/event-stream``) arrived."""
    parts = urlsplit(url)
    assert parts.port is not None
    payload = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": LISTEN,
            "params": {"_meta": meta, "notifications": notifications},
        }
    ).encode()
    fields = {
        "host": parts.netloc,
        "content-type": "application/json",
        "content-length": str(len(payload)),
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": LISTEN,
        **(headers or {}),
    }
    head = f"POST {parts.path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in fields.items()
    )
    with trio.fail_after(wait):
        socket = await trio.open_tcp_stream("127.0.0.1", parts.port)
    async with socket:
        await socket.send_all(head.encode() + b"\r\n" + payload)
        stream = SseStream(socket, wait)
        await stream.start()
        assert 200 == stream.status
        assert "text/event-stream" == stream.headers["content-type"]
        yield stream
