"""A handshake-era session's ``GET`` stream: notifications not tied to a request.

MCP revision 2025-11-25, Streamable HTTP, "Listening for Messages from the Server":
the server sends on it ``notifications/*/list_changed`` for the lists it advertised
as changing, and ``notifications/resources/updated`` for the session's subscribed
URIs, from the same broadcast a 2026-07-28 client listens to: the stream holds one
internal ``subscriptions/listen`` with the session's filter (``listen_params``), and
replaces it (the new one acknowledged, then the old one ended) when the
subscriptions change (``Hub.refresh``, from whichever process served the change).

A session has at most one ``GET`` stream (a second one is 409, as the official SDKs
answer, unless the process holding the first is gone). While open it keeps its
session from expiring; it ends with the client, the session, or the app.
"""

from __future__ import annotations

import itertools
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Final

import attrs
import trio

from .._changes import LISTEN_METHOD
from .._dispatch import Caller
from .._dispatch._call import BUSY_RETRY_AFTER
from .._http._forwarded import caller_key
from .._http._response import (
    Receive,
    Response,
    Send,
    retry_after_header,
    send_fault,
)
from .._json import JsonObject
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request
from .._store import StoreUnavailable
from ._hub import Stream
from ._machine import legacy_note, listen_flags, listen_params
from ._session import ACKNOWLEDGED
from ._sessions import Record, owner_of

if TYPE_CHECKING:
    from ._asgi import LegacyApp as LegacyHttp

__all__ = ["serve_stream"]

_EVENT_TYPES: Final = frozenset({"text/event-stream", "*/*", "text/*"})


async def serve_stream(
    http: LegacyHttp,
    sid: str,
    record: Record,
    headers: dict[str, str],
    caller: Caller,
    receive: Receive,
    send: Send,
) -> None:
    """Serve the session's ``GET`` stream until it ends."""
    accept = headers.get("accept")
    if accept is not None and not _accepts_events(accept):
        await send_fault(
            send,
            406,
            "not acceptable: the GET stream is text/event-stream; send "
            "Accept: text/event-stream",
        )
        return
    key = caller_key(caller.principal, caller.peer)
    refusal = http.listens.refusal(key)
    if refusal is not None:
        await send_fault(
            send,
            503,
            wire.busy_message(refusal),
            wire.SERVER_BUSY,
            [retry_after_header(BUSY_RETRY_AFTER)],
        )
        return
    hub = http.hub
    token = hub.stream_token()
    # A token of this process whose stream is not here is stale (released while
    # the store was down): it may be replaced.
    stale = record.stream
    if stale is None or not stale.startswith(f"{hub.origin}/") or sid in hub.streams:
        stale = None
    with http.listens.held(key):
        claimed = await hub.sessions.claim_stream(sid, token, stale)
        await _claimed(http, sid, record, caller, receive, send, token, claimed)


async def _claimed(
    http: LegacyHttp,
    sid: str,
    record: Record,
    caller: Caller,
    receive: Receive,
    send: Send,
    token: str,
    claimed: bool | None,
) -> None:
    """The stream, once it is the session's one (409 if another is open)."""
    if claimed is None:
        await send_fault(send, 404, "not found: this session has ended")
        return
    if not claimed:
        await send_fault(
            send,
            409,
            "conflict: this session already has an open GET stream; only one is "
            "allowed per session",
        )
        return
    stream = _Stream(http, sid, record, token, caller, send)
    try:
        await stream.run(receive)
    finally:
        # A token not released (the store is down) names this process: the next
        # GET is refused only while this process lives.
        shielded = trio.CancelScope(shield=True)
        with shielded, trio.move_on_after(1), suppress(StoreUnavailable):
            await http.hub.sessions.release_stream(sid, token)


def _accepts_events(accept: str) -> bool:
    return any(
        item.split(";", 1)[0].strip().lower() in _EVENT_TYPES
        for item in accept.split(",")
    )


@attrs.define(eq=False)
class _Listen:
    scope: trio.CancelScope
    acked: trio.Event = attrs.Factory(trio.Event)


