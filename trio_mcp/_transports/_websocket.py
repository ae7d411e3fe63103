"""JSON-RPC over WebSocket, one message per text frame, for the ``[websocket]`` extra.

This module owns the handshake (path, subprotocol ``mcp``) and the framing; each
connection feeds its own ``serve_messages`` loop, so the limits, the concurrency cap
and ``notifications/cancelled`` behave exactly as on stdio. trio-websocket is
imported inside ``serve_websocket``, so ``import trio_mcp`` never loads it.

Invariants:
- A connection's failure or close ends that connection only, never the server.
- Closing the connection cancels its requests at once (nobody is left to read
  their replies), as a closed stream does on Streamable HTTP (spec §11).
- A browser page may open a WebSocket to loopback from any site, so a handshake
  whose ``Origin`` is neither loopback nor in ``allowed_origins`` is refused with
  403 (as Streamable HTTP does against DNS rebinding). Without ``Origin`` the
  client is not a browser and passes. ``Host`` is checked as ``serve_http`` checks
  it (``allowed_hosts``, loopback names; off beyond loopback unless given): a
  foreign one is 421 before the handshake completes, so a rebound DNS name cannot
  reach a loopback server from a page either.
- Serving beyond loopback needs authentication, as ``serve_http`` does:
  ``Server.serve_websocket`` refuses the bind otherwise (``InsecureBinding``).
  With ``auth=``, the handshake's ``Authorization`` bearer token is checked by the
  pieces Streamable HTTP uses (``_http._oauth``): refused, the handshake is
  answered 401 (or 403) with ``WWW-Authenticate``; admitted, the token is checked
  again for every call and the connection is closed (1008) when it expires.
  ``rate_limit=`` takes a token per call from the caller's bucket
  (``_http._gate.RateLimiter``): over it, the call is -32000 with its retry data.
- A message over ``max_message_bytes`` (UTF-8) is answered with -32600 and the
  connection goes on. trio-websocket assembles a whole message before handing it
  over, so it is given a hard cap of twice the limit: past that it closes the
  connection with 1009, which bounds memory per connection. The server then reads
  (and drops) what the client still sends until its Close frame, and only then
  closes TCP: closing with the client's frames unread makes the kernel reset the
  connection, and a client still sending would see an abnormal close (1006).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs
import trio

from .._authority import Grants
from .._dispatch import Caller, Dispatcher, Middleware
from .._dispatch._dispatcher import Edge as DispatchEdge
from .._errors import Transport, install_hint
from .._http._access import Access
from .._http._forwarded import ClientAddresses
from .._http._gate import RateLimiter
from .._http._oauth import BearerGate, Challenge, Presented, Protection
from .._http._options import PrincipalResolver
from .._http._response import request_headers
from .._limits import Limits
from .._loopback import is_loopback_name
from .._rate_limit import RateLimit
from ._stream import (
    Oversized,
    first_exception,
    one_by_one,
    serve_messages,
    stream_caller,
)

if TYPE_CHECKING:
    from trio_websocket import WebSocketConnection, WebSocketRequest

__all__ = ["SUBPROTOCOL", "Rejection", "WebSocketEndpoint", "serve_websocket"]

SUBPROTOCOL = "mcp"
#: WebSocket close code "Message Too Big" (RFC 6455 §7.4.1).
TOO_BIG = 1009
#: WebSocket close code "Policy Violation" (RFC 6455 §7.4.1): the token expired.
POLICY = 1008
#: Seconds a connection closed with 1009 waits for the client's Close frame.
CLOSE_WAIT = 5.0


def _origins(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values)


@attrs.frozen
class Rejection:
    """A refused handshake: its HTTP status, headers and body."""

    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ()


@attrs.define(eq=False)
class WebSocketEndpoint:
    """What every connection of one listener shares: the catalog and its settings.

    ``auth`` checks the bearer token of each handshake (and of each call again:
    a connection may outlive its token); ``principal`` resolves one from the
    handshake's ASGI-shaped scope otherwise; ``require_auth`` (implied by
    ``auth``) refuses a handshake without a principal with 401. ``rate_limit`` is
    a token bucket per caller (principal, else client address behind
    ``addresses``' trusted proxies), taken by each call.
    """

    dispatcher: Dispatcher
    path: str
    limits: Limits
    allow: Grants = ()
    allowed_origins: frozenset[str] = attrs.field(default=(), converter=_origins)
    allowed_hosts: Iterable[str] | None = None
    check_host: bool = True
    """Whether ``Host`` is checked (a loopback bind, or ``allowed_hosts`` given)."""
    auth: BearerGate | None = None
    require_auth: bool = False
    principal: PrincipalResolver | None = None
    rate_limit: RateLimit | None = None
    addresses: ClientAddresses = attrs.field(factory=ClientAddresses)
    protection: Protection = attrs.field(init=False)
    """The OAuth side (``_http._oauth``), shared with Streamable HTTP."""
    through: DispatchEdge = attrs.field(init=False)
    """The dispatcher's edge of every connection: the rate limit, the token's
    checks."""
    hosts: Access = attrs.field(init=False)
    """The ``Host`` rule, shared with Streamable HTTP (``_http._access``)."""

    def __attrs_post_init__(self) -> None:
        self.hosts = Access(
            check_host=self.check_host,
            allowed_hosts=self.allowed_hosts,
            allowed_origins=None,
            cors_origins=None,
        )
        self.require_auth = self.require_auth or self.auth is not None
        self.protection = Protection(self.auth, None, self.path)
        steps: list[Middleware] = list(self.protection.stream_steps[:1])
        if self.rate_limit is not None:
            steps.append(RateLimiter(self.rate_limit, self.dispatcher).step)
        steps.extend(self.protection.stream_steps[1:])
        self.through = self.dispatcher.edge(steps)

    def refusal(self, request: WebSocketRequest) -> tuple[int, bytes] | None:
        """The status and body refusing a handshake, or None to accept it."""
        origin = next((v for k, v in request.headers if k.lower() == b"origin"), None)
        if origin is not None and not origin_allowed(
            origin.decode("latin-1"), self.allowed_origins
        ):
            return 403, (
                b"cross-origin WebSocket connections are refused; add the origin "
                b"to allowed_origins to permit it\n"
            )
        if not self.hosts.any_host and not self.hosts.host_allowed(_host(request)):
            return 421, (
                b"misdirected request: this Host is not served here; a server "
                b"reached by another name lists it in allowed_hosts\n"
            )
        if urlsplit(request.path).path != self.path:
            return 404, b"no MCP endpoint at this path\n"
        offered = request.proposed_subprotocols
        if offered and SUBPROTOCOL not in offered:
            return 400, b"offer the WebSocket subprotocol 'mcp' to speak MCP\n"
        return None

    async def admit(self, request: WebSocketRequest) -> Caller | Rejection:
        """The caller of a handshake (its principal, grants, address), or the 401
        or 403 refusing it."""
        scope = handshake_scope(request)
        headers = request_headers(scope)
        client = scope["client"]
        peer = self.addresses.client(client[0] if client else None, headers)
        base = attrs.evolve(stream_caller(self.allow), peer=peer)
        if self.auth is not None:
            authorization = headers.get("authorization")
            admission = await self.auth.admit(authorization)
            where = self.protection.metadata_url(scope, headers)
            if isinstance(admission, Challenge):
                header = (b"www-authenticate", admission.header(where))
                body = admission.description.encode("utf-8") + b"\n"
                return Rejection(admission.status, body, (header,))
            caller = self.protection.caller(admission, base, scope, headers)
            assert authorization is not None
            token = Presented(admission, where, authorization)
            return attrs.evolve(caller, credentials=token)
        principal = None
        if self.principal is not None:
            principal = self.principal(scope)
            if inspect.isawaitable(principal):
                principal = await principal
        if principal is None and self.require_auth:
            return Rejection(401, b"authentication required\n")
        return attrs.evolve(base, principal=principal)

    async def handshake(self, request: WebSocketRequest) -> None:
        """Refuse the handshake or accept it and serve the connection."""
        from trio_websocket import ConnectionClosed

        # trio-websocket lets a handler's exception end the whole listener, and
        # accept or reject raise ConnectionClosed when the client already left.
        with contextlib.suppress(ConnectionClosed):
            refused = self.refusal(request)
            if refused is not None:
                await request.reject(refused[0], body=refused[1])
                return
            admitted = await self.admit(request)
            if isinstance(admitted, Rejection):
                await request.reject(
                    admitted.status,
                    extra_headers=list(admitted.headers),
                    body=admitted.body,
                )
                return
            # A client offering no subprotocol is accepted too (our choice):
            # simple tools rarely set one, and the path already names the endpoint.
            offered = request.proposed_subprotocols
            ws = await request.accept(subprotocol=SUBPROTOCOL if offered else None)
            await serve_connection(self, ws, admitted)


def handshake_scope(request: WebSocketRequest) -> dict[str, Any]:
    """The handshake as an ASGI ``websocket`` scope, so one ``principal=`` resolver
    serves HTTP and WebSocket alike."""
    target = urlsplit(request.path)
    return {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "scheme": "ws",
        "path": target.path,
        "raw_path": target.path.encode("latin-1", "replace"),
        "query_string": target.query.encode("latin-1", "replace"),
        "root_path": "",
        "headers": [
            *([(b"host", host.encode("latin-1"))] if (host := _host(request)) else []),
            *((k.lower(), v) for k, v in request.headers),
        ],
        "client": _endpoint(request, "remote"),
        "server": _endpoint(request, "local"),
        "subprotocols": list(request.proposed_subprotocols),
    }


def _host(request: WebSocketRequest) -> str | None:
    """The handshake's ``Host``. wsproto parses it out of the headers into its
    ``Request`` event's ``host``, and trio-websocket's request exposes only the
    other headers, so it is read from the event."""
    event = getattr(request, "_event", None)
    host = getattr(event, "host", None)
    return host if isinstance(host, str) else None


def _endpoint(request: WebSocketRequest, which: str) -> tuple[str, int] | None:
    """The handshake's ``remote`` or ``local`` address and port, if it has one
    (a Unix socket has none; a client that already left has none)."""
    try:
        found = getattr(request, which)
    except OSError:
        return None
    if isinstance(found, str):
        return None
    return str(found.address), int(found.port)


async def serve_websocket(
    endpoint: WebSocketEndpoint,
    *,
    host: str,
    port: int,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept WebSocket connections at ``endpoint.path`` until cancelled.

    Raises:
        McpError.Transport: if trio-websocket is missing or the port cannot be bound.
    """
    try:
        import trio_websocket
    except ImportError as exc:
        raise Transport(
            f"serve_websocket needs trio-websocket; {install_hint('websocket')}"
        ) from exc

    listen = functools.partial(
        trio_websocket.serve_websocket,
        endpoint.handshake,
        host,
        port,
        None,
        max_message_size=2 * endpoint.limits.max_message_bytes,
    )
    try:
        async with (
            endpoint.dispatcher.broadcast.running(),
            trio.open_nursery() as nursery,
        ):
            task_status.started(await _bind(nursery, listen))
    except* Transport as group:
        # A new exception: re-raising a member of the group would re-wrap it.
        failure = first_exception(group)
        raise Transport(str(failure)) from failure.__cause__


async def _bind(nursery: trio.Nursery, listen: Callable[..., Awaitable[object]]) -> int:
    """Start trio-websocket's listener in ``nursery``; return the port it bound.

    Raises:
        McpError.Transport: if the port cannot be bound.
    """
    try:
        server = await nursery.start(listen)
    except OSError as exc:
        raise Transport(
            "cannot listen for WebSocket connections on the requested host "
            "and port; pick a free port (0 picks one) or another host"
        ) from exc
    port: int = server.port
    return port


async def serve_connection(
    endpoint: WebSocketEndpoint, ws: WebSocketConnection, caller: Caller
) -> None:
    """Serve one accepted connection until it closes; never raises for a closed one.

    A connection whose token names its expiry (``exp``) is closed then (1008):
    what it subscribed to must not outlive the token.
    """
    with trio.move_on_at(_expiry(caller)) as expired:
        await _serve_connection(endpoint, ws, caller)
    if expired.cancelled_caught:
        from trio_websocket import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):
            await ws.aclose(POLICY, "the token expired; reconnect with a new one")


