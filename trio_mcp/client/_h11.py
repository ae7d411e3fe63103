"""HTTP/1.1 for the client: h11 over Trio's sockets, with a small pool of idle
connections to the one origin.

Why not httpx: a call's response stream must close the moment its caller is
cancelled (that close is the cancellation, revision 2026-07-28 "Streamable HTTP"),
bytes must be counted against the size limit as they arrive, and a redirect must be
seen, never followed. With h11 each of these is a line here: the connection is
closed (never returned to the pool) unless its response was read to the end, and
nothing reads environment proxies or cookies. h11 is already what Hypercorn and
httpx speak HTTP/1.1 with.

Invariants:
- A connection goes back to the pool only when both sides finished the exchange
  and h11 agrees it can be reused; an idle connection that has become readable (the
  server closed it, or sent something unasked) is dropped before reuse.
- Every wait is under the caller's deadline; this module sets none of its own.
- At most ``MAX_CONNECTIONS`` connections are open at once: a proxy relaying many
  calls to one upstream opens no more than that.
- Headers never reach an error message (they may carry credentials).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import attrs
import h11
import trio

from .._errors import Transport

__all__ = ["MAX_CONNECTIONS", "Endpoint", "HttpPool", "HttpResponse"]

_READ = 65536
#: Idle connections kept per client.
_MAX_IDLE = 8
#: Connections open at once per client (calls in flight, a session's GET stream);
#: a request beyond them waits for one, under its deadline.
MAX_CONNECTIONS = 64
#: The largest response head (status line and headers) accepted.
_MAX_HEAD = 64 * 1024


@attrs.frozen
class Endpoint:
    """Where requests go: the URL split once. ``shown`` names it in errors (scheme,
    host, port and path: no user information, no query, which may hold secrets)."""

    scheme: str
    host: str
    port: int
    target: str
    shown: str

    @classmethod
    def of(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Transport(
                f"not an http(s) URL: {parts.scheme}://{parts.hostname or ''}"
            )
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as exc:
            raise Transport("the URL's port is not a number") from exc
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.hostname
        netloc = f"[{host}]" if ":" in host else host
        shown = f"{parts.scheme}://{netloc}:{port}{parts.path or '/'}"
        return cls(parts.scheme, host, port, target, shown)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class _Connection:
    def __init__(
        self, stream: trio.abc.Stream, socket_stream: trio.SocketStream
    ) -> None:
        self.stream = stream
        self.socket = socket_stream.socket
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)

    def stale(self) -> bool:
        """An idle connection with something to read is closed or confused: drop it."""
        try:
            return bool(self.socket.is_readable())
        except OSError:
            return True


class HttpResponse:
    """A response being read: ``status``, ``headers`` (lower-case names), and the
    body through ``receive`` (b"" at its end)."""

    def __init__(
        self, connection: _Connection, event: h11.Response, shown: str
    ) -> None:
        self._connection = connection
        self.status: int = event.status_code
        self.headers: dict[str, str] = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in event.headers
        }
        self._shown = shown
        self.finished = False

    async def receive(self) -> bytes:
        """The next piece of the body; b"" once it has ended."""
        if self.finished:
            return b""
        event = await _next_event(self._connection, self._shown)
        if isinstance(event, h11.Data):
            return bytes(event.data)
        if isinstance(event, h11.EndOfMessage):
            self.finished = True
            return b""
        raise Transport(
            f"{self._shown} sent an unexpected HTTP event {type(event).__name__}"
        )

    async def read_all(self, limit: int) -> bytes:
        """The whole body; ``Transport`` as soon as it passes ``limit`` bytes."""
        declared = self.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise Transport(
                f"{self._shown} announced a body of {declared} bytes, past the "
                f"client's limit of {limit} bytes"
            )
        body = bytearray()
        while chunk := await self.receive():
            body += chunk
            if len(body) > limit:
                raise Transport(
                    f"{self._shown} sent a body past the client's limit of {limit} bytes"
                )
        return bytes(body)


async def _next_event(connection: _Connection, shown: str) -> object:
    while True:
        try:
            event = connection.h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise Transport(f"{shown} broke HTTP/1.1: {exc}") from exc
        if event is not h11.NEED_DATA:
            if event is h11.PAUSED:
                raise Transport(f"{shown} sent more than one response")
            return event
        try:
            data = await connection.stream.receive_some(_READ)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise Transport(f"the connection to {shown} broke") from exc
        connection.h11.receive_data(bytes(data))


def _request_bytes(
    connection: _Connection,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
) -> bytes:
    try:
        wire = (
            connection.h11.send(
                h11.Request(method=method, target=target, headers=headers)
            )
            or b""
        )
        if body:
            wire += connection.h11.send(h11.Data(data=body)) or b""
        return wire + (connection.h11.send(h11.EndOfMessage()) or b"")
    except h11.LocalProtocolError as exc:
        # The message names no header value: one may be a credential.
        raise Transport(
            "a header of the request is not valid HTTP (a name that is not a token, "
            "or a value with a line break or a character outside Latin-1)"
        ) from exc


class HttpPool:
    """Connections to one ``Endpoint``; ``request`` is the only way to use one."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._idle: list[_Connection] = []
        self._ssl: ssl.SSLContext | None = None
        self._slots = trio.CapacityLimiter(MAX_CONNECTIONS)
        #: Connections open now (idle ones included), and the most there have been.
        self.open = 0
        self.most_open = 0

    async def _connect(self) -> _Connection:
        point = self.endpoint
        try:
            socket_stream = await trio.open_tcp_stream(point.host, point.port)
        except OSError as exc:
            raise Transport(
                f"could not connect to {point.shown}: {exc.strerror or exc}"
            ) from exc
        stream: trio.abc.Stream = socket_stream
        if point.scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            tls = trio.SSLStream(
                socket_stream,
                self._ssl,
                server_hostname=point.host,
                https_compatible=True,
            )
            try:
                await tls.do_handshake()
            except (trio.BrokenResourceError, OSError) as exc:
                await trio.aclose_forcefully(socket_stream)
                raise Transport(f"the TLS handshake with {point.shown} failed") from exc
            stream = tls
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        return _Connection(stream, socket_stream)

    async def _close(self, connection: _Connection) -> None:
        self.open -= 1
        await trio.aclose_forcefully(connection.stream)

    async def _take(self) -> _Connection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.stale():
                return connection
            await self._close(connection)
        return await self._connect()

    @contextlib.asynccontextmanager
    async def request(
        self, method: str, headers: list[tuple[str, str]], body: bytes = b""
    ) -> AsyncIterator[HttpResponse]:
        """Send one request; yield its response with the body unread.

        The connection returns to the pool only if the response was read to its end
        inside the block; otherwise (cancelled, an error, a body left unread) it is
        closed at once, which a Streamable HTTP server reads as a cancellation.
        """
        async with self._slots, self._exchange(method, headers, body) as response:
            yield response

    @contextlib.asynccontextmanager
    async def _exchange(
        self, method: str, headers: list[tuple[str, str]], body: bytes
    ) -> AsyncIterator[HttpResponse]:
        point = self.endpoint
        connection = await self._take()
        reusable = False
        try:
            all_headers = [("host", point.host_header), *headers]
            if method in ("POST", "PUT") or body:
                all_headers.append(("content-length", str(len(body))))
            wire = _request_bytes(connection, method, point.target, all_headers, body)
            try:
                await connection.stream.send_all(wire)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise Transport(f"the connection to {point.shown} broke") from exc
            event = await _next_event(connection, point.shown)
            while isinstance(event, h11.InformationalResponse):
                event = await _next_event(connection, point.shown)
            if not isinstance(event, h11.Response):
                raise Transport(f"{point.shown} did not answer with an HTTP response")
            response = HttpResponse(connection, event, point.shown)
            yield response
            reusable = (
                response.finished
                and connection.h11.our_state is h11.DONE
                and connection.h11.their_state is h11.DONE
            )
        finally:
            if reusable and len(self._idle) < _MAX_IDLE:
                connection.h11.start_next_cycle()
                self._idle.append(connection)
            else:
                await self._close(connection)

    async def aclose(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._close(connection)
