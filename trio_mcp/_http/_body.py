"""Reading one request's body: its size limit, its deadline, its message.

How long an HTTP request body may take: ``Limits.body_timeout``.

Hypercorn's idle timer covers a connection between requests and while request
headers trickle in; once a request's headers are complete the body is the app's to
read, and a client could trickle it (or an endless chunked body) for as long as it
liked, holding a connection, a task and the bytes so far. The app reads the body
under this deadline; past it the answer is 408 with ``Connection: close`` (the rest of
the body is never read, so the connection cannot carry another request).
"""

from __future__ import annotations

from functools import partial
from typing import Final

import trio

from .._json import JsonValue, encode_message
from .._limits import Limits
from .._protocol import _wire as wire
from .._protocol._jsonrpc import (
    Fault,
    Notification,
    Request,
    oversized_fault,
    parse_message,
    parse_value,
)
from ._response import Answer, Receive, send_json, send_plain

__all__ = ["read_body", "read_json", "read_message", "slow_body_fault"]


def slow_body_fault(seconds: float) -> Fault:
    """The -32600 reply (HTTP 408) for a body that did not arrive in time."""
    return Fault(
        wire.INVALID_REQUEST,
        f"invalid request: the request body did not arrive within {seconds:g} "
        "seconds (the server's Limits.body_timeout); send it whole, faster",
        http_status=408,
    )


class _Disconnected(Exception):
    """The client went away while its request body was being read."""


_CLOSE: Final = [(b"connection", b"close")]


async def read_message(
    headers: dict[str, str], receive: Receive, limits: Limits
) -> Request | Answer | None:
    """The request in the body, the answer refusing it, or None if the client left.

    The body is read incrementally, never buffered past ``max_message_bytes``
    (413), within ``body_timeout`` (408); then parsed with the depth limit (400); a
    notification is accepted (202).
    """
    body = await read_body(headers, receive, limits)
    if not isinstance(body, bytes):
        return body
    message = parse_message(body, max_depth=limits.max_depth)
    if isinstance(message, Fault):
        encoded = encode_message(message.to_message())
        return partial(send_json, status=message.http_status, body=encoded)
    if isinstance(message, Notification):
        # No client notification means anything over HTTP (cancellation is a
        # closed stream); accept without header requirements (§12, [INFERRED]).
        return partial(send_plain, status=202, body=b"")
    return message


async def read_json(
    headers: dict[str, str], receive: Receive, limits: Limits
) -> tuple[JsonValue] | Answer | None:
    """The JSON value of the body, in a 1-tuple (a handshake-era message: a
    request, a notification or a response; ``null`` is a value too), the answer
    refusing it, or None if the client left.

    The same limits as ``read_message``; not JSON or too deep is 400.
    """
    body = await read_body(headers, receive, limits)
    if not isinstance(body, bytes):
        return body
    value = parse_value(body, max_depth=limits.max_depth)
    if isinstance(value, Fault):
        encoded = encode_message(value.to_message())
        return partial(send_json, status=value.http_status, body=encoded)
    return (value,)


async def read_body(
    headers: dict[str, str], receive: Receive, limits: Limits
) -> bytes | Answer | None:
    """The whole body, the answer refusing it (413, 408), or None if the client left."""
    try:
        # move_on_after is a plain CancelScope; fail_after wraps one in a
        # generator-based context manager, which this per-request path avoids.
        with trio.move_on_after(limits.body_timeout) as deadline:
            body = await _read_body(headers, receive, limits.max_message_bytes)
    except _Disconnected:
        return None
    if deadline.cancelled_caught:  # a trickled body: 408, the connection closes
        fault = slow_body_fault(limits.body_timeout)
        encoded = encode_message(fault.to_message())
        return partial(send_json, status=fault.http_status, body=encoded, extra=_CLOSE)
    if body is None:
        # The rest of the body is never read, so the connection cannot carry
        # another request: say so, or a keep-alive client sends its next request
        # on it while the server closes it, and that request is lost.
        fault = oversized_fault(limits.max_message_bytes)
        encoded = encode_message(fault.to_message())
        return partial(send_json, status=fault.http_status, body=encoded, extra=_CLOSE)
    return body


async def _read_body(
    headers: dict[str, str], receive: Receive, limit: int
) -> bytes | None:
    """Read the body, or return None as soon as it exceeds ``limit``."""
    declared = headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