def _expiry(caller: Caller) -> float:
    """When the connection's token expires, on Trio's clock (``inf``: never)."""
    if not isinstance(caller.credentials, Presented):
        return math.inf
    claims = getattr(caller.principal, "claims", None)
    exp = claims.get("exp") if isinstance(claims, Mapping) else None
    if isinstance(exp, bool) or not isinstance(exp, int | float) or exp != exp:
        return math.inf
    return trio.current_time() + (float(exp) - time.time())


async def _serve_connection(
    endpoint: WebSocketEndpoint, ws: WebSocketConnection, caller: Caller
) -> None:
    # Capacity 0: when the loop stops taking messages, we stop reading frames and
    # TCP flow control pushes back on the client.
    send_channel, receive_channel = trio.open_memory_channel[str | bytes | Oversized](0)
    try:
        async with trio.open_nursery() as nursery, receive_channel:
            nursery.start_soon(
                read_frames, ws, send_channel, endpoint.limits.max_message_bytes
            )
            await serve_messages(
                endpoint.dispatcher,
                receive_channel,
                one_by_one(functools.partial(send_frame, ws)),
                caller=caller,
                limits=attrs.evolve(endpoint.limits, grace_period=0),
                through=endpoint.through,
            )
    finally:
        reason = ws.closed
        if reason is not None and reason.code == TOO_BIG:
            await finish_close(ws)


