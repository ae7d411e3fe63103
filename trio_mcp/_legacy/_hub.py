"""What this process holds of a dual-era server's handshake-era HTTP sessions.

A session's requests may land on any replica, but three things live where an HTTP
connection is: a call's cancel scope, a server-to-client request waiting for its
answer (on the replica whose POST asked it) and the session's ``GET`` stream. The
``Hub`` keeps them for every app of one server in this process and routes to them:
a client's answer to the process its id names (``<origin>.<n>``, through
``RedisStore.ask_owner``); ``notifications/cancelled`` here, else to every process
(``RedisStore.notify``); a subscription change to the process holding the ``GET``
stream (named by its token), which reopens its listen before the change is
answered; ``DELETE`` to every process. With the default store nothing is routed.
Bounds: one entry per running call, per waiting request and per ``GET`` stream.
"""

from __future__ import annotations

import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

import attrs
import trio

from .._json import JsonObject, JsonValue
from .._store import RedisStore, Store, StoreUnavailable
from ._rounds import Answer
from ._sessions import MemorySessions, RedisSessions, Sessions

__all__ = ["Hub", "Inbox", "Stream"]

log = logging.getLogger("trio_mcp.http")

#: The key of this package's ops and notices in ``RedisStore.handlers``/``notices``.
KIND: Final = "legacy"


Inbox = trio.MemorySendChannel[tuple[str, Answer]]
"""Where the answers to one round's requests go: the POST that asked them."""


@attrs.define(eq=False)
class Stream:
    """A session's open ``GET`` stream here: what ends it and what reopens its listen."""

    token: str
    scope: trio.CancelScope
    refresh: Callable[[], Awaitable[None]]


