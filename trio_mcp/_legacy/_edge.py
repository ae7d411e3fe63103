"""The handshake-era edge of a message stream: legacy traffic in front of the loop.

``Server(..., legacy=True)`` puts this edge between a stream transport (stdio) and
the shared message loop (``_transports._stream.serve_messages``). It works on whole
messages only: the loop and the dispatcher behind it stay stateless and never learn
about eras (MCP revision 2026-07-28, versioning, "Dual-era server": an ``initialize``
selects legacy semantics for that stdio process).

What passes through, and how:

- A request whose ``_meta`` carries a protocol version is modern: it goes to the
  loop untouched (the dispatcher's ``server/discover`` lists the legacy revisions
  too, ``Dispatcher.versions``).
- ``initialize`` opens the one ``Session`` of the stream (a second is -32600); the
  edge asks the loop ``server/discover`` and answers with its capabilities and
  instructions. ``ping``, ``logging/setLevel``, ``resources/subscribe`` and
  ``unsubscribe`` are answered here. Any other legacy request becomes a modern one
  (``_meta`` from the session) under an id of the edge's own (``prefix`` plus a
  counter: no client id can collide with it), and its reply is shaped back into
  the session's revision under the client's id (``_shapes``).
- A reply ``input_required`` starts a round (``_rounds``): the edge sends the
  client real requests, collects its answers (JSON-RPC responses, routed here by
  id) and sends the loop the retry; the client sees one request and one reply.
- ``notifications/cancelled`` naming a legacy request reaches the loop under the
  edge's id, or ends the round it waits in. Updates and list changes come from one
  internal ``subscriptions/listen`` (``_listens``).

Bounds: at most ``max_concurrent + max_waiting`` rounds wait for the client at once
(beyond, the request is answered "server busy"), each request at most
``MAX_ROUNDS`` rounds, at most ``MAX_SUBSCRIPTIONS`` URIs; a client answer to no
waiting request is dropped (a response is never answered, JSON-RPC 2.0 §5).
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs
import trio

from .._json import (
    JsonObject,
    JsonValue,
    could_exceed,
    depth_exceeds,
    encode_message,
    loads,
)
from .._limits import Limits
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Notification, Request, classify
from ._input import EdgeInput
from ._listens import Listens
from ._rounds import (
    MAX_ROUNDS,
    Answer,
    ClientRequest,
    RoundFailed,
    client_requests,
    drive_round,
    next_params,
)
from ._session import ALL_REVISIONS, BadInitialize, Session, negotiate
from ._shapes import OutputSchemaOf, initialize_result
from ._translate import (
    FORWARDED,
    BadParams,
    legacy_reply,
    modern,
    modern_params,
    round_of,
)

if TYPE_CHECKING:
    from .._transports._stream import Taken

__all__ = ["Write", "legacy_edge"]

log = logging.getLogger("trio_mcp")

Write = Callable[[list[bytes]], Awaitable[None]]
"""The loop's writer: whole encoded messages, in order."""


class _Unread:
    """A message the edge cannot read (oversized, not JSON, too deep): the loop's."""


_UNREAD: Final = _Unread()


def legacy_edge(
    output_schema: OutputSchemaOf,
) -> Callable[..., Any]:
    """The ``edge`` a stream transport puts in front of its loop for a dual-era server.

    ``output_schema(name)`` is the output schema a tool is served with now (its
    structured value is wrapped when that is not an object schema).
    """

    def edge(
        incoming: trio.abc.ReceiveChannel[Any], write: Write, limits: Limits
    ) -> Any:
        return _Edge(output_schema, limits).serve(incoming, write)

    return edge


@attrs.define(eq=False)
class _Call:
    """A legacy request the edge is carrying: in the loop, or in a round."""

    client_id: str | int
    method: str
    params: JsonObject
    """The modern params of the current round."""
    internal_id: str
    rounds: int = 0
    scope: trio.CancelScope | None = None
    """Set while a round waits for the client's answers."""


@attrs.define(eq=False)
class _Asked:
    """A server-to-client request waiting for the client's answer."""

    done: trio.Event = attrs.Factory(trio.Event)
    answer: Answer = attrs.Factory(Answer)


