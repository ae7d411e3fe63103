"""Who may reach a mounted app, and what it tells them: binding, CORS, RFC 9728.

Three HTTP concerns of ``McpAsgiApp`` that are about access rather than messages:

- **Binding.** The app cannot see how its host bound the socket, but each request's
  ASGI ``scope["server"]`` is the local address it arrived on; a non-loopback one
  without ``require_auth=True`` is refused (``trio_mcp._loopback``).
- **CORS** (opt-in, ``Cors``): a preflight from an allowed origin is answered with the
  MCP request headers allowed, and every response to that origin carries
  ``Access-Control-Allow-Origin`` and exposes the response headers clients read.
  No credentials mode: browser clients authenticate with ``Authorization``.
- **RFC 9728 metadata** (``metadata_url``, ``request_base``): where a client finds
  the protected resource document, and the resource identifier it describes.

No trio here; the app does the sending.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final
from urllib.parse import urlsplit

from .._authority import WELL_KNOWN, ProtectedResource, well_known_url

__all__ = [
    "CORS_EXPOSED_HEADERS",
    "CORS_REQUEST_HEADERS",
    "Cors",
    "is_metadata_request",
    "metadata_url",
    "normalize_origins",
    "request_base",
]

# ASGI scopes and messages are plain dicts whose values vary by key.
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

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
#: Seconds a browser may cache a preflight answer.
CORS_MAX_AGE: Final = b"600"


def normalize_origins(origins: Iterable[str] | None) -> frozenset[str]:
    """Origins lower-cased, without a trailing slash, for comparison."""
    return frozenset(o.strip().lower().rstrip("/") for o in (origins or ()))


class Cors:
    """The CORS policy of one app: which origins, and the headers to add."""

    def __init__(self, origins: Iterable[str] | None) -> None:
        self.origins = normalize_origins(origins)

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
            (b"access-control-expose-headers", CORS_EXPOSED_HEADERS),
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
        allowed = [*CORS_REQUEST_HEADERS]
        allowed += [h for h in asked if h.startswith("mcp-param-") and h not in allowed]
        return [
            (b"access-control-allow-methods", f"{method}, OPTIONS".encode()),
            (b"access-control-allow-headers", ", ".join(allowed).encode("latin-1")),
            (b"access-control-max-age", CORS_MAX_AGE),
            (b"vary", b"Access-Control-Request-Method, Access-Control-Request-Headers"),
        ]


def request_base(scope: Scope, headers: dict[str, str]) -> str:
    """``scheme://host`` as the client addressed the app, plus its mount point."""
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("localhost", None)
        host = f"{server[0]}:{server[1]}" if server[1] else str(server[0])
    root: str = scope.get("root_path", "")
    return f"{scope.get('scheme', 'http')}://{host}{root.rstrip('/')}"


def metadata_url(
    metadata: ProtectedResource, scope: Scope, headers: dict[str, str], path: str
) -> str:
    """Where this request's client finds the metadata: a URL that reaches the app.

    At the origin's root this is RFC 9728 §3.1's well-known URL for the endpoint;
    below a mount point it is the same path under the mount point, so the header
    always leads to this app. An explicit ``resource`` gives its §3.1 URL (the host
    routes that one to the app).
    """
    if metadata.resource is not None:
        return well_known_url(metadata.resource)
    return f"{request_base(scope, headers)}{WELL_KNOWN}{path}"


def is_metadata_request(
    metadata: ProtectedResource | None, scope: Scope, route: str, path: str
) -> bool:
    """Whether the request is for the metadata document of the endpoint at ``path``."""
    if metadata is None:
        return False
    if route == WELL_KNOWN + path:
        return True
    if metadata.resource is None:
        return False
    return bool(scope.get("path") == urlsplit(well_known_url(metadata.resource)).path)