async def finish_close(ws: WebSocketConnection) -> None:
    """Complete the closing handshake trio-websocket began with 1009; close TCP.

    trio-websocket 0.12 sends 1009, stops reading and never closes the TCP stream
    (the socket would linger until garbage collection). Closing it at once, with
    the client's frames unread, resets the connection: a client still sending
    sees 1006 instead of 1009. So read and drop frames until the client's Close
    frame, end of stream or ``CLOSE_WAIT``, then close.
    """
    from wsproto.connection import ConnectionState
    from wsproto.utilities import RemoteProtocolError

    stream, protocol = ws._stream, ws._wsproto
    try:
        with trio.move_on_after(CLOSE_WAIT):
            while True:
                for _event in protocol.events():
                    pass  # dropped; the client's Close frame ends the handshake
                if protocol.state is ConnectionState.CLOSED:
                    break
                try:
                    data = await stream.receive_some()
                except trio.BusyResourceError:
                    # trio-websocket's reader makes one last read after sending 1009.
                    await trio.sleep(0.01)
                    continue
                if not data:
                    break
                protocol.receive_data(bytes(data))
    except (trio.BrokenResourceError, trio.ClosedResourceError, RemoteProtocolError):
        pass
    finally:
        await trio.aclose_forcefully(stream)


