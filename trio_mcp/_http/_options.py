"""``HttpOptions``: the options ``Server.mount`` and ``Server.serve_http`` share.

One keyword list and one description, so the two methods cannot drift apart; both
take them as ``**options``, type-checked against this ``TypedDict``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from .._authority import Grants
from .._limits import LimitFields, Limits
from .._rate_limit import RateLimit

if TYPE_CHECKING:  # loaded with the app: importing trio_mcp loads no OAuth code
    from ._oauth import BearerGate, ProtectedResource

__all__ = ["HttpOptions", "PrincipalResolver", "http_limits"]

#: Resolves the principal from the ASGI scope (sync or async); None means anonymous.
#: (An ASGI scope is a dict whose value types vary by key: the ASGI specification,
#: not us, forces this Any.)
PrincipalResolver = Callable[[MutableMapping[str, Any]], object]


class HttpOptions(LimitFields, total=False):
    """The keyword options of ``Server.mount`` and ``Server.serve_http``.

    Besides these, the ``LimitFields`` are deprecated spellings of single ``Limits``
    fields (a ``DeprecationWarning``): give ``limits=Limits(...)``.

    Attributes:
        allow: Capabilities granted to callers, or a function of the principal.
        require_auth: Answer 401 to any request without a principal. Without it the
            app serves only requests that arrive on a loopback address
            (``scope["server"]``); others get 500 naming ``McpError.InsecureBinding``.
        allowed_hosts: ``Host`` values accepted besides ``localhost``, ``127.0.0.1``
            and ``[::1]`` (any port); ``"name"`` matches any port, ``"name:port"``
            one port, ``"*"`` turns the check off. It defends loopback servers
            against DNS rebinding.
        allowed_origins: ``Origin`` values accepted besides loopback and the allowed
            hosts (``"https://app.example"``; ``"*"`` accepts any). A request
            without ``Origin`` is not browser-initiated and passes.
        principal: A function of the ASGI scope (sync or async) returning the
            authenticated principal, or None; by default ``scope["user"]`` (when
            authenticated), else ``scope["auth"]``.
        limits: Every bound (``Limits``): over HTTP ``max_message_bytes`` is the
            largest request body (413 beyond), ``max_concurrent`` and
            ``max_waiting`` count calls across all requests (one more is answered
            at once with 503, ``Retry-After`` and -32000), ``keepalive_interval``
            paces listen streams' ``:`` comments, ``idle_timeout`` and
            ``body_timeout`` bound slow clients (docs/limits.md).
        resource_metadata: RFC 9728 metadata for a host that checks OAuth bearer
            tokens: served at ``/.well-known/oauth-protected-resource`` followed by
            the path, and named by the ``WWW-Authenticate`` of a 401.
        cors_origins: Browser origins allowed to call the endpoint cross-origin
            (``"*"`` allows any): preflight is answered, the MCP request headers
            allowed, the response headers exposed. Off by default.
        rate_limit: A token bucket per caller (``RateLimit(calls, per)``): the
            principal, else the client's address. A call beyond it gets 429 with
            ``Retry-After``. The buckets live in the server's ``store``.
        trusted_proxies: Addresses or networks (``"10.0.0.0/8"``) of the reverse
            proxies in front of the app: from them (only), the client's address
            for rate limits and listen bounds is read from ``forwarded_header``.
            ``RateLimit(trusted_proxies=...)`` is the older spelling.
        forwarded_header: The one header those proxies set to name the client:
            ``"x-forwarded-for"`` (the default) or ``"forwarded"`` (RFC 7239).
            Every other forwarding header a client sends is ignored.
        auth: An OAuth resource server (``trio_mcp.auth.BearerAuth``) that checks
            every request's bearer token. It implies ``require_auth``, supplies the
            principal and the grants of the token's scopes (together with
            ``allow``) and serves the RFC 9728 metadata.
    """

    allow: Grants
    require_auth: bool
    allowed_hosts: Iterable[str] | None
    allowed_origins: Iterable[str] | None
    principal: PrincipalResolver | None
    limits: Limits | None
    resource_metadata: ProtectedResource | None
    cors_origins: Iterable[str] | None
    rate_limit: RateLimit | None
    trusted_proxies: Iterable[str] | None
    forwarded_header: str | None
    metrics_path: str | None
    auth: BearerGate | None


def http_limits(options: HttpOptions) -> Limits:
    """The ``Limits`` the options give: ``limits`` (the defaults without it) with
    the ``LimitFields`` given beside it applied."""
    fields = {k: v for k, v in options.items() if k in LimitFields.__annotations__}
    return Limits.of(options.get("limits"), fields)  # type: ignore[arg-type]
