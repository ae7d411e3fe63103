"""How long an HTTP request body may take: ``Limits.body_timeout``.

Hypercorn's idle timer covers a connection between requests and while request
headers trickle in; once a request's headers are complete the body is the app's to
read, and a client could trickle it (or an endless chunked body) for as long as it
liked, holding a connection, a task and the bytes so far. The app reads the body
under this deadline; past it the answer is 408 with ``Connection: close`` (the rest of
the body is never read, so the connection cannot carry another request).
"""

from __future__ import annotations

from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault

__all__ = ["slow_body_fault"]


def slow_body_fault(seconds: float) -> Fault:
    """The -32600 reply (HTTP 408) for a body that did not arrive in time."""
    return Fault(
        wire.INVALID_REQUEST,
        f"invalid request: the request body did not arrive within {seconds:g} "
        "seconds (the server's Limits.body_timeout); send it whole, faster",
        http_status=408,
    )
