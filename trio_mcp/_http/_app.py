"""Streamable HTTP (revision 2026-07-28) as a framework-free ASGI 3 application.

Each POST carries one JSON-RPC message and gets its own response (``_response``):
JSON, or SSE once a notification precedes the reply. There are no sessions, no GET
stream and no event ids (MCP revision 2026-07-28, Streamable HTTP).

The HTTP-only checks run here, in this order (§4.2, pinned in places by the official
conformance suite): ``Origin`` (403), ``Host`` (421), the HTTP method (405)
(``_access``), authentication (401, ``_oauth``), the media types (415, 406;
``_media``), the body limit read incrementally (413) within ``body_timeout`` (408),
parsing (400), a notification (202) (``_body``). The ``_meta``, version and
routing-header checks belong to the dispatcher, which receives the lower-cased
headers in ``Caller.headers``; what the app decides per call (room for it, its rate
limit, a token's step-up) are steps of the app's edge (``_gate``, ``_oauth``).

Before any of them, a request that arrived on a local address that is not loopback
(``scope["server"]``) is refused with 403 unless ``require_auth=True``: the app
cannot see how its host bound the socket, but each request says where it arrived.
Opt-in extras: RFC 9728 protected resource metadata (``resource_metadata=``; a 401
then points to it), CORS for browser clients (``cors_origins=``), Prometheus metrics
(``metrics_path=``).

Invariants:
- A body is never buffered past ``max_message_bytes``.
- A client disconnect (``http.disconnect``) cancels the request's scope; after it
  nothing more is sent for that request.
- At most ``max_concurrent`` calls run handlers at once across all connections and
  ``max_waiting`` more wait for a slot; beyond that a call is answered at once
  with 503 and ``Retry-After`` (``_gate``).
- A ``subscriptions/listen`` request takes no slot: its response is a long SSE stream
  (acknowledgement first) with a ``:`` comment every ``keepalive_interval`` seconds
  of quiet. At most ``max_listens`` are open per caller and ``max_listens_total``
  in all; one more is answered at once with 503 and ``Retry-After`` (``_listens``). Closing the stream ends it; ``close()`` (or ASGI lifespan shutdown) ends
  every open one with the listen's result.

No web framework is imported: this works under Hypercorn's Trio worker and mounted
inside any ASGI router (Starlette's ``Mount``), which is why paths are resolved
relative to the scope's ``root_path``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final, Unpack

import trio

from .. import _metrics
from .._authority import Grants
from .._blocked import watch_blocking
from .._changes import LISTEN_METHOD
from .._dispatch import Caller, Dispatcher, Reply
from .._dispatch._call import BUSY_RETRY_AFTER
from .._interrupt import interrupts_unwrapped
from .._json import encode_message
from .._loopback import arrived_on_loopback
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Request, busy_fault
from ._access import Access
from ._body import read_message
from ._disconnect import cancel_on_disconnect, watch
from ._forwarded import ClientAddresses, caller_key
from ._gate import Gate
from ._health import enable_metrics, send_health, send_metrics
from ._listens import ListenBounds, descriptor_budget
from ._media import media_refusal
from ._oauth import Admission, Protection
from ._options import HttpOptions, PrincipalResolver, http_limits
from ._response import (
    Receive,
    Response,
    Scope,
    Send,
    request_headers,
    retry_after_header,
    send_fault,
    send_json,
    send_plain,
)

__all__ = ["McpAsgiApp", "PrincipalResolver", "Run"]

log = logging.getLogger("trio_mcp.http")

HEALTH_PATH: Final = "/healthz"

Run = Callable[[Request, Caller, Response], Awaitable[Reply]]
"""What answers a request on its response (``McpAsgiApp.dispatch``)."""


def _normalize_path(path: str) -> str:
    return "/" + path.strip("/")


class McpAsgiApp:
    """An ASGI 3 application serving one ``Dispatcher`` over Streamable HTTP.

    Built by ``Server.mount``; see there for the arguments.
    """

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        path: str = "/mcp",
        check_host: bool = True,
        **options: Unpack[HttpOptions],
    ) -> None:
        self.dispatcher = dispatcher
        self.path = _normalize_path(path)
        self.allow: Grants = options.get("allow", ())
        self.access = Access(
            check_host=check_host,
            allowed_hosts=options.get("allowed_hosts"),
            allowed_origins=options.get("allowed_origins"),
            cors_origins=options.get("cors_origins"),
        )
        """The ``Host`` and ``Origin`` rules, and CORS."""
        auth = options.get("auth")
        self.protection = Protection(
            auth, options.get("resource_metadata"), self.path, dispatcher.store
        )
        """Bearer tokens (``auth=``, which implies ``require_auth``) and RFC 9728."""
        self.require_auth = options.get("require_auth", False) or auth is not None
        self._refusal_logged = False
        self.resolve_principal = options.get("principal")
        self.limits = http_limits(options)
        rate_limit = options.get("rate_limit")
        self.addresses = ClientAddresses.of(
            options.get("trusted_proxies"),
            options.get("forwarded_header"),
            rate_limit,
        )
        """Whose forwarding header names the client, and which header."""
        self.gate = Gate(self.limits, dispatcher, rate_limit)
        """The call slots and waiting places (``max_concurrent``, ``max_waiting``)."""
        self.listens = ListenBounds(self.limits, descriptor_budget())
        """The open listen streams, per caller and in all."""
        self.edge = dispatcher.edge(self.protection.steps, admission=self.gate)
        """How calls come in: the gate's step, and the token's step-up with ``auth``."""
        metrics_path = options.get("metrics_path")
        self.metrics_path = (
            None if metrics_path is None else _normalize_path(metrics_path)
        )
        """Where Prometheus scrapes the metrics (GET), if anywhere."""
        if self.metrics_path is not None:
            enable_metrics()
        self.closing = trio.Event()
        """Set by ``close()``: open listen streams end with their result."""

    def close(self) -> None:
        """Shut down gracefully: every open listen stream gets its result and ends.

        Requests keep being served; call it when the HTTP server is about to stop.
        """
        self.closing.set()

    # -- entry point ---------------------------------------------------------------
    @trio.lowlevel.enable_ki_protection
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection scope.

        Protected from ``KeyboardInterrupt`` (Trio then raises Ctrl-C in the main
        task at its next checkpoint, whose cancellation ends this request): raised
        at an arbitrary point of a request, it could leave the ASGI server's
        connection state half-changed, and Hypercorn's error handling then replaced
        it with its own error. An interrupt raised anyway (by a handler) leaves
        bare: in an exception group the ASGI server would log it as the app's error
        and serve on.
        """
        with interrupts_unwrapped():
            await self.serve(scope, receive, send)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection scope, unprotected (an app in front of this
        one protects it)."""
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            # Not ours (a websocket, say): close it the ASGI way.
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        opened = await self.open(scope, send)
        if opened is None:
            return
        headers, send = opened
        route = self.route_of(scope)
        method = scope["method"]
        metadata = self.protection.is_metadata_request(scope, route)
        if method == "OPTIONS" and (route == self.path or metadata):
            cors = self.access.cors
            answer = cors.preflight(headers, "GET" if metadata else cors.methods)
            if answer is not None:
                await send_plain(send, 204, b"", answer)
                return
        if route == HEALTH_PATH and method in ("GET", "HEAD"):
            await send_health(send, head=method == "HEAD")
            return
        if metadata and method in ("GET", "HEAD"):
            await self.protection.send_metadata(scope, headers, send)
            return
        if route == self.metrics_path and method in ("GET", "HEAD"):
            await send_metrics(send)
            return
        if route != self.path:
            await send_plain(send, 404, b"not found\n")
            return
        await self._serve_mcp(scope, headers, receive, send)

    async def open(
        self, scope: Scope, send: Send
    ) -> tuple[dict[str, str], Send] | None:
        """An HTTP request's headers and its ``send`` (CORS headers added); None
        once a request beyond loopback that nothing authenticates is refused."""
        if not self.require_auth and not arrived_on_loopback(scope):
            await self._refuse_insecure(scope, send)
            return None
        headers = request_headers(scope)
        return headers, self.access.cors.wrap(headers, send)

    def route_of(self, scope: Scope) -> str:
        """The path below where this app is mounted (Starlette keeps the full path)."""
        path: str = scope.get("path", "/")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return _normalize_path(path)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        # The lifespan runs for the app's life: the broadcast (a RedisBroadcast holds
        # its connection) and the nursery tasks live in (tasks extension; cancelled
        # at shutdown; a gateway's upstreams, followed). Hosts that skip lifespan
        # enter ``broadcast.running()`` and
        # ``server.task_nursery()`` instead. The blocked-loop watch
        # (Limits.blocked_warning) lives as long.
        async with self.dispatcher.broadcast.running(), self.dispatcher.open():
            with watch_blocking(self.limits.blocked_warning):
                while True:
                    message = await receive()
                    if message["type"] == "lifespan.startup":
                        await send({"type": "lifespan.startup.complete"})
                    elif message["type"] == "lifespan.shutdown":
                        self.close()
                        await send({"type": "lifespan.shutdown.complete"})
                        return

    async def _refuse_insecure(self, scope: Scope, send: Send) -> None:
        """403: this request arrived beyond loopback and nothing authenticates it.

        The answer names both ways out: authentication (``require_auth=True``, or
        ``auth=``) for a server meant to be reached, and ``allowed_hosts`` for the
        names a server behind a local proxy is reached by (the proxy then connects
        from loopback).
        """
        if not self._refusal_logged:
            self._refusal_logged = True
            log.error(
                "refusing HTTP requests that arrive on %s (not loopback) because the "
                "app from Server.mount() has require_auth=False "
                "(McpError.InsecureBinding): mount it with require_auth=True (or "
                "auth=) behind the host's authentication, or serve it on 127.0.0.1 "
                "only, behind a proxy on the same machine, with allowed_hosts naming "
                "the names it is reached by; loopback requests are still served",
                scope.get("server"),
            )
        await send_fault(
            send,
            403,
            "forbidden (McpError.InsecureBinding): this server is reachable beyond "
            "loopback without authentication, so it refuses to serve; its operator "
            "must mount it with require_auth=True (or auth=), or serve it on "
            "127.0.0.1 behind a proxy with allowed_hosts naming the names it is "
            "reached by",
            wire.INTERNAL_ERROR,
        )

    # -- the MCP endpoint ------------------------------------------------------------
    async def _serve_mcp(
        self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        caller = await self.admit(scope, headers, send)
        if caller is None:
            return
        message = await read_message(headers, receive, self.limits)
        if message is None:
            return  # the client left before sending its message: nothing to answer
        if not isinstance(message, Request):
            await message(send)
        elif message.method == LISTEN_METHOD:  # as serve_request, one frame less
            await self._listen(message, caller, receive, send)
        else:
            await self.dispatch(message, caller, receive, send)

    async def admit(
        self,
        scope: Scope,
        headers: dict[str, str],
        send: Send,
        *,
        session: bool = False,
    ) -> Caller | None:
        """The caller of a request to the endpoint, once ``Origin``, ``Host``, the
        method, the token and the media types are checked; None once refused.

        A handshake-era ``session``'s request may be a ``GET`` or ``DELETE``, and
        its caller carries no headers (the dispatcher's header checks are the
        2026-07-28 routing headers, which handshake-era clients never send).
        """
        refusal = self.access.refusal(scope, headers, session=session)
        admission = None
        if refusal is None:
            admission, refusal = await self.protection.admit(scope, headers)
        principal = None if refusal else await self._principal(scope, admission)
        if refusal is None and self.require_auth and principal is None:
            refusal = self.protection.challenge(scope, headers)
        post = scope["method"] == "POST"
        unacceptable = None if refusal or not post else media_refusal(headers)
        if unacceptable is not None:
            status, text, extra = unacceptable
            refusal = partial(send_fault, status=status, text=text, extra=extra)
        if refusal is not None:
            await refusal(send)
            return None
        return self._caller(scope, headers, principal, admission, session)

    async def serve_request(
        self, request: Request, caller: Caller, receive: Receive, send: Send
    ) -> None:
        """Answer a 2026-07-28 request read from the body."""
        if request.method == LISTEN_METHOD:
            await self._listen(request, caller, receive, send)
        else:
            await self.dispatch(request, caller, receive, send)

    def _caller(
        self,
        scope: Scope,
        headers: dict[str, str],
        principal: object | None,
        admission: Admission | None,
        session: bool,
    ) -> Caller:
        client = scope.get("client")
        caller = Caller(
            principal=principal,
            allow=self.allow,
            headers=None if session else headers,
            closing=self.closing,
            peer=self.addresses.client(str(client[0]) if client else None, headers),
        )
        if admission is not None:
            caller = self.protection.caller(admission, caller, scope, headers)
        return caller

    async def _listen(
        self, request: Request, caller: Caller, receive: Receive, send: Send
    ) -> None:
        """A listen stream, counted while it is open; one past the bounds is
        answered at once with 503 (``_listens``)."""
        key = caller_key(caller.principal, caller.peer)
        refusal = self.listens.refusal(key)
        if refusal is not None:
            _metrics.count("busy", LISTEN_METHOD)
            fault = busy_fault(request, refusal)
            body = encode_message(fault.to_message())
            await send_json(send, 503, body, [retry_after_header(BUSY_RETRY_AFTER)])
            return
        with self.listens.held(key):
            await self.dispatch(request, caller, receive, send)

    async def _principal(
        self, scope: Scope, admission: Admission | None
    ) -> object | None:
        if isinstance(admission, Admission):
            return admission.principal
        if self.resolve_principal is not None:
            found = self.resolve_principal(scope)
            if inspect.isawaitable(found):
                found = await found
            return found
        if "user" in scope:
            user: object | None = scope["user"]
            # Starlette's AuthenticationMiddleware puts an UnauthenticatedUser here.
            if user is None or getattr(user, "is_authenticated", True) is False:
                return None
            return user
        auth: object | None = scope.get("auth")
        return auth

    async def dispatch(
        self,
        request: Request,
        caller: Caller,
        receive: Receive,
        send: Send,
        run: Run | None = None,
    ) -> Response:
        """Answer ``request`` on its own response, cancelled if the client leaves;
        ``run`` answers it (by default through the app's edge). Returns the
        response, finished."""
        scope = trio.CancelScope()
        response = Response(send, scope, self.limits.keepalive_interval)
        run = run or self._handle
        # A listen stream is long by nature: watched (and kept alive) from its start.
        watched = None if request.method == LISTEN_METHOD else watch(receive, scope)
        if watched is None:
            await self._dispatch_watching(request, caller, receive, response, run)
        else:
            with scope:
                try:
                    reply = await run(request, caller, response)
                finally:
                    watched.done()
                await response.finish(reply)
        # Whatever still runs for this request (an abandoned worker thread) now
        # sees ``ctx.cancel`` fire.
        scope.cancel()
        return response

    async def _dispatch_watching(
        self,
        request: Request,
        caller: Caller,
        receive: Receive,
        response: Response,
        run: Run,
    ) -> None:
        """Run the request beside its own disconnect watcher (and keep-alive comments)."""
        scope = response.scope
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_on_disconnect, receive, scope)
            with scope:
                if request.method == LISTEN_METHOD:
                    nursery.start_soon(response.keep_alive)
                reply = await run(request, caller, response)
                await response.finish(reply, shield=True)
            nursery.cancel_scope.cancel()

    async def _handle(
        self, request: Request, caller: Caller, response: Response
    ) -> Reply:
        """Run the request through the app's edge (which gives back a call's slot
        once the request is answered)."""
        return await self.edge.handle(request, caller, response.emit, response.scope)
