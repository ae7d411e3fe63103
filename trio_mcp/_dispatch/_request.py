"""One request as the dispatcher's steps see it, and how a step fails.

A transport hands the dispatcher a parsed ``Request``, the ``Caller`` (who is
calling, and how), where the request's notifications go (``emit``) and the cancel
scope it runs in. ``check`` runs the revision's ordered checks and returns a
``Checked`` request, a frozen value holding all of these, which every method reads. A step of the checks or of
a method that cannot go on raises ``Failure``; the dispatcher catches it once and
answers with its JSON-RPC error. Inside a call the runner catches it into an
``Ending`` instead (``_runner``), so middleware and receipts see how the call ended
as a value. Two checks written as pure functions (the HTTP header checks of
``_protocol._headers``) return a ``Fault`` value, which ``Failure.of`` raises. A
``Failure`` says how the request ends: the JSON-RPC error, the receipt's outcome
when a call was reached, and whether a tool shows it as an ``isError`` result the
model can read (refusals, bad arguments, timeouts).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import attrs
import trio

from .._authority import Grants, Outcome
from .._context import Emit, MissingClientCapability
from .._declare import qualified
from .._json import JsonObject, JsonValue, loads
from .._protocol import _wire as wire
from .._protocol._jsonrpc import Fault, Request

if TYPE_CHECKING:
    from ._dispatcher import Edge

__all__ = [
    "BAD_STATE_TYPE",
    "CANCELLED_TYPE",
    "ESCAPING_TYPE",
    "REFUSED_TYPE",
    "SECRET_WITHHELD_TYPE",
    "TIMEOUT_TYPE",
    "UPSTREAM_TYPE",
    "Caller",
    "Checked",
    "Failure",
    "Reply",
]


log = logging.getLogger("trio_mcp")


@attrs.frozen(eq=False)
class Reply:
    """A JSON-RPC response, encoded once, and the HTTP status Streamable HTTP uses."""

    body: bytes
    """One compact JSON text, UTF-8 (lone surrogates escaped), without a newline."""
    http_status: int = 200
    headers: tuple[tuple[bytes, bytes], ...] = ()
    """Extra HTTP response headers, as ASGI sends them (``WWW-Authenticate``)."""
    values: tuple[JsonObject | None, JsonValue] | None = None
    """The result and the error the body encodes, when the dispatcher had them as
    values (not for a page of a list, spliced from encoded entries)."""

    @property
    def message(self) -> JsonObject:
        """The response decoded again (for tests and debugging)."""
        value = loads(self.body)
        assert isinstance(value, dict)
        return value

    def parts(self) -> tuple[JsonObject | None, JsonValue]:
        """The result (None for an error) and the error, as values: what the legacy
        edge shapes into its revision, without decoding the body where it can."""
        if self.values is not None:
            return self.values
        message = self.message
        result = message.get("result")
        return (result if isinstance(result, dict) else None), message.get("error")


@attrs.frozen(eq=False)
class Caller:
    """Who is calling, and how: the principal, the host's grants, the transport's view.

    What only a transport's own steps read (a bearer token's admission, the
    client's address) is carried opaquely: the dispatcher knows no transport.
    """

    principal: object | None = None
    allow: Grants = ()
    closing: trio.Event | None = None
    """Set when the transport shuts down gracefully; listen streams then end."""
    stream: bool = False
    """A stream transport (stdio, WebSocket, the test client): ``closing`` means the
    input ended, so it also fires every running call's ``ctx.cancel`` (docs/limits.md, ``grace_period``)."""
    headers: Mapping[str, str] | None = None
    """Lower-cased HTTP header names to values; None off HTTP."""
    visible: frozenset[str] | None = None
    """When set (``BearerAuth(hide_ungranted=True)``), the capabilities the caller
    holds: lists show only the entries that need no others."""
    peer: str | None = None
    """The client's address, if known: the TCP peer, or the client a trusted
    proxy's forwarding header names (``_http._forwarded``)."""
    credentials: object | None = None
    """What the transport authenticated the caller with (a bearer token's
    admission), for its own steps."""


