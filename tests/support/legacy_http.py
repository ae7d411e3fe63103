"""A handshake-era client over Streamable HTTP (revision 2025-11-25), for the tests.

``LegacyHttpPeer`` speaks the session wire by hand with httpx: ``initialize`` (the
response's ``Mcp-Session-Id`` is kept), then every request with the session id and
``MCP-Protocol-Version``; a reply comes as JSON or as an event stream, on which the
server's own requests (``elicitation/create``, ``sampling/createMessage``,
``roots/list``) arrive and are answered with POSTs of their own, as a real client
does. Every message the server sends is validated against the negotiated revision's
official schema (``legacy_schema.check_legacy``). ``session_stream`` opens the
session's ``GET`` stream on a raw socket (``SseStream``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio

from .asgi import Recorder
from .legacy import Answerer, LegacyError, client_reply, initialize_request, refuse
from .legacy_schema import check_legacy
from .sse import SseStream, sse_frames

__all__ = ["LegacyHttpPeer", "check_recorded", "session_headers", "session_stream"]

WAIT = 10.0


def session_headers(sid: str | None, revision: str = "2025-11-25") -> dict[str, str]:
    """The headers of a session's POST."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": revision,
    }
    if sid is not None:
        headers["mcp-session-id"] = sid
    return headers


class LegacyHttpPeer:
    """One handshake-era client of the endpoint ``url`` (``.../mcp``)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        revision: str = "2025-11-25",
        capabilities: dict[str, Any] | None = None,
        answer: Answerer = refuse,
        headers: dict[str, str] | None = None,
        answer_url: str | None = None,
    ) -> None:
        self.client = client
        self.url = url
        """Where requests go (a test may point it at another replica)."""
        self.answer_url = answer_url
        """Where answers to the server's requests go (by default ``url``)."""
        self.revision = revision
        self.capabilities = capabilities or {}
        self.answer = answer
        self.extra = headers or {}
        self.sid: str | None = None
        self.notifications: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.answered: list[int] = []
        """The HTTP status of each answer POST."""
        self._ids = itertools.count(1)
        self._arrived = trio.Event()

    async def next_notification(self, method: str) -> dict[str, Any]:
        """Wait for the first notification of ``method`` on any request's stream."""
        with trio.fail_after(WAIT):
            while True:
                for note in self.notifications:
                    if note["method"] == method:
                        return note
                await self._arrived.wait()

    def headers(self) -> dict[str, str]:
        return {**session_headers(self.sid, self.revision), **self.extra}

    async def post(self, body: Any, **headers: str) -> httpx.Response:
        """POST ``body`` (JSON) with the session's headers (plus ``headers``)."""
        with trio.fail_after(WAIT):
            return await self.client.post(
                self.url, json=body, headers={**self.headers(), **headers}
            )

    async def initialize(
        self, protocol_version: str | None = None, **params: Any
    ) -> dict[str, Any]:
        """``initialize``, then ``notifications/initialized``; keeps the session id."""
        body = initialize_request(
            next(self._ids),
            revision=protocol_version or self.revision,
            capabilities=self.capabilities,
            name="legacy-http-peer",
            **params,
        )
        with trio.fail_after(WAIT):
            response = await self.client.post(
                self.url,
                json=body,
                headers={**session_headers(None), **self.extra},
            )
        assert 200 == response.status_code, response.text
        message = response.json()
        if "error" in message:
            raise LegacyError(message["error"])
        self.revision = message["result"]["protocolVersion"]
        check_legacy(message, self.revision, "initialize")
        self.sid = response.headers["mcp-session-id"]
        note = await self.post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert 202 == note.status_code, note.text
        result: dict[str, Any] = message["result"]
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a notification; return the HTTP status."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return (await self.post(message)).status_code

    async def exchange(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: Any = None,
        started: trio.Event | None = None,
    ) -> dict[str, Any] | None:
        """Send a request; return its response message (None if the response ended
        without one, as for a cancelled request). ``started`` is set once the
        response's headers arrived."""
        request_id = next(self._ids) if request_id is None else request_id
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        reply: dict[str, Any] | None = None
        async with (
            trio.open_nursery() as nursery,
            self.client.stream(
                "POST", self.url, json=body, headers=self.headers()
            ) as response,
        ):
            if started is not None:
                started.set()
            kind = response.headers.get("content-type", "")
            if kind.startswith("application/json"):
                reply = json.loads(await response.aread())
            else:
                assert kind.startswith("text/event-stream"), (response, kind)
                # Read to the end (the reply ends the stream): leaving httpx's
                # line iterator early leaves its generators to the collector.
                async for line in response.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    message = json.loads(line[len("data: ") :])
                    if "method" not in message:
                        assert reply is None, "a second reply on one stream"
                        reply = message
                    else:
                        self._server_message(message, nursery)
        if reply is not None:
            check_legacy(reply, self.revision, method)
        return reply

    def _server_message(self, message: dict[str, Any], nursery: trio.Nursery) -> None:
        check_legacy(message, self.revision)
        if "id" in message:
            self.asked.append(message)
            nursery.start_soon(self._answer, message)
        else:
            self.notifications.append(message)
            self._arrived.set()
            self._arrived = trio.Event()

    async def _answer(self, request: dict[str, Any]) -> None:
        reply = await client_reply(self.answer, request)
        with trio.fail_after(WAIT):
            posted = await self.client.post(
                self.answer_url or self.url, json=reply, headers=self.headers()
            )
        self.answered.append(posted.status_code)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """Send a request; return its result or raise ``LegacyError``."""
        reply = await self.exchange(method, params, **kw)
        assert reply is not None, "the response ended without a reply"
        if "error" in reply:
            raise LegacyError(reply["error"])
        result: dict[str, Any] = reply["result"]
        return result


@asynccontextmanager
async def session_stream(
    url: str,
    sid: str,
    *,
    revision: str = "2025-11-25",
    extra: dict[str, str] | None = None,
    wait: float = WAIT,
) -> AsyncIterator[SseStream]:
    """Open the session's ``GET`` stream on a raw socket; yield it once its status
    line and headers arrived (any status: the test checks it)."""
    parts = urlsplit(url)
    assert parts.port is not None
    fields = {
        "host": parts.netloc,
        "accept": "text/event-stream",
        "mcp-session-id": sid,
        "mcp-protocol-version": revision,
        **(extra or {}),
    }
    head = f"GET {parts.path} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in fields.items()
    )
    with trio.fail_after(wait):
        socket = await trio.open_tcp_stream("127.0.0.1", parts.port)
    async with socket:
        await socket.send_all(head.encode() + b"\r\n")
        stream = SseStream(
            socket, wait, check=lambda message: check_legacy(message, revision)
        )
        await stream.start(chunked=False)
        yield stream


def check_recorded(recorder: Recorder, revision: str = "2025-11-25") -> int:
    """Validate every message the server sent in ``recorder``'s exchanges (POST
    replies, the events of POST and ``GET`` streams) against ``revision``'s schema;
    return how many. A reply is checked as the request it answers."""
    count = 0
    for exchange in recorder.exchanges:
        if not exchange.response.strip():
            continue
        sent = json.loads(exchange.request) if exchange.request else None
        method = sent.get("method") if isinstance(sent, dict) else None
        sse = exchange.content_type == "text/event-stream"
        for text in (
            sse_frames(bytes(exchange.response)) if sse else [exchange.response]
        ):
            message = json.loads(text)
            is_reply = "method" not in message and "id" in message
            check_legacy(message, revision, method if is_reply else None)
            count += 1
    return count
