"""Streamable HTTP (revision 2026-07-28) as a framework-free ASGI 3 application.

Each POST carries one JSON-RPC message and gets its own response: ``application/json``
for a plain reply, ``text/event-stream`` once a progress or log notification precedes
the reply (the stream starts lazily at the first notification and the reply ends it).
There are no sessions, no GET stream and no event ids (MCP revision 2026-07-28, Streamable HTTP).

The HTTP-only checks run here, in this order (§4.2, pinned in places by the official
conformance suite): ``Origin`` (403), ``Host`` (421), the HTTP method (405),
authentication (401), the media types (415, 406; ``_media.py``), the body limit
read incrementally (413) within ``body_timeout`` (408), parsing (400), a
notification (202). The ``_meta``, version and routing-header checks belong to the
dispatcher, which receives the lower-cased headers in ``Caller.headers``.

Before any of them, a request that arrived on a local address that is not loopback
(``scope["server"]``) is refused with 500 unless ``require_auth=True``: the app
cannot see how its host bound the socket, but each request says where it arrived.
Opt-in extras: RFC 9728 protected resource metadata (``resource_metadata=``; a 401
then points to it) and CORS for browser clients (``cors_origins=``).

Invariants:
- A body is never buffered past ``max_message_bytes``.
- A client disconnect (``http.disconnect``) cancels the request's scope; after it
  nothing more is sent for that request.
- At most ``max_concurrent`` requests run handlers at once across all connections
  and ``max_waiting`` more wait for a slot; beyond that a call is answered at once
  with 503 and ``Retry-After`` (``_gate``).
- A ``subscriptions/listen`` request takes no slot: its response is a long SSE stream
  (acknowledgement first) with a ``:`` comment every ``keepalive_interval`` seconds
  of quiet. Closing the stream ends it; ``close()`` (or ASGI lifespan shutdown) ends
  every open one with the listen's result.

No web framework is imported: this works under Hypercorn's Trio worker and mounted
inside any ASGI router (Starlette's ``Mount``), which is why paths are resolved
relative to the scope's ``root_path``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any, Final, Unpack
from urllib.parse import urlsplit

import attrs
import trio

from .. import _metrics
from .._authority import Grants
from .._authority._bearer import Admission, Challenge
from .._changes import LISTEN_METHOD
from .._context import Exchange
from .._dispatch import Caller, Dispatcher, Reply
from .._errors import Transport
from .._http_options import HttpOptions, PrincipalResolver, http_limits
from .._json import JsonObject, encode_message
from .._loopback import LOOPBACK_HOSTS, arrived_on_loopback
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Notification, Request, parse_message
from ._access import (
    Cors,
    is_metadata_request,
    metadata_url,
    normalize_origins,
    request_base,
)
from ._bearer import StepUp, caller_of
from ._blocked import watch_blocking
from ._body import slow_body_fault
from ._disconnect import watch
from ._gate import BUSY_RETRY_AFTER, Gate, retry_after_header
from ._health import send_health
from ._interrupt import interrupts_unwrapped
from ._media import media_refusal
from ._stream import oversized_fault

__all__ = ["McpAsgiApp", "PrincipalResolver"]

log = logging.getLogger("trio_mcp.http")

# ASGI messages and scopes are plain dicts whose values vary by key; the ASGI
# specification, not us, forces this Any.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: A whole response, ready to send: what a check that refuses a request returns.
_Answer = Callable[[Send], Awaitable[None]]


HEALTH_PATH: Final = "/healthz"
_KEEPALIVE: Final = b":\n\n"

_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_CLOSE: Final = [(b"connection", b"close")]
_ALLOW_POST: Final = (b"allow", b"POST")
_POST_ONLY: Final = b"method not allowed: send JSON-RPC with POST\n"
_FORBIDDEN: Final = "forbidden: this Origin is not allowed"
_MISDIRECTED: Final = "misdirected request: this Host is not served here"
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def _split_host(value: str) -> tuple[str, str | None]:
    """Split ``host[:port]`` (IPv6 in brackets) into a lower-cased host and port."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, None


def _normalize_path(path: str) -> str:
    return "/" + path.strip("/")


class _Disconnected(Exception):
    """The client went away while its request body was being read."""