@attrs.frozen(eq=False)
class Checked:
    """A request that passed the revision's checks (``Dispatcher.check``).

    Its ``params`` and their ``_meta`` (which carries the protocol version, the
    client's capabilities and ``clientInfo``), who sent it, the edge it came
    through (whose chain its calls run), where its notifications go and the cancel
    scope the transport runs it in (a closed HTTP stream, ``notifications/cancelled``).
    """

    request: Request
    params: JsonObject
    meta: JsonObject
    caller: Caller
    edge: Edge
    emit: Emit
    scope: trio.CancelScope | None
    id: str | int
    """The request's id (``request.id``, read on every call's way)."""
    method: str
    """The request's method (``request.method``)."""


#: The receipt's ``error_type`` of a call whose result masking would have broken.
SECRET_WITHHELD_TYPE = "trio_mcp.SecretWithheld"
#: ... of a call refused for a capability the caller lacks (as ``require()``'s).
REFUSED_TYPE = "trio_mcp.Refusal"
#: ... of a call whose deadline (``timeout=``) passed.
TIMEOUT_TYPE = "trio.TooSlowError"
#: ... of a read whose URI template variable escapes its place.
ESCAPING_TYPE = "trio_mcp.EscapingVariable"
#: ... of a retry whose ``requestState`` cannot be opened (forged, expired, another's).
BAD_STATE_TYPE = "trio_mcp.InvalidRequestState"
#: ... of a call cancelled before it answered (no reply is sent).
CANCELLED_TYPE = "trio.Cancelled"
#: ... of a relayed call its upstream did not answer (unreachable, an error, garbage).
UPSTREAM_TYPE = "trio_mcp.Upstream"