class Hub:
    """The handshake-era HTTP state of one server in this process."""

    def __init__(self, store: Store) -> None:
        shared = store if isinstance(store, RedisStore) else None
        self.shared = shared
        self.origin = shared.origin if shared is not None else secrets.token_hex(8)
        self.sessions: Sessions = (
            RedisSessions(shared) if shared is not None else MemorySessions()
        )
        self.asked: dict[str, tuple[str, Inbox]] = {}
        """Each waiting server-to-client request's session and inbox, by id."""
        self.calls: dict[tuple[str, str | int], Callable[[], None]] = {}
        """How to cancel each running call here, by session and client request id."""
        self.streams: dict[str, Stream] = {}
        self._ids = itertools.count(1)
        if shared is not None:
            shared.handlers[KIND] = self._on_op
            shared.notices[KIND] = self._on_notice

    # -- server-to-client requests -----------------------------------------------------
    def new_id(self) -> str:
        """The id of a new server-to-client request: ``<origin>.<n>``."""
        return f"{self.origin}.{next(self._ids)}"

    def expect(self, sid: str, ids: Iterable[str | int], inbox: Inbox) -> None:
        """The requests ``ids`` of session ``sid`` wait: their answers go to ``inbox``."""
        for request_id in ids:
            self.asked[str(request_id)] = (sid, inbox)

    def forget(self, ids: Iterable[str | int]) -> None:
        """The requests ``ids`` wait no more."""
        for request_id in ids:
            self.asked.pop(str(request_id), None)

    async def answer(self, sid: str, request_id: JsonValue, answer: Answer) -> bool:
        """Deliver the client's ``answer`` to the request ``request_id``, wherever
        it waits; whether it waited (in session ``sid``)."""
        if not isinstance(request_id, str):
            return False
        origin, _, _ = request_id.rpartition(".")
        if origin == self.origin or self.shared is None:
            return self._deliver(sid, request_id, answer)
        op: JsonObject = {
            "to": KIND,
            "op": "answer",
            "sid": sid,
            "id": request_id,
            "result": answer.result,
            "error": answer.error,
        }
        try:
            reply = await self.shared.ask_owner(origin, op)
        except StoreUnavailable as exc:
            log.warning("a client's answer could not reach process %s: %s", origin, exc)
            return False
        return reply.get("delivered") is True

    def _deliver(self, sid: str, request_id: str, answer: Answer) -> bool:
        asked = self.asked.get(request_id)
        if asked is None or asked[0] != sid:
            return False
        del self.asked[request_id]
        asked[1].send_nowait((request_id, answer))  # room for each request asked
        return True

    # -- calls -------------------------------------------------------------------------
    def running(
        self, sid: str, request_id: str | int, cancel: Callable[[], None]
    ) -> Callable[[], None]:
        """Register a running call (``cancel`` cancels it); return what unregisters it.

        A client may reuse an id while a call with it runs: the newer one is found.
        """
        key = (sid, request_id)
        self.calls[key] = cancel

        def done() -> None:
            if self.calls.get(key) is cancel:
                del self.calls[key]

        return done

    async def cancel(self, sid: str, request_id: JsonValue) -> None:
        """Cancel the call ``request_id`` of session ``sid``, wherever it runs."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        if self._cancel_here(sid, request_id) or self.shared is None:
            return
        await self._tell({"op": "cancel", "sid": sid, "id": request_id})

    def _cancel_here(self, sid: str, request_id: str | int) -> bool:
        cancel = self.calls.get((sid, request_id))
        if cancel is None:
            return False
        cancel()
        return True

    # -- the session's end --------------------------------------------------------------
    async def ended(self, sid: str) -> None:
        """The session was deleted: end what every process holds of it."""
        self._end_here(sid)
        if self.shared is not None:
            await self._tell({"op": "end", "sid": sid})

    def _end_here(self, sid: str) -> None:
        stream = self.streams.get(sid)
        if stream is not None:
            stream.scope.cancel()
        for (held, _), cancel in list(self.calls.items()):
            if held == sid:
                cancel()
        for request_id, asked in list(self.asked.items()):
            if asked[0] == sid:
                del self.asked[request_id]

    # -- the GET stream -------------------------------------------------------------------
    def stream_token(self) -> str:
        """A token for a new ``GET`` stream here: ``<origin>/<nonce>``."""
        return f"{self.origin}/{secrets.token_hex(8)}"

    async def refresh(self, sid: str, token: str | None) -> None:
        """Have the session's ``GET`` stream (``token``, wherever it is) follow the
        session's subscriptions now; nothing if there is none."""
        if token is None:
            return
        origin = token.partition("/")[0]
        if origin == self.origin or self.shared is None:
            await self._refresh_here(sid, token)
            return
        op: JsonObject = {"to": KIND, "op": "refresh", "sid": sid, "token": token}
        try:
            await self.shared.ask_owner(origin, op)
        except StoreUnavailable as exc:
            log.warning(
                "the GET stream on process %s was not refreshed: %s", origin, exc
            )

    async def _refresh_here(self, sid: str, token: str) -> None:
        stream = self.streams.get(sid)
        if stream is not None and stream.token == token:
            await stream.refresh()

    # -- other processes ---------------------------------------------------------------------
    async def _tell(self, body: JsonObject) -> None:
        assert self.shared is not None
        try:
            await self.shared.notify(KIND, body)
        except StoreUnavailable as exc:
            log.warning("other processes were not told of %s: %s", body.get("op"), exc)

    async def _on_op(self, op: JsonObject) -> JsonObject:
        """Another process's request for something held here; never raises."""
        sid, request_id = op.get("sid"), op.get("id")
        if not isinstance(sid, str):
            return {}
        if op.get("op") == "answer" and isinstance(request_id, str):
            answer = Answer(op.get("result"), op.get("error"))
            return {"delivered": self._deliver(sid, request_id, answer)}
        token = op.get("token")
        if op.get("op") == "refresh" and isinstance(token, str):
            assert self.shared is not None
            with trio.move_on_after(self.shared.timeout / 4):
                await self._refresh_here(sid, token)
        return {}

    def _on_notice(self, body: JsonObject) -> None:
        """Another process's notice: a cancellation, or a session's end."""
        sid, request_id = body.get("sid"), body.get("id")
        if not isinstance(sid, str):
            return
        if body.get("op") == "cancel" and isinstance(request_id, str | int):
            self._cancel_here(sid, request_id)
        elif body.get("op") == "end":
            self._end_here(sid)
