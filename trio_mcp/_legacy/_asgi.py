"""Handshake-era clients over Streamable HTTP: an ASGI app in front of the modern one.

MCP revision 2025-11-25 (and 2025-06-18, 2025-03-26), Streamable HTTP, "Session
Management". ``LegacyApp`` wraps the 2026-07-28 app and takes only what is a
session's, after the app's own checks (``McpAsgiApp.admit``: Origin, Host, token,
principal, media types): ``initialize`` without 2026-07-28 ``_meta`` opens a session
(negotiated, its capabilities discovered through the app's edge, kept by
``_sessions`` bound to the principal, its id in ``Mcp-Session-Id``); a request with
that header is routed by the session machine (``route``), a ``Carried`` call going
through the app's edge (``McpAsgiApp.dispatch``) with its rounds' questions on the
POST's event stream and the answers routed to it by the hub; ``GET`` is the
session's stream (``_get``), ``DELETE`` its end. An unknown, expired, ended or
foreign session is 404 (the client initializes again); a JSON-RPC error is HTTP 200
but for the statuses that say what to do (401, 403, 429, 503).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Final

import attrs
import trio

from .._dispatch import Caller, Reply
from .._dispatch._call import BUSY_RETRY_AFTER
from .._http._app import McpAsgiApp
from .._http._body import read_json, read_message
from .._http._forwarded import caller_key
from .._http._gate import rate_limited
from .._http._response import (
    Receive,
    Response,
    Scope,
    Send,
    retry_after_header,
    send_fault,
    send_json,
)
from .._interrupt import interrupts_unwrapped
from .._json import JsonObject, JsonValue, encode_message
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request, classify
from .._store import StoreUnavailable
from ._get import serve_stream
from ._hub import Hub
from ._machine import (
    Level,
    Subscribe,
    fault_bytes,
    is_response,
    result_bytes,
    route,
)
from ._rounds import Answer, Carried, Rounds, Step
from ._session import REVISIONS, BadInitialize, modern, negotiate
from ._sessions import Record, SessionsFull, TooManySubscriptions, owner_of
from ._shapes import OutputSchemaOf, initialize_result

__all__ = ["SESSION_HEADER", "LegacyApp"]

log = logging.getLogger("trio_mcp.http")

#: The request and response header naming a session (lower-cased, as ASGI has it).
SESSION_HEADER: Final = "mcp-session-id"
#: Statuses a legacy reply keeps: each says what to do (authenticate, wait).
KEPT: Final = frozenset({401, 403, 429, 503})
_AGAIN: Final = (
    "invalid request: this session is already initialized (revision {}); send "
    "initialize without Mcp-Session-Id for a new session"
)
_GONE: Final = (
    "not found: this session does not exist (it expired, was ended, or was opened "
    "by someone else); send initialize for a new one"
)
_FULL_SUBSCRIPTIONS: Final = (
    "this session already holds the most subscriptions it may; unsubscribe from "
    "some first"
)


class LegacyApp:
    """An ASGI 3 app: ``app`` (2026-07-28), with handshake-era sessions in front."""

    def __init__(
        self, app: McpAsgiApp, hub: Hub, output_schema: OutputSchemaOf
    ) -> None:
        self.app = app
        self.hub = hub
        self.edge = app.edge
        self.limits = app.limits
        self.closing = app.closing
        self.listens = app.listens
        """The app's open listen streams: a ``GET`` stream counts as one."""
        self.rounds = Rounds(app.limits, output_schema, hub.new_id)
        """This app's rounds: at most ``max_concurrent + max_waiting`` wait."""
        app.access.cors.with_sessions()

    def close(self) -> None:
        """Shut down gracefully (``McpAsgiApp.close``)."""
        self.app.close()

    @trio.lowlevel.enable_ki_protection
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection scope (protected as ``McpAsgiApp.__call__``)."""
        with interrupts_unwrapped():
            app = self.app
            if (
                scope["type"] != "http"
                or scope["method"] == "OPTIONS"
                or app.route_of(scope) != app.path
            ):
                await app.serve(scope, receive, send)
                return
            opened = await app.open(scope, send)
            if opened is None:
                return
            headers, send = opened
            session = SESSION_HEADER in headers
            caller = await app.admit(scope, headers, send, session=session)
            if caller is None:
                return
            try:
                if session:
                    await self._session(scope["method"], headers, caller, receive, send)
                else:
                    await self._post(headers, caller, receive, send)
            except StoreUnavailable as exc:  # raised before anything is sent
                log.warning("handshake-era session: the store failed: %s", exc)
                await send_fault(
                    send,
                    503,
                    "service unavailable: the session store did not answer; "
                    "retry shortly",
                    wire.SERVER_BUSY,
                    [retry_after_header(1)],
                )

    async def _post(
        self, headers: dict[str, str], caller: Caller, receive: Receive, send: Send
    ) -> None:
        """A request without a session: ``initialize``, or the modern app's."""
        message = await read_message(headers, receive, self.limits)
        if message is None:
            return  # the client left before sending its message: nothing to answer
        if not isinstance(message, Request):
            await message(send)
        elif message.method == "initialize" and not modern(message.params):
            await self._initialize(message, caller, send)
        else:
            await self.app.serve_request(message, caller, receive, send)

    async def _initialize(self, request: Request, caller: Caller, send: Send) -> None:
        """Open a session: negotiate, discover the capabilities, keep it, answer."""
        if await self._limited(caller, request.method, send, request.id):
            return
        try:
            session = negotiate(request.params)
        except BadInitialize as exc:
            fault = Fault(wire.INVALID_PARAMS, str(exc), None, request.id)
            await send_json(send, 200, fault_bytes(fault))
            return
        params: JsonObject = {"_meta": session.modern_meta(None)}
        caller = attrs.evolve(caller, headers=None)  # see McpAsgiApp.admit
        discover = Request(request.id, "server/discover", params)
        reply = await self.edge.handle(discover, caller)
        result, _ = reply.parts()
        if result is None:
            await _send(send, _reply(reply.body, reply))
            return
        key = caller_key(caller.principal, caller.peer)
        try:
            sid = await self.hub.sessions.open(
                session, owner_of(caller.principal), key, self.limits
            )
        except SessionsFull:
            full = f"{self.limits.max_sessions} handshake-era sessions are open"
            full = wire.busy_message(full)
            busy = Fault(wire.SERVER_BUSY, full, {"retryable": True}, request.id)
            retry = [retry_after_header(BUSY_RETRY_AFTER)]
            await send_json(send, 503, fault_bytes(busy), retry)
            return
        body = result_bytes(request.id, initialize_result(result, session))
        await send_json(send, 200, body, [(SESSION_HEADER.encode(), sid.encode())])

    async def _limited(
        self, caller: Caller, method: str, send: Send, request_id: str | int | None
    ) -> bool:
        """Take a token from the caller's bucket (the app's ``RateLimit``); True once
        the 429 (a JSON-RPC error naming ``request_id``) is sent."""
        limiter = self.app.gate.rate_limiter
        wait = None if limiter is None else await limiter.wait_for(caller, method)
        if wait is None:
            return False
        ending = rate_limited(wait)
        message: JsonObject = {
            "jsonrpc": wire.JSONRPC,
            "id": request_id,
            "error": ending.error,
        }
        headers = [(k.encode(), v.encode()) for k, v in ending.headers]
        await send_json(send, ending.http_status, encode_message(message), headers)
        return True

    # -- a session's requests ------------------------------------------------------------
    async def _session(
        self,
        method: str,
        headers: dict[str, str],
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        """A ``GET``, ``DELETE`` or POST of a session."""
        sid = headers[SESSION_HEADER]
        version = headers.get("mcp-protocol-version")
        if version is not None and version.strip() not in REVISIONS:
            await send_fault(
                send,
                400,
                f"bad request: MCP-Protocol-Version {version!r} is not a revision "
                f"this session can speak ({', '.join(REVISIONS)})",
            )
            return
        if method == "POST":
            await self._session_post(sid, headers, caller, receive, send)
            return
        if await self._limited(caller, method, send, None):
            return
        record = await self._find(sid, caller, send, None)
        if record is None:
            return
        if method == "GET":
            await serve_stream(self, sid, record, headers, caller, receive, send)
        elif method == "DELETE":
            await self.hub.sessions.close(sid)
            await self.hub.ended(sid)
            await send_json(send, 200, b"")
        else:
            allow = [(b"allow", b"GET, POST, DELETE")]
            await send_fault(send, 405, "method not allowed", extra=allow)

    async def _find(
        self, sid: str, caller: Caller, send: Send, request_id: str | int | None
    ) -> Record | None:
        """The caller's session ``sid``, or None once the 404 is sent (its body
        naming ``request_id``, the request's, if there is one)."""
        owner = owner_of(caller.principal)
        record = await self.hub.sessions.find(sid, owner, self.limits)
        if record is None:
            await _gone(send, request_id)
        return record

    async def _session_post(
        self,
        sid: str,
        headers: dict[str, str],
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        read = await read_json(headers, receive, self.limits)
        if read is None:
            return  # the client left before its message arrived
        if not isinstance(read, tuple):
            await read(send)
            return
        (value,) = read
        record = await self._find(sid, caller, send, _request_id(value))
        if record is None:
            return
        if isinstance(value, dict) and is_response(value):
            answer = Answer(value.get("result"), value.get("error"))
            if await self.hub.answer(sid, value.get("id"), answer):
                await send_json(send, 202, b"")
            else:
                await send_fault(
                    send,
                    400,
                    "bad request: no request of this session waits for this answer "
                    f"(id {value.get('id')!r}); it was answered, cancelled, or "
                    "never asked",
                )
            return
        message = classify(value)
        if isinstance(message, Fault):
            await send_json(send, 400, fault_bytes(message))
        elif isinstance(message, Notification):
            params = message.params
            if message.method == "notifications/cancelled" and isinstance(params, dict):
                await self.hub.cancel(sid, params.get("requestId"))
            # notifications/initialized, roots/list_changed: nothing depends on them
            await send_json(send, 202, b"")
        else:
            await self._request(sid, record, message, caller, receive, send)

    async def _request(
        self,
        sid: str,
        record: Record,
        request: Request,
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        session = record.session
        resources = self.edge.dispatcher.capabilities.get("resources")
        subscribable = (
            isinstance(resources, dict) and resources.get("subscribe") is True
        )
        routed = route(request, session, subscribable, _AGAIN.format(session.revision))
        if isinstance(routed, Carried):
            await self._call(sid, routed, caller, receive, send)
        elif isinstance(routed, Fault):
            await send_json(send, routed.http_status, fault_bytes(routed))
        elif isinstance(routed, Level):
            found = await self.hub.sessions.set_level(sid, routed.level)
            await _done(send, request.id, found)
        elif isinstance(routed, Subscribe):
            try:
                changed = await self.hub.sessions.subscribe(
                    sid, routed.uri, routed.wanted, self.limits
                )
            except TooManySubscriptions:
                fault = Fault(
                    wire.INVALID_PARAMS, _FULL_SUBSCRIPTIONS, None, request.id
                )
                await send_json(send, 200, fault_bytes(fault))
                return
            if changed:
                # The stream follows before the answer, so no update after it is lost.
                await self.hub.refresh(sid, record.stream)
            await _done(send, request.id, changed is not None)
        else:
            await send_json(send, 200, result_bytes(request.id, routed))

    # -- calls ---------------------------------------------------------------------------
    async def _call(
        self, sid: str, call: Carried, caller: Caller, receive: Receive, send: Send
    ) -> None:
        """A carried call, rounds and all, on its own response (JSON, or an event
        stream once something precedes the reply)."""
        cancelled: list[bool] = []
        run = partial(self._rounds, sid, call, cancelled)
        request = Request(call.client_id, call.method, call.params)
        response = await self.app.dispatch(request, caller, receive, send, run)
        if cancelled and response.scope.cancelled_caught:
            await response.abandon()

    async def _rounds(
        self,
        sid: str,
        call: Carried,
        cancelled: list[bool],
        request: Request,
        caller: Caller,
        response: Response,
    ) -> Reply:
        """Serve the call, asking the client for what each round needs."""

        def cancel() -> None:
            cancelled.append(True)
            response.scope.cancel()

        done = self.hub.running(sid, call.client_id, cancel)
        try:
            while True:
                reply = await self.edge.handle(
                    request, caller, response.emit, response.scope
                )
                result, error = reply.parts()
                step = self.rounds.replied(call, result, error)
                while not step.done and step.retry is None:
                    step = await self._ask(sid, call, step, response)
                if step.done:
                    for note in step.out[:-1]:
                        await response.emit(note)
                    return _reply(step.out[-1], reply)
                request = Request(call.client_id, call.method, call.params)
        finally:
            done()

    async def _ask(
        self, sid: str, call: Carried, step: Step, response: Response
    ) -> Step:
        """Send the round's requests on the POST's stream; take the client's answers
        (routed here by the hub) until the round is over."""
        ids = [*call.asked]
        inbox, answers = trio.open_memory_channel[tuple[str, Answer]](len(ids))
        self.hub.expect(sid, ids, inbox)
        try:
            async with trio.open_nursery() as nursery:
                # The user may take minutes: keep proxies from closing the stream.
                nursery.start_soon(response.keep_alive)
                for data in step.out:
                    await response.emit(data)
                while not step.done and step.retry is None:
                    request_id, answer = await answers.receive()
                    step = self.rounds.answered(call, request_id, answer)
                nursery.cancel_scope.cancel()
        finally:
            self.hub.forget(ids)
            # Not answered (the call ends): tell the client it need not answer.
            notes = self.rounds.dropped(call)
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                for note in notes:
                    await response.emit(note)
        return step


def _request_id(value: JsonValue) -> str | int | None:
    """The id of a request (a message with a method), if ``value`` is one."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    found = value.get("id")
    return (
        found if isinstance(found, str | int) and not isinstance(found, bool) else None
    )


def _reply(body: bytes, reply: Reply) -> Reply:
    """The HTTP reply carrying ``body``: 200 unless the core's ``reply`` has a
    status that says what to do (401, 403, 429, 503, with their headers)."""
    if reply.http_status in KEPT:
        return Reply(body, reply.http_status, reply.headers)
    return Reply(body)


async def _send(send: Send, reply: Reply) -> None:
    await send_json(send, reply.http_status, reply.body, list(reply.headers) or None)


async def _done(send: Send, request_id: str | int, found: bool) -> None:
    """The empty result of a change to the session, or 404 if it is gone."""
    if found:
        await send_json(send, 200, result_bytes(request_id, {}))
    else:
        await _gone(send, request_id)


async def _gone(send: Send, request_id: str | int | None) -> None:
    """404: the session is unknown, expired, ended or another principal's. The body
    is a JSON-RPC error naming the request, if there is one (the 2025-06-18 and
    2025-03-26 schemas require an id on every error)."""
    await send_json(
        send, 404, fault_bytes(Fault(wire.INVALID_REQUEST, _GONE, None, request_id))
    )