class Failure(Exception):
    """How a request ends when a step cannot go on.

    Raised by any step; caught once by the dispatcher (a protocol error) or, inside
    a call, by the runner (an ``Ending``, whose ``outcome`` the receipt records).
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: JsonValue = None,
        *,
        http_status: int = 200,
        outcome: Outcome = "invalid",
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.outcome: Outcome = outcome
        self.error_type = error_type

    tool_result: ClassVar[bool] = False
    """A tool answers with an ``isError`` result (``data`` as its detail):
    true of the failures made by ``_ToolFailure``."""

    def fault(self, request_id: str | int | None) -> Fault:
        """The JSON-RPC error for ``request_id``."""
        return Fault(self.code, self.message, self.data, request_id, self.http_status)

    # -- the named ways to fail ------------------------------------------------------
    @classmethod
    def invalid(
        cls,
        message: str,
        data: JsonValue = None,
        *,
        http_status: int = 200,
        error_type: str | None = None,
    ) -> Failure:
        """-32602: the params do not name something served, or do not fit."""
        return cls(
            wire.INVALID_PARAMS,
            message,
            data,
            http_status=http_status,
            error_type=error_type,
        )

    @classmethod
    def not_found(cls, uri: str, *, error_type: str | None = None) -> Failure:
        """-32602 with ``data.uri`` (the revision's "resource not found"); its
        receipt says ``not_found``, apart from a request that does not fit."""
        return cls(
            wire.INVALID_PARAMS,
            f"resource not found: {uri}",
            {"uri": uri},
            outcome="not_found",
            error_type=error_type,
        )

    @classmethod
    def of(cls, fault: Fault) -> Failure:
        """A failure carrying a fault built elsewhere (the header checks)."""
        return cls(fault.code, fault.message, fault.data, http_status=fault.http_status)

    @classmethod
    def refused(
        cls,
        capability: str,
        error_type: str = REFUSED_TYPE,
        *,
        declared: bool = True,
        why: str | None = None,
    ) -> Failure:
        """The call may not use a capability (an isError result for tools).

        ``declared``: the declaration names it in ``caps=``, so the host has not
        granted it to this caller; if not, ``ToolContext.require`` asked beyond the
        declaration's ceiling, a fault of the server's own code that no grant
        fixes. ``why`` replaces the explanation (a check that could not be made).
        """
        if why is not None:
            message = f"refused: {why}"
        elif declared:
            message = (
                f"refused: this call needs the capability '{capability}', which "
                "this caller lacks"
            )
        else:
            message = (
                f"refused: the handler asked for the capability '{capability}' "
                "(ToolContext.require), which its declaration does not declare in "
                "caps=, so no grant allows it; this is the server's to fix (add it "
                "to the declaration's caps=), not the caller's"
            )
        return _ToolFailure(
            wire.REFUSED,
            message,
            {"kind": "refused", "capability": capability, "declared": declared},
            http_status=403,
            outcome="refused",
            error_type=error_type,
        )

    @classmethod
    def timed_out(cls, timeout: float) -> Failure:
        """The call's deadline passed; it was cancelled (an isError result for tools)."""
        return _ToolFailure(
            wire.INTERNAL_ERROR,
            f"the call timed out after {timeout:g} seconds and was cancelled",
            {"kind": "timeout", "seconds": timeout},
            http_status=504,
            outcome="timeout",
            error_type=TIMEOUT_TYPE,
        )

    @classmethod
    def busy(cls, reason: str, error_type: str) -> Failure:
        """-32000 (HTTP 503): the server cannot start this call now; retry later."""
        return cls(
            wire.SERVER_BUSY,
            wire.busy_message(reason),
            {"retryable": True, "kind": "busy"},
            http_status=503,
            outcome="refused",
            error_type=error_type,
        )

    @classmethod
    def withheld(cls, reason: str) -> Failure:
        """The result held a secret that masking cannot hide without breaking the
        reply (an isError result for tools, -32603 otherwise): it is not sent."""
        return _ToolFailure(
            wire.INTERNAL_ERROR,
            f"a secret was withheld: the result held a secret value, and masking it "
            f"would {reason}, so the result is not sent; return the secret "
            "somewhere the output schema leaves unconstrained, or not at all",
            {"kind": "secret_withheld"},
            http_status=500,
            outcome="error",
            error_type=SECRET_WITHHELD_TYPE,
        )

    @classmethod
    def bad_arguments(cls, problems: list[tuple[str, str]], error_type: str) -> Failure:
        """Arguments that do not fit, every one listed (an isError result for tools)."""
        lines = [f"- {path or 'arguments'}: {message}" for path, message in problems]
        detail: JsonObject = {
            "kind": "invalid_arguments",
            "problems": [{"path": p, "message": m} for p, m in problems],
        }
        return _ToolFailure(
            wire.INVALID_PARAMS,
            "invalid arguments; fix every input listed and call again:\n"
            + "\n".join(lines),
            detail,
            error_type=error_type,
        )

    @classmethod
    def missing_capability(
        cls, exc: MissingClientCapability, error_type: str | None = None
    ) -> Failure:
        """-32021 (HTTP 400): the call needs a client capability the request lacks."""
        return cls(
            wire.MISSING_CLIENT_CAPABILITY,
            str(exc),
            {"requiredCapabilities": exc.required},
            http_status=400,
            outcome="refused",
            error_type=error_type,
        )

    @classmethod
    def upstream(cls, upstream: str, reason: str, code: int | None = None) -> Failure:
        """A relayed call its upstream did not answer with a result (an isError
        result for tools; otherwise the upstream's -32602, else -32603).

        ``reason`` says why, never with a credential (the upstream layer's words).
        """
        code = code if code == wire.INVALID_PARAMS else wire.INTERNAL_ERROR
        return _ToolFailure(
            code,
            f"upstream {upstream}: {reason}",
            {"kind": "upstream", "upstream": upstream},
            http_status=502 if code == wire.INTERNAL_ERROR else 200,
            outcome="error",
            error_type=UPSTREAM_TYPE,
        )

    @classmethod
    def unexpected(cls, exc: BaseException, what: str, *args: object) -> Failure:
        """-32603 for an exception nobody planned for, logged under a fresh reference.

        ``what`` (a logging format, with ``args``) names what failed; the log record
        has the traceback, the reply only the reference that finds it.
        """
        reference = secrets.token_hex(6)
        log.error(what + " failed; error reference %s", *args, reference, exc_info=exc)
        return cls.internal(reference, qualified(type(exc)))

    @property
    def reference(self) -> str | None:
        """The log reference of an internal error, else None."""
        data = self.data
        found = data.get("reference") if isinstance(data, dict) else None
        return found if isinstance(found, str) else None

    @classmethod
    def internal(cls, reference: str, error_type: str) -> Failure:
        """-32603 with a reference to the log record that has the details."""
        return cls(
            wire.INTERNAL_ERROR,
            f"internal error (reference {reference}); the server's log has the details",
            {"reference": reference},
            http_status=500,
            outcome="internal",
            error_type=error_type,
        )


class _ToolFailure(Failure):
    """A failure a tool answers with an ``isError`` result, not a JSON-RPC error:
    a refusal, a timeout, arguments that do not fit."""

    tool_result = True
