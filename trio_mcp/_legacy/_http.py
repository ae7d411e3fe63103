"""Handshake-era clients over Streamable HTTP: sessions in front of the stateless app.

MCP revision 2025-11-25 (and 2025-06-18, 2025-03-26), Streamable HTTP, "Session
Management": ``initialize`` (a POST) opens a session whose id the response's
``Mcp-Session-Id`` carries; every later request carries it. The mounted app hands
this module what is legacy (``McpAsgiApp``, after its ``Origin``/``Host``, token and
principal checks, so those hold for every legacy request as for modern ones):

- ``initialize`` without a session id: the session is negotiated (``negotiate``),
  its capabilities are the catalog's (a ``server/discover`` through the app's edge),
  and it is kept in the hub's table, bound to the principal (``owner_of``);
- a POST carrying ``Mcp-Session-Id``: the session is looked up (unknown, expired,
  closed or another principal's: 404, so the client initializes again) and the
  message served: ``ping``, ``logging/setLevel`` and ``resources/(un)subscribe`` here;
  lists, calls, reads, prompts and completions become modern requests through the
  app's edge (its gate, rate limit and token steps, then the dispatcher's checks,
  grants and receipts), answered in the session's revision (``_translate``). A round
  (``input_required``) becomes server-to-client requests on this POST's event
  stream; the client answers each with a POST (202), routed to the waiting call by
  the hub, and the call goes on. ``notifications/cancelled`` cancels the call (the
  response then ends without a reply);
- ``GET``: the session's stream of notifications not tied to a request
  (``_get``); ``DELETE``: the session ends (later requests get 404).

Status codes: a JSON-RPC error in answer to a legacy request is HTTP 200 (a
handshake-era client reads 404 as "session gone" and drops other bodies), except
the refusals whose status says what to do (401, 403, 429, 503 and their headers).
A missing session id is 400, a ``MCP-Protocol-Version`` that is not a served
handshake-era revision 400, a second ``initialize`` in a session -32600 (400), a
client answer to no waiting request 400.
"""

from __future__ import annotations

from functools import partial
from typing import Final

import attrs
import trio

from .._dispatch import Caller, Reply
from .._dispatch._call import BUSY_RETRY_AFTER
from .._dispatch._dispatcher import Edge
from .._http._body import read_json
from .._http._forwarded import caller_key
from .._http._gate import RateLimiter, rate_limited
from .._http._listens import ListenBounds
from .._http._response import (
    Receive,
    Response,
    Send,
    retry_after_header,
    send_fault,
    send_json,
)
from .._json import JsonObject, encode_message
from .._limits import Limits
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request, classify
from .._store import StoreUnavailable
from ._answers import (
    KEPT,
    http_reply,
    is_response,
    request_id_of,
    respond,
    send_error,
    send_gone,
    send_result,
    send_unavailable,
)
from ._get import serve_stream
from ._hub import Hub
from ._rounds import (
    MAX_ROUNDS,
    Answer,
    ClientRequest,
    RoundFailed,
    client_requests,
    drive_round,
    next_params,
)
from ._session import REVISIONS, BadInitialize, Session, negotiate, subscription_uri
from ._sessions import Record, SessionsFull, TooManySubscriptions, owner_of
from ._shapes import OutputSchemaOf, initialize_result
from ._translate import (
    FORWARDED,
    BadParams,
    legacy_reply,
    modern,
    modern_params,
    round_of,
)

__all__ = ["LegacyHttp", "LegacyServing", "SESSION_HEADER"]

#: The request and response header naming a session (lower-cased, as ASGI has it).
SESSION_HEADER: Final = "mcp-session-id"


@attrs.frozen(eq=False)
class LegacyServing:
    """What a dual-era server gives each of its HTTP apps: the hub (its sessions and
    what this process holds of them) and how a tool's output schema is read."""

    hub: Hub
    output_schema: OutputSchemaOf


