"""Resource updates and list changes for a handshake-era session, from one listen.

A handshake-era client learns of changes without asking: ``notifications/*/list_changed``
whenever the server advertised ``listChanged``, and ``notifications/resources/updated``
for the URIs it named in ``resources/subscribe``. The edge gets both from the same
broadcast a modern client listens to: it holds one internal ``subscriptions/listen``
with the session's whole filter, and replaces it (opened, acknowledged, then the old
one cancelled) whenever the subscriptions change. A ``resources/subscribe`` is answered
once a listen covering it is acknowledged, so no update after the answer is lost
(one may arrive twice while the two listens overlap; an update is a hint to read
again, so a repeat is harmless).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request
from ._session import (
    ACKNOWLEDGED,
    LIST_FLAGS,
    MAX_SUBSCRIPTIONS,
    Session,
    subscription_uri,
)

if TYPE_CHECKING:
    from ._edge import _Edge

__all__ = ["Listens"]


@attrs.define(eq=False)
class _Listen:
    acked: trio.Event = attrs.Factory(trio.Event)
    error: JsonValue = None


class Listens:
    """The internal listen of one edge, and the subscribe requests it answers."""

    def __init__(self, edge: _Edge) -> None:
        self.edge = edge
        self.open: dict[str, _Listen] = {}
        """Internal listens whose notifications reach the client, by request id."""
        self.flags: JsonObject = {}
        self.subscribable = False
        self.known = trio.Event()
        self.changed = trio.Event()
        self.waiting: list[str | int] = []
        """Ids of subscribe/unsubscribe requests answered at the next acknowledgement."""

    def start(self, capabilities: JsonObject) -> None:
        """The server's capabilities are known: list changes it advertises flow."""
        for kind, flag in LIST_FLAGS.items():
            advertised = capabilities.get(kind)
            if isinstance(advertised, dict) and advertised.get("listChanged") is True:
                self.flags[flag] = True
        resources = capabilities.get("resources")
        self.subscribable = (
            isinstance(resources, dict) and resources.get("subscribe") is True
        )
        self.known.set()

    async def run(self) -> None:
        """Keep one listen open with the session's filter, replacing it on change."""
        await self.known.wait()
        current: str | None = None
        while True:
            session = self.edge.session
            assert session is not None
            wanted = dict(self.flags)
            if session.subscriptions:
                uris: list[JsonValue] = [*sorted(session.subscriptions)]
                wanted["resourceSubscriptions"] = uris
            waiting, self.waiting = self.waiting, []
            self.changed = trio.Event()
            new, error = (None, None)
            if wanted:
                new, error = await self._open(wanted, session)
            if error is None and current is not None:
                await self._close(current)
                current = None
            current = new if new is not None else current
            for request_id in waiting:
                if error is None:
                    await self.edge.reply(request_id, {})
                else:
                    await self._fail(request_id, error)
            await self.changed.wait()

    async def _open(
        self, wanted: JsonObject, session: Session
    ) -> tuple[str | None, JsonValue]:
        listen_id = self.edge.new_id()
        state = self.open[listen_id] = _Listen()
        params: JsonObject = {
            "_meta": session.modern_meta(None),
            "notifications": wanted,
        }
        await self.edge.send_loop(Request(listen_id, "subscriptions/listen", params))
        await state.acked.wait()
        if state.error is not None:
            self.open.pop(listen_id, None)
            return None, state.error
        return listen_id, None

    async def _close(self, listen_id: str) -> None:
        self.open.pop(listen_id, None)
        cancel: JsonObject = {"requestId": listen_id}
        await self.edge.send_loop(Notification("notifications/cancelled", cancel))

    async def _fail(self, request_id: str | int, error: JsonValue) -> None:
        code, message = wire.INTERNAL_ERROR, "the subscription could not be opened"
        if isinstance(error, dict):
            raw_code, raw_message = error.get("code"), error.get("message")
            code = raw_code if isinstance(raw_code, int) else code
            message = raw_message if isinstance(raw_message, str) else message
        await self.edge.fail(request_id, code, message)

    # -- requests and the loop's messages ---------------------------------------------
    async def subscribe(self, request: Request, session: Session) -> None:
        """``resources/subscribe`` or ``resources/unsubscribe``."""
        edge = self.edge
        uri = subscription_uri(request, self.subscribable)
        if isinstance(uri, Fault):
            await edge.fail(request.id, uri.code, uri.message)
            return
        subscriptions = session.subscriptions
        if request.method == "resources/subscribe":
            if uri not in subscriptions and len(subscriptions) >= MAX_SUBSCRIPTIONS:
                await edge.fail(
                    request.id,
                    wire.INVALID_PARAMS,
                    f"this session already holds {MAX_SUBSCRIPTIONS} subscriptions; "
                    "unsubscribe from some first",
                )
                return
            subscriptions = subscriptions | {uri}
        else:
            subscriptions = subscriptions - {uri}
        if subscriptions == session.subscriptions:
            await edge.reply(request.id, {})
            return
        if len(self.waiting) >= edge.limits.max_waiting:
            await edge.fail(
                request.id,
                wire.SERVER_BUSY,
                wire.busy_message("too many subscription changes wait"),
                {"retryable": True},
            )
            return
        edge.session = attrs.evolve(session, subscriptions=subscriptions)
        self.waiting.append(request.id)
        self.changed.set()

    def notification(self, message: JsonObject, data: bytes) -> bytes | None:
        """An outgoing notification: an internal listen's in legacy form, else as is."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        listen_id = (
            meta.get(wire.META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        )
        if not self.edge.ours(listen_id):
            return data
        assert isinstance(listen_id, str)
        assert isinstance(params, dict)
        state = self.open.get(listen_id)
        if state is None:
            return None  # a listen being replaced or ended
        method = message.get("method")
        if method == ACKNOWLEDGED:
            state.acked.set()
            return None
        note: JsonObject = {"jsonrpc": wire.JSONRPC, "method": method}
        rest = {k: v for k, v in params.items() if k != "_meta"}
        if rest:
            note["params"] = rest
        return encode_message(note)

    def replied(self, request_id: str, message: JsonObject) -> None:
        """The loop's reply to an internal listen: its error, or its end."""
        state = self.open.pop(request_id, None)
        if state is None:
            return
        if not state.acked.is_set():
            error = message.get("error")
            state.error = (
                error if error is not None else {"message": "the listen ended"}
            )
        state.acked.set()
