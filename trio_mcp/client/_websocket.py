"""The WebSocket stream under ``StreamLink``: one message per text frame,
subprotocol ``mcp``; ``headers=`` and the bearer token go in the handshake.

The TCP (and TLS) stream is opened here and handed to trio-websocket, so it is
closed here whatever the handshake's fate (trio-websocket's own opener leaves a
refused handshake's socket to the garbage collector). A handshake answered with a
redirect or refused raises ``McpError.Transport`` naming the status (and the
location: the client never follows it); a message past ``MAX_MESSAGE_BYTES`` closes
the connection (1009) and breaks the link with ``McpError.Transport``.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import trio

from .._errors import Transport, install_hint
from ._jsonrpc import MAX_MESSAGE_BYTES
from ._link import StreamLink, leaves
from ._streams import STDIO_GRACE

__all__ = ["open_websocket"]

Socket = trio.SocketStream | trio.SSLStream[trio.SocketStream]


def _module() -> Any:
    try:
        import trio_websocket
    except ImportError as exc:  # pragma: no cover - the client extra is installed
        raise Transport(
            f"WebSocket targets need trio-websocket; {install_hint('client')}"
        ) from exc
    return trio_websocket


@contextlib.asynccontextmanager
async def open_websocket(
    url: str, source: str, headers: list[tuple[str, str]], connect_within: float
) -> AsyncIterator[StreamLink]:
    """Connect to a WebSocket server and yield a link over its text frames."""
    module = _module()
    try:
        async with trio.open_nursery() as nursery:
            ws = await _handshake(module, nursery, url, source, headers, connect_within)
            link = StreamLink(ws.send_message, nursery, source=source)
            nursery.start_soon(link.read, _texts(module, ws, source))
            try:
                yield link
            finally:
                with trio.move_on_after(STDIO_GRACE) as scope:
                    scope.shield = True
                    await ws.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # trio-websocket raises a refused handshake in its reader task.
        rejected = [
            leaf
            for leaf in leaves(group)
            if isinstance(leaf, module.ConnectionRejected)
        ]
        if rejected:
            raise Transport(_rejected(source, rejected[0])) from None
        raise


async def _handshake(
    module: Any,
    nursery: trio.Nursery,
    url: str,
    source: str,
    headers: list[tuple[str, str]],
    connect_within: float,
) -> Any:
    """Open the stream and shake hands; close the stream if that fails."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    secure = parts.scheme.lower() == "wss"
    port = parts.port or (443 if secure else 80)
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    named = f"[{host}]" if ":" in host else host
    stream: Socket | None = None
    try:
        with trio.fail_after(connect_within):
            stream = await _connect(host, port, secure)
            return await module.wrap_client_stream(
                nursery,
                stream,
                f"{named}:{port}",
                resource,
                subprotocols=["mcp"],
                extra_headers=[(k.encode(), v.encode()) for k, v in headers],
                max_message_size=MAX_MESSAGE_BYTES,
            )
    except BaseException as exc:
        if stream is not None:
            await trio.aclose_forcefully(stream)
        error = _connect_error(source, exc, module)
        if error is exc:
            raise
        raise error from exc


def _texts(
    module: Any, ws: Any, source: str
) -> Callable[[], Awaitable[str | bytes | None]]:
    """The link's reader: the next message, None once closed."""

    async def texts() -> str | bytes | None:
        try:
            message: str | bytes = await ws.get_message()
        except module.ConnectionClosed as exc:
            reason = exc.reason
            if reason is not None and reason.code == 1009:
                raise Transport(
                    f"{source} sent a message past the client's limit of "
                    f"{MAX_MESSAGE_BYTES} bytes"
                ) from exc
            return None
        return message

    return texts


async def _connect(host: str, port: int, secure: bool) -> Socket:
    stream = await trio.open_tcp_stream(host, port)
    if not secure:
        return stream
    tls = trio.SSLStream(
        stream,
        ssl.create_default_context(),
        server_hostname=host,
        https_compatible=True,
    )
    try:
        await tls.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return tls


def _connect_error(source: str, exc: BaseException, module: Any) -> BaseException:
    """What a failed WebSocket connection raises (Trio's own exceptions pass)."""
    if isinstance(exc, module.ConnectionRejected):
        return Transport(_rejected(source, exc))
    if isinstance(exc, trio.TooSlowError):
        return Transport(f"could not connect to {source} within the timeout")
    if isinstance(exc, module.HandshakeError | OSError | trio.BrokenResourceError):
        return Transport(f"could not connect to {source}: {exc}")
    return exc


def _rejected(source: str, exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    found = {
        k.decode("latin-1").lower(): v.decode("latin-1")
        for k, v in (getattr(exc, "headers", None) or [])
    }
    if status is not None and 300 <= status < 400:
        where = found.get("location", "nowhere")
        return (
            f"{source} answered the WebSocket handshake with a redirect ({status}) to "
            f"{where}; the client never follows redirects: use that URL as the target"
        )
    return f"{source} refused the WebSocket handshake with HTTP {status}"