class _Edge:
    """The legacy edge of one stream: its session and what it carries."""

    def __init__(self, output_schema: OutputSchemaOf, limits: Limits) -> None:
        self.output_schema = output_schema
        self.limits = limits
        self.prefix = f"legacy-{secrets.token_hex(8)}-"
        self._ids = itertools.count(1)
        self._asked_ids = itertools.count(1)
        self.session: Session | None = None
        self.capabilities: JsonObject = {}
        """The server's, from discovery, once ``initialize`` is answered."""
        self.initializing: tuple[str, str | int] | None = None
        """The internal discovery's id and the client's ``initialize`` id."""
        self.calls: dict[str, _Call] = {}
        self.by_client: dict[str | int, _Call] = {}
        self.asked: dict[int, _Asked] = {}
        self.waiting_rounds = 0
        self.deadline = math.inf
        self.listens = Listens(self)
        self.injected: deque[Taken] = deque()
        """The edge's own messages for the loop, taken at its next read."""
        self.reading: trio.CancelScope | None = None
        """The loop's read from the client, while it waits (``inject`` cuts it short)."""
        self.ended = False
        self.transport_write: Write
        self.write_lock = trio.Lock()
        self.to_writer: trio.MemorySendChannel[list[bytes]]
        self.inner: trio.Nursery | None = None

    # -- lifecycle -----------------------------------------------------------------
    @asynccontextmanager
    async def serve(
        self, incoming: trio.abc.ReceiveChannel[Any], write: Write
    ) -> AsyncIterator[tuple[trio.abc.ReceiveChannel[Any], Write]]:
        """Run the edge for the block; yield the loop's input and writer."""
        self.transport_write = write
        self.to_writer, from_edge = trio.open_memory_channel[list[bytes]](0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._write_all, from_edge)
            self.inner = await nursery.start(self._run_inner)
            try:
                yield EdgeInput(self, incoming), self._loop_write
            finally:
                # The loop is done: what it handed over is written, within the
                # grace period that began when the input ended.
                self.input_ended()
                nursery.cancel_scope.deadline = self.deadline
                self.to_writer.close()

    async def _run_inner(
        self, task_status: trio.TaskStatus[trio.Nursery] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Where rounds and the internal listen run, until the input ends."""
        async with trio.open_nursery() as inner:
            inner.start_soon(self.listens.run)
            task_status.started(inner)

    def input_ended(self) -> None:
        """The client's input ended: rounds and listens stop, the grace begins."""
        if self.ended:
            return
        self.ended = True
        grace = self.limits.grace_period
        self.deadline = (
            trio.current_time() + grace if math.isfinite(grace) else math.inf
        )
        if self.inner is not None:
            self.inner.cancel_scope.cancel()

    def inject(self, message: Taken) -> None:
        """Give the loop a message of the edge's own (a round's retry, a listen):
        taken at its next read, or at once if it is waiting for the client."""
        if self.ended:
            return  # the loop reads no more
        self.injected.append(message)
        if self.reading is not None:
            self.reading.cancel()

    async def _write_all(
        self, from_edge: trio.MemoryReceiveChannel[list[bytes]]
    ) -> None:
        """The writer of the edge's own messages (its replies, its requests)."""
        async for batch in from_edge:
            while True:
                try:
                    batch = batch + from_edge.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            await self._write(batch)

    async def _write(self, batch: list[bytes]) -> None:
        """Write whole messages: one writer at a time, the loop's or the edge's (a
        free lock is taken without a scheduler pass)."""
        lock = self.write_lock
        try:
            lock.acquire_nowait()
        except trio.WouldBlock:
            await lock.acquire()
        try:
            await self.transport_write(batch)
        finally:
            lock.release()

    def new_id(self) -> str:
        """An id for a request the edge sends the loop: no client's id can equal it."""
        return f"{self.prefix}{next(self._ids)}"

    def ours(self, request_id: JsonValue) -> bool:
        """Whether ``request_id`` is one the edge made."""
        return isinstance(request_id, str) and request_id.startswith(self.prefix)

    # -- client to server ----------------------------------------------------------
    async def take(self, raw: object) -> list[Taken]:
        """What the loop takes for one message the client sent (none, when the edge
        answers it or keeps it): the loop takes what the edge has read as it is,
        so nothing is parsed twice."""
        value = self._decode(raw)
        if isinstance(value, _Unread):
            return [raw]  # type: ignore[list-item]  # the loop answers what it cannot read
        if isinstance(value, dict) and _is_response(value):
            self._answered(value)
            return []
        message = classify(value)
        if isinstance(message, Request):
            if modern(message.params):
                return [message]
            if message.method == "initialize":
                return await self._initialize(message)
            return await self._legacy(message)
        if isinstance(message, Notification):
            return await self._notified(message)
        return [message]

    def _decode(self, raw: object) -> JsonValue | _Unread:
        if not isinstance(raw, str | bytes):
            return _UNREAD
        try:
            value = loads(raw)
        except (ValueError, RecursionError):
            return _UNREAD
        depth = self.limits.max_depth
        if could_exceed(raw, depth) and depth_exceeds(value, depth):
            return _UNREAD
        return value

    async def _legacy(self, request: Request) -> list[Taken]:
        """A request of a handshake-era client (no modern ``_meta``)."""
        session = self.session
        if request.method in FORWARDED and session is not None:
            return await self._forward(request, session)
        if request.method == "ping":
            await self.reply(request.id, {})
        elif session is None:
            await self.fail(
                request.id,
                wire.INVALID_PARAMS,
                "this request carries no protocol version: send initialize first "
                f"(revisions {', '.join(ALL_REVISIONS[1:])}) or carry params._meta "
                f"(revision {wire.PROTOCOL_VERSION})",
            )
        elif request.method == "logging/setLevel":
            await self._set_level(request, session)
        elif request.method in ("resources/subscribe", "resources/unsubscribe"):
            await self.listens.subscribe(request, session)
        else:
            await self.fail(
                request.id,
                wire.METHOD_NOT_FOUND,
                f"method '{request.method}' is not served in protocol revision "
                f"{session.revision}",
            )
        return []

    async def _initialize(self, request: Request) -> list[Taken]:
        if self.session is not None:
            await self.fail(
                request.id,
                wire.INVALID_REQUEST,
                "invalid request: this stream is already initialized (revision "
                f"{self.session.revision}); start a new server process for a new session",
            )
            return []
        try:
            session = negotiate(request.params)
        except BadInitialize as exc:
            await self.fail(request.id, wire.INVALID_PARAMS, str(exc))
            return []
        self.session = session
        discover_id = self.new_id()
        self.initializing = (discover_id, request.id)
        params: JsonObject = {"_meta": session.modern_meta(None)}
        return [Request(discover_id, "server/discover", params)]

    async def _set_level(self, request: Request, session: Session) -> None:
        params = request.params
        level = params.get("level") if isinstance(params, dict) else None
        if not isinstance(level, str) or level not in wire.LOG_LEVEL_RANK:
            await self.fail(
                request.id,
                wire.INVALID_PARAMS,
                f"logging/setLevel needs params.level, one of {', '.join(wire.LOG_LEVELS)}",
            )
            return
        self.session = attrs.evolve(session, log_level=level)
        await self.reply(request.id, {})

    async def _forward(self, request: Request, session: Session) -> list[Taken]:
        try:
            params = modern_params(request.params, session)
        except BadParams as exc:
            await self.fail(request.id, wire.INVALID_PARAMS, str(exc))
            return []
        call = _Call(request.id, request.method, params, self.new_id())
        self.by_client[call.client_id] = call
        return [self._carried(call)]

    def _carried(self, call: _Call) -> Request:
        """The modern request of ``call``'s current round, for the loop."""
        self.calls[call.internal_id] = call
        return Request(call.internal_id, call.method, call.params)

    async def _notified(self, message: Notification) -> list[Taken]:
        await trio.lowlevel.checkpoint()
        if message.method in (
            "notifications/initialized",
            "notifications/roots/list_changed",
        ):
            return []  # nothing of the core depends on them
        params = message.params
        request_id = params.get("requestId") if isinstance(params, dict) else None
        call = (
            self.by_client.get(request_id)
            if message.method == "notifications/cancelled"
            and isinstance(request_id, str | int)
            else None
        )
        if call is None:
            return [message]
        self._forget(call)
        if call.scope is not None:
            call.scope.cancel()  # it waits in a round: nothing reaches the loop
            return []
        cancel: JsonObject = {"requestId": call.internal_id}
        return [Notification("notifications/cancelled", cancel)]

    def _forget(self, call: _Call) -> None:
        self.calls.pop(call.internal_id, None)
        if self.by_client.get(call.client_id) is call:
            del self.by_client[call.client_id]

    def _answered(self, response: JsonObject) -> None:
        """A client's answer to a server-to-client request."""
        request_id = response.get("id")
        asked = self.asked.pop(request_id, None) if type(request_id) is int else None
        if asked is None:
            log.debug(
                "dropped a client answer to no waiting request: id %r", request_id
            )
            return
        asked.answer = Answer(response.get("result"), response.get("error"))
        asked.done.set()

    # -- server to client ----------------------------------------------------------
    async def reply(self, request_id: str | int, result: JsonObject) -> None:
        """Send the client a result the edge answers itself."""
        await self.to_writer.send(
            [encode_message(wire.result_message(request_id, result))]
        )

    async def fail(
        self, request_id: str | int, code: int, message: str, data: JsonValue = None
    ) -> None:
        """Send the client an error the edge answers itself."""
        error = wire.error_message(request_id, code, message, data)
        await self.to_writer.send([encode_message(error)])

    async def send_loop(self, message: Request | Notification) -> None:
        """Hand the loop a message of the edge's own (a listen, a cancellation)."""
        await trio.lowlevel.checkpoint()
        self.inject(message)

    async def _loop_write(self, batch: list[bytes]) -> None:
        """The loop's writer: each message shaped for its era, then written (as it
        is, before any ``initialize``)."""
        if self.session is not None:
            batch = [
                shaped for data in batch if (shaped := self._outgoing(data)) is not None
            ]
            if not batch:
                return
        await self._write(batch)

    def _outgoing(self, data: bytes) -> bytes | None:
        message = loads(data)
        if not isinstance(message, dict):  # pragma: no cover - the loop sends objects
            return data
        if "method" in message:
            return self.listens.notification(message, data)
        request_id = message.get("id")
        if not self.ours(request_id):
            return data
        assert isinstance(request_id, str)
        call = self.calls.pop(request_id, None)
        if call is not None:
            return self._finished(call, message)
        if self.initializing is not None and request_id == self.initializing[0]:
            return self._initialized(message)
        self.listens.replied(request_id, message)
        return None  # a listen's end, or a request the client cancelled

    def _initialized(self, message: JsonObject) -> bytes:
        assert self.initializing is not None
        assert self.session is not None
        client_id = self.initializing[1]
        self.initializing = None
        result = message.get("result")
        if not isinstance(result, dict):
            error = message.get("error")
            return encode_message(
                {"jsonrpc": wire.JSONRPC, "id": client_id, "error": error}
            )
        caps = result.get("capabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.listens.start(self.capabilities)
        reply = initialize_result(result, self.session)
        return encode_message(wire.result_message(client_id, reply))

    def _finished(self, call: _Call, message: JsonObject) -> bytes | None:
        """The loop's reply to a carried request: shaped, or the next round."""
        session = self.session
        assert session is not None
        round_result = round_of(call.method, message)
        if round_result is not None:
            return self._next_round(call, round_result, session)
        self._forget(call)
        reply = legacy_reply(
            call.client_id,
            call.method,
            call.params,
            message,
            session,
            self.output_schema,
        )
        return encode_message(reply)

    def _next_round(
        self, call: _Call, result: JsonObject, session: Session
    ) -> bytes | None:
        bound = self.limits.max_concurrent + self.limits.max_waiting
        failure: RoundFailed | None = None
        if self.waiting_rounds >= bound:
            failure = RoundFailed(
                wire.SERVER_BUSY,
                wire.busy_message(f"{bound} requests wait for client input"),
                {"retryable": True},
            )
        elif call.rounds >= MAX_ROUNDS:
            failure = RoundFailed(
                wire.INTERNAL_ERROR,
                f"the request asked for input {MAX_ROUNDS} times; it was stopped",
            )
        elif self.inner is None or self.inner.cancel_scope.cancel_called:
            failure = RoundFailed(
                wire.INTERNAL_ERROR,
                "the client's input has ended, so it cannot be asked for input",
            )
        if failure is not None:
            self._forget(call)
            error = wire.error_message(
                call.client_id, failure.code, str(failure), failure.data
            )
            return encode_message(error)
        self.waiting_rounds += 1
        self.inner.start_soon(self._round, call, result, session)  # type: ignore[union-attr]
        return None

    async def _round(self, call: _Call, result: JsonObject, session: Session) -> None:
        """Ask the client what the round needs, then send the loop the retry."""
        try:
            with trio.CancelScope() as scope:
                call.scope = scope
                try:
                    requests = client_requests(result, session)
                    responses = await drive_round(requests, self._ask)
                except RoundFailed as exc:
                    self._forget(call)
                    await self.fail(call.client_id, exc.code, str(exc), exc.data)
                    return
                call.rounds += 1
                call.params = next_params(call.params, result, responses)
                call.internal_id = self.new_id()
                self.inject(self._carried(call))
                call.scope = None
        finally:
            call.scope = None
            self.waiting_rounds -= 1

    async def _ask(self, request: ClientRequest) -> Answer:
        """Send one server-to-client request and wait for the client's answer."""
        request_id = next(self._asked_ids)
        asked = _Asked()
        self.asked[request_id] = asked
        try:
            await self.to_writer.send(
                [_request(request_id, request.method, request.params)]
            )
            await asked.done.wait()
            return asked.answer
        finally:
            if self.asked.pop(request_id, None) is not None:
                self._tell_cancelled(request_id)

    def _tell_cancelled(self, request_id: int) -> None:
        """Tell the client a request it was asked is no longer wanted."""
        inner = self.inner
        if inner is None or inner.cancel_scope.cancel_called:
            return
        note = wire.notification_message(
            "notifications/cancelled", {"requestId": request_id}
        )
        inner.start_soon(self.to_writer.send, [encode_message(note)])


def _request(request_id: str | int, method: str, params: JsonObject) -> bytes:
    return encode_message(
        {"jsonrpc": wire.JSONRPC, "id": request_id, "method": method, "params": params}
    )


def _is_response(value: JsonObject) -> bool:
    return (
        "method" not in value
        and "id" in value
        and ("result" in value or "error" in value)
    )
