"""Who may reach a mounted app: binding, ``Host``, ``Origin``, the method, CORS.

The HTTP concerns of ``McpAsgiApp`` that are about access rather than messages,
checked before anything of the request is read (MCP revision 2026-07-28,
Streamable HTTP, pinned in places by the official conformance suite):

- **Binding.** The app cannot see how its host bound the socket, but each request's
  ASGI ``scope["server"]`` is the local address it arrived on; a non-loopback one
  without ``require_auth=True`` is refused (``trio_mcp._loopback``, the app).
- **Host and Origin** (``Access.refusal``): a browser page of another origin is
  refused with 403, a ``Host`` that is not served (DNS rebinding) with 421, any
  method but ``POST`` with 405.
- **CORS** (opt-in, ``Cors``): a preflight from an allowed origin is answered with the
  MCP request headers allowed, and every response to that origin carries
  ``Access-Control-Allow-Origin`` and exposes the response headers clients read.
  No credentials mode: browser clients authenticate with ``Authorization``.

No trio here; the app does the sending.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Final
from urllib.parse import urlsplit

from .._loopback import LOOPBACK_HOSTS
from ._response import Answer, Message, Scope, Send, send_fault, send_plain

__all__ = [
    "CORS_EXPOSED_HEADERS",
    "CORS_REQUEST_HEADERS",
    "Access",
    "Cors",
    "normalize_origins",
]

Headers = list[tuple[bytes, bytes]]

_ALLOW_POST: Final = (b"allow", b"POST")
_POST_ONLY: Final = b"method not allowed: send JSON-RPC with POST\n"
_FORBIDDEN: Final = "forbidden: this Origin is not allowed"
_MISDIRECTED: Final = "misdirected request: this Host is not served here"

#: Request headers a browser client may send cross-origin, besides the
#: ``Mcp-Param-*`` ones each tool declares, which are allowed when asked for.
CORS_REQUEST_HEADERS: Final = (
    "authorization",
    "content-type",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
)
#: Response headers a browser client may read.
CORS_EXPOSED_HEADERS: Final = b"WWW-Authenticate, Mcp-Protocol-Version"
#: What a handshake-era session adds (``Server(legacy=True)``): its id, both ways,
#: and the ``GET`` and ``DELETE`` of the session's stream and end.
_SESSION_REQUEST_HEADERS: Final = ("mcp-session-id", "last-event-id")
_SESSION_EXPOSED_HEADERS: Final = b", Mcp-Session-Id"
#: Seconds a browser may cache a preflight answer.
CORS_MAX_AGE: Final = b"600"


def normalize_origins(origins: Iterable[str] | None) -> frozenset[str]:
    """Origins lower-cased, without a trailing slash, for comparison."""
    return frozenset(o.strip().lower().rstrip("/") for o in (origins or ()))


class Cors:
    """The CORS policy of one app: which origins, and the headers to add."""

    def __init__(self, origins: Iterable[str] | None) -> None:
        self.origins = normalize_origins(origins)
        self.request_headers: tuple[str, ...] = CORS_REQUEST_HEADERS
        self.exposed = CORS_EXPOSED_HEADERS
        self.methods = "POST"

    def with_sessions(self) -> None:
        """Also allow what a handshake-era session sends and reads."""
        self.request_headers = (*CORS_REQUEST_HEADERS, *_SESSION_REQUEST_HEADERS)
        self.exposed = CORS_EXPOSED_HEADERS + _SESSION_EXPOSED_HEADERS
        self.methods = "GET, POST, DELETE"

    def allows(self, origin: str | None) -> bool:
        """Whether a page from ``origin`` may call the app cross-origin."""
        if not self.origins or origin is None:
            return False
        return "*" in self.origins or origin.strip().lower().rstrip("/") in self.origins

    def wrap(self, headers: dict[str, str], send: Send) -> Send:
        """``send`` that adds the CORS response headers, for an allowed origin."""
        origin = headers.get("origin")
        if origin is None or not self.allows(origin):
            return send
        extra: Headers = [
            (b"access-control-allow-origin", origin.strip().encode("latin-1")),
            (b"access-control-expose-headers", self.exposed),
            (b"vary", b"Origin"),
        ]

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return send_with_cors

    def preflight(self, headers: dict[str, str], method: str) -> Headers | None:
        """The headers answering a preflight for ``method``; None if it is not one.

        ``Mcp-Param-*`` headers are allowed when the browser asks for them: their
        names depend on each tool's ``x-mcp-header`` declarations.
        """
        origin = headers.get("origin")
        wanted = headers.get("access-control-request-method")
        if wanted is None or not self.allows(origin):
            return None
        raw = headers.get("access-control-request-headers", "")
        asked = [h.strip().lower() for h in raw.split(",") if h.strip()]
        allowed = [*self.request_headers]
        allowed += [h for h in asked if h.startswith("mcp-param-") and h not in allowed]
        return [
            (b"access-control-allow-methods", f"{method}, OPTIONS".encode()),
            (b"access-control-allow-headers", ", ".join(allowed).encode("latin-1")),
            (b"access-control-max-age", CORS_MAX_AGE),
            (b"vary", b"Access-Control-Request-Method, Access-Control-Request-Headers"),
        ]


class Access:
    """The ``Host`` and ``Origin`` rules of one app, and its CORS policy.

    Args:
        check_host: Check ``Host`` against ``allowed_hosts`` (and loopback names);
            off for a server bound beyond loopback without ``allowed_hosts``.
        allowed_hosts: Host names (or ``host:port``) served besides loopback; ``*``
            accepts any.
        allowed_origins: Origins whose pages may call, besides pages of an allowed
            host; ``*`` accepts any.
        cors_origins: Origins whose browser pages may call and read the responses.
    """

    def __init__(
        self,
        *,
        check_host: bool,
        allowed_hosts: Iterable[str] | None,
        allowed_origins: Iterable[str] | None,
        cors_origins: Iterable[str] | None,
    ) -> None:
        hosts = {h.strip().lower() for h in (allowed_hosts or ())}
        self.any_host = "*" in hosts or not check_host
        self.allowed_hosts = frozenset(LOOPBACK_HOSTS | hosts)
        self.allowed_origins = normalize_origins(allowed_origins)
        self.any_origin = "*" in self.allowed_origins
        self.cors = Cors(cors_origins)
        """Origins whose browser pages may call (and read) this endpoint."""

    def refusal(
        self, scope: Scope, headers: dict[str, str], *, session: bool = False
    ) -> Answer | None:
        """The answer refusing a bad ``Origin`` (403), ``Host`` (421) or method (405).

        A request of a handshake-era ``session`` may also be ``GET`` or ``DELETE``.
        """
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin):
            return partial(send_fault, status=403, text=_FORBIDDEN)
        if not self.any_host and not self.host_allowed(headers.get("host")):
            return partial(send_fault, status=421, text=_MISDIRECTED)
        if session:
            return None  # the session's method is the session's to check
        if scope["method"] != "POST":
            return partial(send_plain, status=405, body=_POST_ONLY, extra=[_ALLOW_POST])
        return None

    def host_allowed(self, value: str | None) -> bool:
        """Whether a ``Host`` header names this server."""
        if value is None:
            return False
        host, port = _split_host(value)
        return host in self.allowed_hosts or f"{host}:{port}" in self.allowed_hosts

    def origin_allowed(self, origin: str) -> bool:
        """Whether a page of ``origin`` may call this server."""
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
