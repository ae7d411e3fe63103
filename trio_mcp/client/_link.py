"""A link carries JSON-RPC messages to one server and routes what comes back.

``Link`` is what the session needs of a transport: ``exchange`` sends one request and
returns its response, handing the notifications tied to it (``progressToken``) to the
caller as they come; ``notify`` and ``respond`` send one message and wait for no
answer. Messages tied to no request (a server's own request in a handshake-era
session, a list-changed notification) go to the handler the session installs
(``on_unsolicited``).

``StreamLink`` is the link of the message streams (stdio, WebSocket, in process): one
reader task routes every message by id or progress token. Cancelling an exchange
sends ``notifications/cancelled`` naming the request (revision 2026-07-28,
"Cancellation"), from the link's own nursery so the cancelled caller never waits
for it. A reader that fails (the stream broke, a message that is not JSON-RPC, one
past the size limit) fails every exchange in flight and every later one with
``McpError.Transport``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Protocol

import attrs
import trio

from .._errors import Transport
from .._json import JsonObject
from .._protocol._wire import SERVER_BUSY, busy_message
from ._jsonrpc import Incoming, RequestId, decode, encode, notification, response

#: Headers of the request being sent in this task besides the client's
#: (``Client.request(..., headers=...)``): read by the HTTP link as it sends.
request_headers: ContextVar[tuple[tuple[str, str], ...]] = ContextVar(
    "trio_mcp_client_request_headers", default=()
)

__all__ = ["HttpStatus", "Link", "Notice", "StreamLink", "Unsolicited", "leaves"]

#: Called with each notification tied to the exchange (progress, log messages).
Notice = Callable[[Incoming], Awaitable[None]]
#: Called with each message tied to no exchange in flight.
Unsolicited = Callable[[Incoming], Awaitable[None]]

#: How many of the server's own requests (handshake-era input requests, pings) may be
#: answered at once; beyond it the server is told the client is busy.
_MAX_ANSWERING = 16
#: How many notifications of one exchange may wait to be handled; beyond it they are
#: dropped (progress is advisory, and the reader must never block on a slow caller).
_NOTICE_BUFFER = 256


def leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """Every exception inside ``group`` and its nested groups, in order."""
    found: list[BaseException] = []
    for inner in group.exceptions:
        found += leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner]
    return found


class HttpStatus(Transport):
    """An HTTP status that is no success and carries no JSON-RPC error (``status``)."""

    def __init__(self, status: int, text: str) -> None:
        self.status = status
        super().__init__(text)


class Link(Protocol):
    """What a session needs of a transport (see the module docstring)."""

    on_unsolicited: Unsolicited | None
    source: str
    #: Set by the session: whether it speaks 2026-07-28, and the revision in use.
    modern: bool
    revision: str

    async def exchange(self, message: JsonObject, on_notice: Notice) -> JsonObject:
        """Send a request; return its response message (cancel: cancelled remotely)."""
        ...

    async def notify(self, message: JsonObject) -> None:
        """Send a notification."""
        ...

    async def respond(self, message: JsonObject) -> None:
        """Send the answer to a server's own request."""
        ...

    def session_opened(self) -> None:
        """A handshake-era session began (HTTP: open its ``GET`` stream)."""
        ...

    async def end_session(self) -> None:
        """End a handshake-era session the transport holds (HTTP: ``DELETE``)."""
        ...


async def _drop(_: Incoming) -> None:
    return None


@attrs.define(eq=False)
class _Waiter:
    token: object
    send: trio.MemorySendChannel[Incoming]
    receive: trio.MemoryReceiveChannel[Incoming]
    reply: JsonObject | None = None