async def _cancel_on_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
    """Cancel ``scope`` when the client goes away; the request then ends quietly."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


@attrs.define
class _Response:
    """The HTTP response of one request: JSON, or SSE once a notification precedes it.

    The stream starts at the first notification; every write holds ``lock``, so a
    keep-alive comment never splits a message. Once ``scope`` is cancelled (the
    client left) nothing more is written.
    """

    send: Send
    scope: trio.CancelScope
    keepalive_interval: float
    streaming: bool = False
    last_write: float = attrs.field(factory=trio.current_time)
    lock: trio.Lock = attrs.field(factory=trio.Lock)

    async def emit(self, note: JsonObject) -> None:
        """Send a notification, starting the event stream if it is the first."""
        if self.scope.cancel_called:
            return
        await self._hold()
        try:
            await self._start_stream()
            await self._write(_sse(note))
        finally:
            self.lock.release()

    async def keep_alive(self) -> None:
        """Write a ``:`` comment after each ``keepalive_interval`` of quiet."""
        while True:
            await trio.sleep_until(self.last_write + self.keepalive_interval)
            async with self.lock:
                if trio.current_time() < self.last_write + self.keepalive_interval:
                    continue
                if self.streaming:
                    await self._write(_KEEPALIVE)
                self.last_write = trio.current_time()

    async def finish(self, reply: Reply, *, shield: bool = False) -> None:
        """Send the reply: the last event of a stream, or the whole JSON response.

        Taking the lock is a checkpoint, so a client that left (the scope is
        cancelled) gets nothing. Hypercorn ends the response inside the last
        ``send`` (re-arming the connection's idle timer, closing it for
        ``Connection: close`` or HTTP/1.0), and the ``http.disconnect`` that the
        finished response itself produces must not cancel that half-way: a request
        watched by ``_disconnect`` is no longer watched by then, and one with its
        own watcher task asks for ``shield`` (Hypercorn shields its socket writes
        anyway, so the shield adds no wait that was not there).
        """
        await self._hold()
        try:
            if shield:
                with trio.CancelScope(shield=True):
                    await self._send_reply(reply)
            else:
                await self._send_reply(reply)
        finally:
            self.lock.release()

    async def _send_reply(self, reply: Reply) -> None:
        if self.streaming:
            await self._write(_sse_data(reply.body), more=False)
            return
        extra = list(reply.headers) or None
        if extra is None and reply.http_status == 503:
            # Busy (the thread budget is spent): say when to retry.
            extra = [retry_after_header(BUSY_RETRY_AFTER)]
        await _json(self.send, reply.http_status, reply.body, extra)

    async def _hold(self) -> None:
        """Take the lock: at once when it is free (no scheduler pass), else wait.

        A checkpoint either way: a cancelled request raises here.
        """
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self.lock.acquire_nowait()
        except trio.WouldBlock:
            await self.lock.acquire()

    async def _start_stream(self) -> None:
        if not self.streaming:
            self.streaming = True
            start = {"type": "http.response.start", "status": 200}
            await self.send({**start, "headers": _SSE_HEADERS})

    async def _write(self, body: bytes, *, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": body, "more_body": more})
        self.last_write = trio.current_time()


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
        self.require_auth = options.get("require_auth", False)
        hosts = {h.strip().lower() for h in (options.get("allowed_hosts") or ())}
        self.any_host = "*" in hosts or not check_host
        self.allowed_hosts = frozenset(LOOPBACK_HOSTS | hosts)
        self.allowed_origins = normalize_origins(options.get("allowed_origins"))
        self.any_origin = "*" in self.allowed_origins
        self.cors = Cors(options.get("cors_origins"))
        """Origins whose browser pages may call (and read) this endpoint."""
        self.auth = options.get("auth")
        """Checks bearer tokens (``trio_mcp.auth.BearerAuth``); implies require_auth."""
        self.resource_metadata = options.get("resource_metadata")
        if self.auth is not None:
            self.require_auth = True
            self.resource_metadata = (
                self.resource_metadata or self.auth.resource_metadata
            )
        self._refusal_logged = False
        self.resolve_principal = options.get("principal")
        self.limits = http_limits(options)
        self.max_message_bytes = self.limits.max_message_bytes
        self.gate = Gate(self.limits, dispatcher, options.get("rate_limit"))
        """The call slots and waiting places (``max_concurrent``, ``max_waiting``)."""
        steps = [self.gate.admit]
        if self.auth is not None:
            steps.append(StepUp(self.auth))
        self.edge = dispatcher.edge(steps)
        """How calls come in: the gate's step, and the token's step-up with ``auth``."""
        metrics_path = options.get("metrics_path")
        self.metrics_path = (
            None if metrics_path is None else _normalize_path(metrics_path)
        )
        """Where Prometheus scrapes the metrics (GET), if anywhere."""
        if self.metrics_path is not None:
            _enable_metrics()
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
            await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            # Not ours (a websocket, say): close it the ASGI way.
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        if not self.require_auth and not arrived_on_loopback(scope):
            await self._refuse_insecure(scope, send)
            return
        headers = _headers(scope)
        send = self.cors.wrap(headers, send)
        route = self._route_path(scope)
        method = scope["method"]
        metadata = is_metadata_request(self.resource_metadata, scope, route, self.path)
        if method == "OPTIONS" and (route == self.path or metadata):
            answer = self.cors.preflight(headers, "GET" if metadata else "POST")
            if answer is not None:
                await _plain(send, 204, b"", answer)
                return
        if route == HEALTH_PATH and method in ("GET", "HEAD"):
            await send_health(send, head=method == "HEAD")
            return
        if metadata and method in ("GET", "HEAD"):
            await self._metadata(scope, headers, send)
            return
        if route == self.metrics_path and method in ("GET", "HEAD"):
            await _scrape(send)
            return
        if route != self.path:
            await _plain(send, 404, b"not found\n")
            return
        await self._serve_mcp(scope, headers, receive, send)

    def _route_path(self, scope: Scope) -> str:
        """The path below where this app is mounted (Starlette keeps the full path)."""
        path: str = scope.get("path", "/")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return _normalize_path(path)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        # The lifespan runs for the app's life: the broadcast (a RedisBroadcast holds
        # its connection) and the nursery tasks live in (tasks extension; cancelled
        # at shutdown). Hosts that skip lifespan enter ``broadcast.running()`` and
        # ``server.task_nursery()`` instead.
        # The blocked-loop watch (Limits.blocked_warning) lives as long.
        async with self.dispatcher.broadcast.running(), self.dispatcher.tasks.open():
            with watch_blocking(self.limits.blocked_warning):
                while True:
                    message = await receive()
                    if message["type"] == "lifespan.startup":
                        await send({"type": "lifespan.startup.complete"})
                    elif message["type"] == "lifespan.shutdown":
                        self.close()
                        await send({"type": "lifespan.shutdown.complete"})
                        return

    # -- binding, metadata and CORS ---------------------------------------------------
    async def _refuse_insecure(self, scope: Scope, send: Send) -> None:
        """500: this request arrived beyond loopback and nothing authenticates it."""
        if not self._refusal_logged:
            self._refusal_logged = True
            log.error(
                "refusing HTTP requests that arrive on %s (not loopback) because the "
                "app from Server.mount() has require_auth=False "
                "(McpError.InsecureBinding): mount it with require_auth=True behind "
                "the host's authentication, or serve it on 127.0.0.1 only; "
                "loopback requests are still served",
                scope.get("server"),
            )
        await _fault(
            send,
            500,
            "McpError.InsecureBinding: this server is reachable beyond loopback "
            "without authentication, so it refuses to serve; its operator must mount "
            "it with require_auth=True or serve it on 127.0.0.1",
            wire.INTERNAL_ERROR,
        )

    async def _metadata(
        self, scope: Scope, headers: dict[str, str], send: Send
    ) -> None:
        """The RFC 9728 document, for the resource identifier this request used."""
        assert self.resource_metadata is not None
        resource = f"{request_base(scope, headers)}{self.path}"
        await _json(
            send, 200, encode_message(self.resource_metadata.document(resource))
        )

    # -- the MCP endpoint ------------------------------------------------------------
    async def _serve_mcp(
        self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send
    ) -> None:
        refusal = self._gatekeep(scope, headers)
        admission = None
        if refusal is None:
            admission, refusal = await self._admit(scope, headers)
        principal = None if refusal else await self._principal(scope, admission)
        if refusal is None and self.require_auth and principal is None:
            refusal = self._challenge(scope, headers)
        unacceptable = None if refusal else media_refusal(headers)  # 415, 406
        if unacceptable is not None:
            status, text, extra = unacceptable
            refusal = partial(_fault, status=status, text=text, extra=extra)
        if refusal is not None:
            await refusal(send)
            return
        message = await self._read_message(headers, receive)
        if message is None:
            return  # the client left before sending its message: nothing to answer
        if not isinstance(message, Request):
            await message(send)
            return
        client = scope.get("client")
        caller = Caller(
            principal=principal,
            allow=self.allow,
            headers=headers,
            closing=self.closing,
            peer=str(client[0]) if client else None,
        )
        if admission is not None:
            caller = self._bearer_caller(admission, caller, scope, headers)
        await self._dispatch(message, caller, receive, send)

    async def _admit(
        self, scope: Scope, headers: dict[str, str]
    ) -> tuple[Admission | None, _Answer | None]:
        """The bearer token's admission, or the 401/403 refusing it (with ``auth``)."""
        if self.auth is None:
            return None, None
        admission = await self.auth.admit(headers.get("authorization"))
        if isinstance(admission, Challenge):
            return None, self._bearer_refusal(admission, scope, headers)
        return admission, None

    def _bearer_caller(
        self,
        admission: Admission,
        caller: Caller,
        scope: Scope,
        headers: dict[str, str],
    ) -> Caller:
        """The caller of an admitted token: its principal, grants and step-up."""
        assert self.auth is not None
        assert self.resource_metadata is not None
        where = metadata_url(self.resource_metadata, scope, headers, self.path)
        return caller_of(admission, caller, self.auth, where)

    def _bearer_refusal(
        self, challenge: Challenge, scope: Scope, headers: dict[str, str]
    ) -> _Answer:
        """The 401 or 403 of a ``Challenge`` (RFC 6750 §3), naming the metadata."""
        assert self.resource_metadata is not None
        where = metadata_url(self.resource_metadata, scope, headers, self.path)
        return partial(
            _fault,
            status=challenge.status,
            text=challenge.description,
            code=wire.UNAUTHENTICATED if challenge.status == 401 else wire.REFUSED,
            extra=[(b"www-authenticate", challenge.header(where))],
        )

    def _gatekeep(self, scope: Scope, headers: dict[str, str]) -> _Answer | None:
        """The answer refusing a bad ``Origin`` (403), ``Host`` (421) or method (405)."""
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return partial(_fault, status=403, text=_FORBIDDEN)
        if not self.any_host and not self._host_allowed(headers.get("host")):
            return partial(_fault, status=421, text=_MISDIRECTED)
        if scope["method"] != "POST":
            return partial(_plain, status=405, body=_POST_ONLY, extra=[_ALLOW_POST])
        return None

    def _challenge(self, scope: Scope, headers: dict[str, str]) -> _Answer:
        """The 401 for a request without a principal, naming the RFC 9728 metadata."""
        described = self.resource_metadata
        challenge = (
            b"Bearer"
            if described is None
            else described.challenge(metadata_url(described, scope, headers, self.path))
        )
        return partial(
            _fault,
            status=401,
            text="authentication required",
            code=wire.UNAUTHENTICATED,
            extra=[(b"www-authenticate", challenge)],
        )

    async def _read_message(
        self, headers: dict[str, str], receive: Receive
    ) -> Request | _Answer | None:
        """The request in the body, the answer refusing it, or None if the client left."""
        try:
            # move_on_after is a plain CancelScope; fail_after wraps one in a
            # generator-based context manager, which this per-request path avoids.
            with trio.move_on_after(self.limits.body_timeout) as deadline:
                body = await self._read_body(headers, receive)
        except _Disconnected:
            return None
        if deadline.cancelled_caught:  # a trickled body: 408, the connection closes
            fault = slow_body_fault(self.limits.body_timeout)
            encoded = encode_message(fault.to_message())
            return partial(_json, status=fault.http_status, body=encoded, extra=_CLOSE)
        if body is None:
            # The rest of the body is never read, so the connection cannot carry
            # another request: say so, or a keep-alive client sends its next request
            # on it while the server closes it, and that request is lost.
            fault = oversized_fault(self.max_message_bytes)
            encoded = encode_message(fault.to_message())
            return partial(_json, status=fault.http_status, body=encoded, extra=_CLOSE)
        message = parse_message(body, max_depth=self.limits.max_depth)
        if isinstance(message, Fault):
            encoded = encode_message(message.to_message())
            return partial(_json, status=message.http_status, body=encoded)
        if isinstance(message, Notification):
            # No client notification means anything over HTTP (cancellation is a
            # closed stream); accept without header requirements (§12, [INFERRED]).
            return partial(_plain, status=202, body=b"")
        return message

    async def _dispatch(
        self, request: Request, caller: Caller, receive: Receive, send: Send
    ) -> None:
        scope = trio.CancelScope()
        response = _Response(send, scope, self.limits.keepalive_interval)
        # A listen stream is long by nature: watched (and kept alive) from its start.
        watched = None if request.method == LISTEN_METHOD else watch(receive, scope)
        if watched is None:
            await self._dispatch_watching(request, caller, receive, response)
        else:
            with scope:
                try:
                    reply = await self._handle(request, caller, response)
                finally:
                    watched.done()
                await response.finish(reply)
        # Whatever still runs for this request (an abandoned worker thread) now
        # sees ``ctx.cancel`` fire.
        scope.cancel()

    async def _dispatch_watching(
        self, request: Request, caller: Caller, receive: Receive, response: _Response
    ) -> None:
        """Run the request beside its own disconnect watcher (and keep-alive comments)."""
        scope = response.scope
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_cancel_on_disconnect, receive, scope)
            with scope:
                if request.method == LISTEN_METHOD:
                    nursery.start_soon(response.keep_alive)
                reply = await self._handle(request, caller, response)
                await response.finish(reply, shield=True)
            nursery.cancel_scope.cancel()

    async def _handle(
        self, request: Request, caller: Caller, response: _Response
    ) -> Reply:
        """Run the request through the app's edge; then give back what it held (a
        call's slot)."""
        exchange = Exchange(response.emit, response.scope)
        try:
            return await self.edge.handle(request, caller, exchange)
        finally:
            exchange.release()

    # -- checks --------------------------------------------------------------------
    def _host_allowed(self, value: str | None) -> bool:
        if value is None:
            return False
        host, port = _split_host(value)
        return host in self.allowed_hosts or f"{host}:{port}" in self.allowed_hosts

    def _origin_allowed(self, origin: str) -> bool:
        if self.cors.allows(origin):
            return True
        origin = origin.strip().lower().rstrip("/")
        if self.any_origin or origin in self.allowed_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False
        host, port = _split_host(parts.netloc)
        return host in self.allowed_hosts or f"{host}:{port}" in self.allowed_hosts

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

    async def _read_body(
        self, headers: dict[str, str], receive: Receive
    ) -> bytes | None:
        """Read the body, or return None as soon as it exceeds the limit."""
        declared = headers.get("content-length")
        if (
            declared is not None
            and declared.strip().isdigit()
            and int(declared) > self.max_message_bytes
        ):
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.max_message_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _enable_metrics() -> None:
    """Start recording for ``metrics_path``; a missing extra fails at once.

    Raises:
        McpError.Transport: if prometheus-client is not installed.
    """
    try:
        _metrics.enable_prometheus()
    except ImportError as exc:
        raise Transport(
            "metrics_path needs prometheus-client; install it with: "
            'pip install "trio-mcp[metrics]"'
        ) from exc


async def _scrape(send: Send) -> None:
    """The metrics in the Prometheus text format."""
    body, content_type = _metrics.prometheus_text()
    headers = [
        (b"content-type", content_type.encode("ascii")),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _headers(scope: Scope) -> dict[str, str]:
    """Return the request headers with lower-cased names; repeats are comma-joined.

    ASGI gives byte strings (``bytes`` or ``bytearray``; both decode without a copy).
    """
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in out:
            out[name] = f"{out[name]},{value}"
        else:
            out[name] = value
    return out


def _sse(message: JsonObject) -> bytes:
    return _sse_data(encode_message(message))


def _sse_data(data: bytes) -> bytes:
    return b"data: " + data + b"\n\n"


async def _json(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *_JSON_HEADERS,
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-length", str(len(body)).encode()), *(extra or [])]
    if body:
        headers.append((b"content-type", b"text/plain; charset=utf-8"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _fault(
    send: Send,
    status: int,
    text: str,
    code: int | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Refuse before parsing: a JSON-RPC error without id (it is not read yet)."""
    message = wire.error_message(
        None, code if code is not None else wire.INVALID_REQUEST, text
    )
    body = encode_message(message)
    headers = [
        *_JSON_HEADERS,
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
