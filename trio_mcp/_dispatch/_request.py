"""What every handler is given and how it ends a request early.

``Caller`` says who is calling; a handler that must answer with an error raises
``Stop`` with the ``Fault``, and ``Dispatcher.handle`` turns it into the reply.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import trio

from .._authority import Grants
from .._context import MissingClientCapability
from .._json import JsonValue
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Request

__all__ = ["Caller", "Stop", "invalid", "missing_capability"]


@attrs.frozen
class Caller:
    """Who is calling, and how: the principal, the host's grants, HTTP headers."""

    principal: object | None = None
    allow: Grants = ()
    closing: trio.Event | None = None
    """Set when the transport shuts down gracefully; listen streams then end."""
    headers: Mapping[str, str] | None = None
    """Lower-cased HTTP header names to values; None off HTTP."""
    scope: trio.CancelScope | None = None
    """The transport's cancel scope for this request, reported by ``ctx.cancel``."""


class Stop(Exception):
    """Internal: end the request with this fault."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault


def invalid(
    request: Request, message: str, data: JsonValue = None, status: int = 200
) -> Stop:
    """-32602 (invalid params) for ``request``, to raise."""
    return Stop(Fault(wire.INVALID_PARAMS, message, data, request.id, status))


def missing_capability(request: Request, exc: MissingClientCapability) -> Stop:
    """-32021 (HTTP 400): the call needs a client capability the request lacks."""
    return Stop(
        Fault(
            wire.MISSING_CLIENT_CAPABILITY,
            str(exc),
            {"requiredCapabilities": exc.required},
            request.id,
            400,
        )
    )