class _Stream:
    """One open ``GET`` stream and the internal listen it holds."""

    def __init__(
        self,
        http: LegacyHttp,
        sid: str,
        record: Record,
        token: str,
        caller: Caller,
        send: Send,
    ) -> None:
        self.http = http
        self.sid = sid
        self.record = record
        self.token = token
        self.caller = caller
        self.owner = owner_of(caller.principal)
        self.scope = trio.CancelScope()
        self.response = Response(send, self.scope, http.limits.keepalive_interval)
        self.current: str | None = None
        self.listens: dict[str, _Listen] = {}
        self._ids = itertools.count(1)
        self._nursery: trio.Nursery | None = None
        self._lock = trio.Lock()
        self.client_left = False
        self.flags = listen_flags(http.edge.dispatcher.capabilities)

    async def run(self, receive: Receive) -> None:
        hub = self.http.hub
        hub.streams[self.sid] = Stream(self.token, self.scope, self.refresh)
        try:
            with self.scope:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    nursery.start_soon(self._watch, receive)
                    nursery.start_soon(self._until, self.http.closing)
                    await self.response.open_stream()
                    nursery.start_soon(self.response.keep_alive)
                    nursery.start_soon(self._keep_session)
                    await self._follow(self.record)
        finally:
            held = hub.streams.get(self.sid)
            if held is not None and held.token == self.token:
                del hub.streams[self.sid]
        if not self.client_left:
            await self.response.abandon()  # the stream's end, to a client still there

    async def _watch(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.client_left = True
        self.scope.cancel()

    async def _until(self, event: trio.Event) -> None:
        await event.wait()
        self.scope.cancel()

    async def _keep_session(self) -> None:
        """Keep the session alive while the stream is open; end with it."""
        while True:
            await trio.sleep(self.http.limits.session_idle / 3)
            await self._find()

    async def _find(self) -> Record | None:
        """The session, refreshed; the stream ends once it is gone."""
        try:
            record = await self.http.hub.sessions.find(
                self.sid, self.owner, self.http.limits
            )
        except StoreUnavailable:
            return None
        if record is None:
            self.scope.cancel()
        return record

    # -- the internal listen ------------------------------------------------------------
    async def refresh(self) -> None:
        """The session's subscriptions changed: follow them before returning."""
        record = await self._find()
        if record is not None:
            await self._follow(record)

    async def _follow(self, record: Record) -> None:
        """Hold one listen with ``record``'s filter; the previous one ends once the
        new one is acknowledged."""
        async with self._lock:
            self.record = record
            params = listen_params(self.flags, record.session)
            previous = self.current
            self.current = None
            if params is not None and self._nursery is not None:
                listen_id = f"{self.token}#{next(self._ids)}"
                listen = self.listens[listen_id] = _Listen(trio.CancelScope())
                self._nursery.start_soon(self._listen, listen_id, listen, params)
                await listen.acked.wait()
                self.current = listen_id
            if previous is not None:
                ended = self.listens.pop(previous, None)
                if ended is not None:
                    ended.scope.cancel()

    async def _listen(
        self, listen_id: str, listen: _Listen, params: JsonObject
    ) -> None:
        with listen.scope:
            await self.http.edge.handle(
                Request(listen_id, LISTEN_METHOD, params),
                self.caller,
                partial(self._note, listen_id),
                listen.scope,
            )
        listen.acked.set()
        ended_by_itself = not listen.scope.cancelled_caught
        if ended_by_itself and self.listens.pop(listen_id, None) is not None:
            # It ended by itself (the app shuts down, or it was refused): so does
            # the stream, and the client opens another.
            self.scope.cancel()

    async def _note(self, listen_id: str, note: JsonObject) -> None:
        """A notification of an internal listen: on the stream, in legacy form."""
        listen = self.listens.get(listen_id)
        if listen is None:
            return  # replaced or ended
        if note.get("method") == ACKNOWLEDGED:
            listen.acked.set()
            return
        await self.response.emit(legacy_note(note))