class StreamLink:
    """A link over a stream of whole messages (see the module docstring).

    ``send_text`` writes one message's text; the owner runs ``read(messages)`` in
    ``nursery`` with the stream's incoming texts, and calls ``fail`` when the stream
    ends or breaks.
    """

    def __init__(
        self,
        send_text: Callable[[str], Awaitable[None]],
        nursery: trio.Nursery,
        *,
        source: str,
    ) -> None:
        self._send_text = send_text
        self._nursery = nursery
        self.source = source
        self.on_unsolicited: Unsolicited | None = None
        self._waiters: dict[RequestId, _Waiter] = {}
        self._broken: Transport | None = None
        self._write_lock = trio.Lock()
        self._answering = 0
        self.modern = True
        self.revision = "2026-07-28"

    # -- sending ----------------------------------------------------------------
    async def _send(self, message: JsonObject) -> None:
        self._check()
        try:
            async with self._write_lock:
                await self._send_text(encode(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            error = Transport(f"the connection to {self.source} is closed")
            self.fail(error)
            raise error from exc

    def _check(self) -> None:
        if self._broken is not None:
            raise Transport(str(self._broken)) from self._broken

    async def notify(self, message: JsonObject) -> None:
        await self._send(message)

    async def respond(self, message: JsonObject) -> None:
        await self._send(message)

    def session_opened(self) -> None:
        """Nothing to open: the stream carries everything."""

    async def end_session(self) -> None:
        """Nothing to end: a stream's session ends with the stream."""

    async def exchange(self, message: JsonObject, on_notice: Notice) -> JsonObject:
        rid = message["id"]
        assert isinstance(rid, str | int)
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        send, receive = trio.open_memory_channel[Incoming](_NOTICE_BUFFER)
        waiter = _Waiter(token, send, receive)
        self._waiters[rid] = waiter
        try:
            await self._send(message)
            async with receive:
                async for notice in receive:
                    await on_notice(notice)
        except trio.Cancelled:
            if waiter.reply is None:
                self._nursery.start_soon(self._cancel_remote, rid)
            raise
        finally:
            del self._waiters[rid]
        if waiter.reply is None:
            self._check()
            raise Transport(f"the connection to {self.source} closed before the reply")
        return waiter.reply

    async def _cancel_remote(self, rid: RequestId) -> None:
        """Tell the server to stop ``rid``: best effort, within a second."""
        with trio.move_on_after(1.0):
            await self._send_quietly(
                notification(
                    "notifications/cancelled",
                    {"requestId": rid, "reason": "cancelled by the client"},
                )
            )

    # -- reading ----------------------------------------------------------------
    async def read(self, texts: Callable[[], Awaitable[str | bytes | None]]) -> None:
        """Route every message ``texts()`` returns until it returns None (the end)."""
        try:
            while True:
                text = await texts()
                if text is None:
                    self.fail(Transport(f"{self.source} closed the connection"))
                    return
                await self._route(decode(text, source=self.source))
        except Transport as exc:
            self.fail(exc)

    async def _route(self, incoming: Incoming) -> None:
        if incoming.kind == "response":
            waiter = self._waiters.get(incoming.id) if incoming.id is not None else None
            if waiter is not None and waiter.reply is None:
                waiter.reply = incoming.message
                waiter.send.close()
            return  # a late reply to a cancelled request, or to none: nothing waits
        if incoming.kind == "notification":
            token = incoming.params.get("progressToken")
            if token is not None:
                for waiter in self._waiters.values():
                    if waiter.token == token and waiter.reply is None:
                        with contextlib.suppress(
                            trio.WouldBlock, trio.ClosedResourceError
                        ):
                            waiter.send.send_nowait(incoming)
                        return
        handler = self.on_unsolicited or _drop
        if incoming.kind == "notification":
            await handler(incoming)
        elif self._answering >= _MAX_ANSWERING:
            busy: JsonObject = {
                "code": SERVER_BUSY,
                "message": busy_message("the client answers too many requests"),
            }
            self._nursery.start_soon(
                self._send_quietly, response(incoming.id or 0, error=busy)
            )
        else:
            self._answering += 1
            self._nursery.start_soon(self._answer, handler, incoming)

    async def _answer(self, handler: Unsolicited, incoming: Incoming) -> None:
        try:
            await handler(incoming)
        except Transport:
            pass  # the link is broken: the exchanges in flight say so
        finally:
            self._answering -= 1

    async def _send_quietly(self, message: JsonObject) -> None:
        with contextlib.suppress(Transport):
            await self._send(message)

    def fail(self, error: Transport) -> None:
        """Break the link: every exchange in flight and every later one raises ``error``."""
        if self._broken is None:
            self._broken = error
        for waiter in self._waiters.values():
            waiter.send.close()

    @property
    def broken(self) -> Transport | None:
        """Why the link is broken, or None while it works."""
        return self._broken