async def read_frames(
    ws: WebSocketConnection,
    out: trio.MemorySendChannel[str | bytes | Oversized],
    limit: int,
) -> None:
    """Send each message of ``ws`` to ``out``, an ``Oversized`` for one over ``limit``.

    The connection's close is the end of input: with no grace period (nothing
    more can be sent), each request's own scope is cancelled at once, so its
    ``ctx.cancel`` has fired when the handler sees ``Cancelled``.
    """
    from trio_websocket import ConnectionClosed

    async with out:
        while True:
            try:
                message = await ws.get_message()
            except ConnectionClosed:
                return
            await out.send(
                Oversized(limit) if _size(message, limit) > limit else message
            )


async def send_frame(ws: WebSocketConnection, data: bytes) -> None:
    """Send one message as a text frame; a closed connection drops it."""
    from trio_websocket import ConnectionClosed

    try:
        # Text frames; encode_message wrote valid UTF-8 (surrogates escaped).
        await ws.send_message(data.decode("utf-8"))
    except ConnectionClosed:
        # The reader sees the close too and cancels the connection's work.
        return


def origin_allowed(origin: str, allowed: frozenset[str]) -> bool:
    """Return whether a browser page at ``origin`` may connect."""
    if "*" in allowed or origin in allowed:
        return True
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    return is_loopback_name(host)


def _size(message: str | bytes, limit: int) -> int:
    """Return the UTF-8 size of ``message``, skipping the encoding when clearly small."""
    if isinstance(message, bytes):
        return len(message)
    if 4 * len(message) <= limit:  # at most 4 bytes per code point
        return len(message)
    return len(message.encode("utf-8", "surrogatepass"))