class LegacyHttp:
    """The handshake-era side of one mounted app."""

    def __init__(
        self,
        serving: LegacyServing,
        edge: Edge,
        limits: Limits,
        closing: trio.Event,
        listens: ListenBounds,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.hub = serving.hub
        self.rate_limiter = rate_limiter
        """The app's ``RateLimit``: ``initialize``, ``GET`` and ``DELETE`` take a
        token as a call does."""
        self.listens = listens
        """The app's open listen streams: a ``GET`` stream counts as one."""
        self.output_schema = serving.output_schema
        self.edge = edge
        self.limits = limits
        self.closing = closing
        self.waiting = 0
        """Requests of this app waiting for a client's answers now."""

    def claims(self, headers: dict[str, str]) -> bool:
        """Whether a request to the endpoint is a session's: it carries
        ``Mcp-Session-Id`` (a POST, ``GET`` or ``DELETE``; without one, ``GET`` and
        ``DELETE`` stay 405 as for 2026-07-28 clients)."""
        return SESSION_HEADER in headers

    def opens(self, request: Request) -> bool:
        """Whether a POST without a session opens one: an ``initialize`` without
        2026-07-28 ``_meta`` (with it, the request is modern, and the removed
        method's -32601 is its answer)."""
        return request.method == "initialize" and not modern(request.params)

    # -- initialize ------------------------------------------------------------------------
    async def initialize(self, request: Request, caller: Caller, send: Send) -> None:
        """Open a session: negotiate, discover the capabilities, keep it, answer."""
        if await self._limited(caller, request.method, send, request.id):
            return
        try:
            session = negotiate(request.params)
        except BadInitialize as exc:
            await send_error(send, request.id, wire.INVALID_PARAMS, str(exc))
            return
        legacy = _legacy_caller(caller)
        discover = Request(
            request.id, "server/discover", {"_meta": session.modern_meta(None)}
        )
        reply = await self.edge.handle(discover, legacy)
        result = reply.message.get("result")
        if not isinstance(result, dict):
            await self._send_reply(send, reply)
            return
        owner, key = (
            owner_of(caller.principal),
            caller_key(caller.principal, caller.peer),
        )
        try:
            sid = await self.hub.sessions.open(session, owner, key, self.limits)
        except SessionsFull:
            await send_error(
                send,
                request.id,
                wire.SERVER_BUSY,
                wire.busy_message(
                    f"{self.limits.max_sessions} handshake-era sessions are open"
                ),
                {"retryable": True},
                status=503,
                headers=[retry_after_header(BUSY_RETRY_AFTER)],
            )
            return
        except StoreUnavailable as exc:
            await send_unavailable(send, exc)
            return
        body = encode_message(
            wire.result_message(request.id, initialize_result(result, session))
        )
        await send_json(send, 200, body, [(SESSION_HEADER.encode(), sid.encode())])

    # -- a session's requests ------------------------------------------------------------------
    async def serve(
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
            await self._post(sid, headers, caller, receive, send)
            return
        if await self._limited(caller, method, send):
            return
        record = await self._find(sid, caller, send)
        if record is None:
            return
        if method == "GET":
            await serve_stream(self, sid, record, headers, caller, receive, send)
        elif method == "DELETE":
            await self._delete(sid, send)
        else:
            allow = [(b"allow", b"GET, POST, DELETE")]
            await send_fault(send, 405, "method not allowed", extra=allow)

    async def _limited(
        self,
        caller: Caller,
        method: str,
        send: Send,
        request_id: str | int | None = None,
    ) -> bool:
        """Take a token from the caller's bucket; False, or True once the 429 (a
        JSON-RPC error naming ``request_id``, and ``Retry-After``) is sent."""
        limiter = self.rate_limiter
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

    async def _find(
        self,
        sid: str,
        caller: Caller,
        send: Send,
        request_id: str | int | None = None,
    ) -> Record | None:
        """The caller's session ``sid``, or None once the 404 (or 503) is sent (its
        body naming ``request_id``, the request's, if there is one)."""
        try:
            record = await self.hub.sessions.find(
                sid, owner_of(caller.principal), self.limits
            )
        except StoreUnavailable as exc:
            await send_unavailable(send, exc)
            return None
        if record is None:
            await send_gone(send, request_id)
        return record

    async def _delete(self, sid: str, send: Send) -> None:
        try:
            await self.hub.sessions.close(sid)
        except StoreUnavailable as exc:
            await send_unavailable(send, exc)
            return
        await self.hub.ended(sid)
        await send_json(send, 200, b"")

    async def _post(
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
        record = await self._find(sid, caller, send, request_id_of(value))
        if record is None:
            return
        if isinstance(value, dict) and is_response(value):
            delivered = await self.hub.answer(
                sid, value.get("id"), Answer(value.get("result"), value.get("error"))
            )
            if delivered:
                await send_json(send, 202, b"")
            else:
                await send_fault(
                    send,
                    400,
                    "bad request: no request of this session waits for this answer "
                    f"(id {value.get('id')!r}); it was answered, cancelled, or never asked",
                )
            return
        message = classify(value)
        if isinstance(message, Fault):
            await send_json(send, 400, encode_message(message.to_message()))
        elif isinstance(message, Notification):
            await self._notified(sid, message)
            await send_json(send, 202, b"")
        else:
            await self._request(sid, record, message, caller, receive, send)

    async def _notified(self, sid: str, message: Notification) -> None:
        if message.method == "notifications/cancelled":
            params = message.params
            if isinstance(params, dict):
                await self.hub.cancel(sid, params.get("requestId"))
        # notifications/initialized, roots/list_changed: nothing depends on them

    async def _request(
        self,
        sid: str,
        record: Record,
        request: Request,
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        method, session = request.method, record.session
        if method == "ping":
            await send_result(send, request.id, {})
        elif method == "initialize":
            await send_error(
                send,
                request.id,
                wire.INVALID_REQUEST,
                "invalid request: this session is already initialized (revision "
                f"{session.revision}); send initialize without Mcp-Session-Id for a "
                "new session",
                status=400,
            )
        elif method == "logging/setLevel":
            await self._set_level(sid, request, send)
        elif method in ("resources/subscribe", "resources/unsubscribe"):
            await self._subscribe(sid, record, request, send)
        elif method in FORWARDED:
            await self._call(sid, session, request, caller, receive, send)
        else:
            await send_error(
                send,
                request.id,
                wire.METHOD_NOT_FOUND,
                f"method '{method}' is not served in protocol revision "
                f"{session.revision}",
            )

    async def _set_level(self, sid: str, request: Request, send: Send) -> None:
        params = request.params
        level = params.get("level") if isinstance(params, dict) else None
        if not isinstance(level, str) or level not in wire.LOG_LEVEL_RANK:
            await send_error(
                send,
                request.id,
                wire.INVALID_PARAMS,
                f"logging/setLevel needs params.level, one of {', '.join(wire.LOG_LEVELS)}",
            )
            return
        try:
            found = await self.hub.sessions.set_level(sid, level)
        except StoreUnavailable as exc:
            await send_unavailable(send, exc)
            return
        if not found:
            await send_gone(send, request.id)
            return
        await send_result(send, request.id, {})

    async def _subscribe(
        self, sid: str, record: Record, request: Request, send: Send
    ) -> None:
        resources = self.edge.dispatcher.capabilities.get("resources")
        subscribable = (
            isinstance(resources, dict) and resources.get("subscribe") is True
        )
        uri = subscription_uri(request, subscribable)
        if isinstance(uri, Fault):
            await send_error(send, request.id, uri.code, uri.message)
            return
        wanted = request.method == "resources/subscribe"
        try:
            changed = await self.hub.sessions.subscribe(sid, uri, wanted, self.limits)
        except TooManySubscriptions:
            await send_error(
                send,
                request.id,
                wire.INVALID_PARAMS,
                "this session already holds the most subscriptions it may; "
                "unsubscribe from some first",
            )
            return
        except StoreUnavailable as exc:
            await send_unavailable(send, exc)
            return
        if changed is None:
            await send_gone(send, request.id)
            return
        if changed:
            # The stream follows before the answer, so no update after it is lost.
            await self.hub.refresh(sid, record.stream)
        await send_result(send, request.id, {})

    # -- calls ---------------------------------------------------------------------------
    async def _call(
        self,
        sid: str,
        session: Session,
        request: Request,
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        """A forwarded request: through the app's edge, rounds and all, on its own
        response (JSON, or an event stream once something precedes the reply)."""
        try:
            params = modern_params(request.params, session)
        except BadParams as exc:
            await send_error(send, request.id, wire.INVALID_PARAMS, str(exc))
            return
        scope = trio.CancelScope()
        response = Response(send, scope, self.limits.keepalive_interval)
        cancelled: list[bool] = []

        def cancel() -> None:
            cancelled.append(True)
            scope.cancel()

        done = self.hub.running(sid, request.id, cancel)
        run = partial(self._rounds, sid, session, request, params, caller, response)
        try:
            await respond(run, response, receive)
        finally:
            done()
        if cancelled and scope.cancelled_caught:
            await response.abandon()

    async def _rounds(
        self,
        sid: str,
        session: Session,
        request: Request,
        params: JsonObject,
        caller: Caller,
        response: Response,
    ) -> Reply:
        """Serve the request, asking the client for what each round needs."""
        legacy, method, rounds = _legacy_caller(caller), request.method, 0
        while True:
            reply = await self.edge.handle(
                Request(request.id, method, params),
                legacy,
                response.emit,
                response.scope,
            )
            message = reply.message
            result = round_of(method, message)
            if result is None:
                out = legacy_reply(
                    request.id, method, params, message, session, self.output_schema
                )
                return http_reply(out, reply)
            try:
                responses = await self._round(sid, session, result, rounds, response)
            except RoundFailed as exc:
                error = wire.error_message(request.id, exc.code, str(exc), exc.data)
                return Reply(encode_message(error))
            params = next_params(params, result, responses)
            rounds += 1

    async def _round(
        self,
        sid: str,
        session: Session,
        result: JsonObject,
        rounds: int,
        response: Response,
    ) -> JsonObject:
        """Ask the client what one round needs; return the retry's ``inputResponses``.

        Raises:
            RoundFailed: when too many requests wait already, after ``MAX_ROUNDS``,
                or for an answer the round cannot use.
        """
        bound = self.limits.max_concurrent + self.limits.max_waiting
        if self.waiting >= bound:
            raise RoundFailed(
                wire.SERVER_BUSY,
                wire.busy_message(f"{bound} requests wait for client input"),
                {"retryable": True},
            )
        if rounds >= MAX_ROUNDS:
            raise RoundFailed(
                wire.INTERNAL_ERROR,
                f"the request asked for input {MAX_ROUNDS} times; it was stopped",
            )
        requests = client_requests(result, session)
        failed: RoundFailed | None = None
        responses: JsonObject = {}
        self.waiting += 1
        try:
            async with trio.open_nursery() as nursery:
                # The user may take minutes: keep proxies from closing the stream.
                nursery.start_soon(response.keep_alive)
                try:
                    responses = await drive_round(
                        requests, partial(self._ask, sid, response)
                    )
                except RoundFailed as exc:
                    failed = exc
                nursery.cancel_scope.cancel()
        finally:
            self.waiting -= 1
        if failed is not None:
            raise failed
        return responses

    async def _ask(
        self, sid: str, response: Response, request: ClientRequest
    ) -> Answer:
        """Send one server-to-client request on the POST's stream; wait for its answer."""
        request_id, asked = self.hub.ask(sid)
        message: JsonObject = {
            "jsonrpc": wire.JSONRPC,
            "id": request_id,
            "method": request.method,
            "params": request.params,
        }
        try:
            await response.emit(message)
            await asked.done.wait()
            return asked.answer
        finally:
            if self.hub.forget(request_id):
                # Not answered (another request of the round failed, or the call
                # ends): tell the client it need not answer.
                note = wire.notification_message(
                    "notifications/cancelled", {"requestId": request_id}
                )
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await response.emit(note)

    async def _send_reply(self, send: Send, reply: Reply) -> None:
        status = reply.http_status if reply.http_status in KEPT else 200
        await send_json(send, status, reply.body, list(reply.headers) or None)


def _legacy_caller(caller: Caller) -> Caller:
    """The caller of a translated request: no HTTP headers (the dispatcher's header
    checks are the 2026-07-28 routing headers, which handshake-era clients never send)."""
    return attrs.evolve(caller, headers=None)
