"""OAuth at the HTTP edge: bearer tokens, challenges and RFC 9728 metadata.

The HTTP side of the 2026-07-28 authorization rules, in one module (the resource
server that checks tokens, ``trio_mcp.auth.BearerAuth``, is its own optional
package; ``import trio_mcp`` never loads it):

- ``BearerGate``, ``Admission``, ``Challenge``: what the app asks of a token
  checker and what it gets back: a request admitted (the principal, the
  capabilities its token's scopes grant), or refused with the RFC 6750 answer
  (401 ``invalid_token``, 403 ``insufficient_scope``).
- ``ProtectedResource``: RFC 9728 metadata (which authorization servers issue the
  tokens, which scopes the resource knows), for a host that checks tokens itself or
  for ``BearerAuth``; a 401 names where it is.
- ``Protection``: one app's use of them: admitting a request before its body is
  read, the caller of an admitted token (``Token`` in ``Caller.credentials``), the
  401 for a request without a principal, the metadata route, and ``StepUp``, a step
  of the app's edge just before ``grant`` that refuses a call whose declaration
  needs capabilities the token's scopes do not grant, but that mapped scopes would,
  with its 403 ``insufficient_scope`` before the handler runs (MCP revision
  2026-07-28, authorization: step-up). ``account`` leaves the ``refused`` receipt,
  as for every refusal; a capability no scope grants is left to ``grant`` (an
  ``isError`` result).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import urlsplit

import attrs

from .. import _checks as checks
from .._authority import resolve_grants
from .._dispatch import Call, Caller, Ending, Next
from .._errors import InvalidArgument
from .._json import encode_message
from .._protocol import _wire as wire
from ._response import Answer, Scope, Send, send_fault, send_json

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue
    from .._store import Store

__all__ = [
    "INSUFFICIENT_SCOPE_TYPE",
    "INVALID_TOKEN_TYPE",
    "WELL_KNOWN",
    "Admission",
    "BearerGate",
    "Challenge",
    "Presentation",
    "Presented",
    "ProtectedResource",
    "Protection",
    "Recheck",
    "StepUp",
    "Token",
    "well_known_url",
]

#: The receipt's ``error_type`` of a call refused for its token's scopes.
INSUFFICIENT_SCOPE_TYPE = "insufficient_scope"

#: RFC 9728 §3: the well-known URI suffix; the resource's path is appended to it.
WELL_KNOWN = "/.well-known/oauth-protected-resource"


@attrs.frozen
class Admission:
    """A request whose token passed every check."""

    principal: object
    """What handlers see as ``ToolContext.current().principal``."""
    granted: frozenset[str]
    """Names of the capabilities the token's scopes grant."""
    scopes: frozenset[str]
    """The token's scopes."""


@attrs.frozen
class Challenge:
    """An RFC 6750 refusal: 401 without a (good) token, 403 for too few scopes;
    with ``scheme="DPoP"``, RFC 9449's (§7.1: a bad proof, or a token that must be
    DPoP-bound).

    ``description`` is safe to show: it never holds the token or a claim value.
    """

    status: Literal[401, 403]
    error: Literal["invalid_token", "insufficient_scope", "invalid_dpop_proof"] | None
    description: str
    scope: tuple[str, ...] = ()
    """For 403: the scopes the call needs (the token's and the missing ones)."""
    scheme: Literal["Bearer", "DPoP"] = "Bearer"
    algs: tuple[str, ...] = ()
    """For ``DPoP``: the proof algorithms accepted (RFC 9449 §7.1 ``algs``)."""

    def header(self, metadata_url: str) -> bytes:
        """The ``WWW-Authenticate`` value (RFC 6750 §3, RFC 9449 §7.1, RFC 9728
        §5.1)."""
        parts = []
        if self.error is not None:
            parts.append(f'error="{self.error}"')
            parts.append(f'error_description="{_quoted(self.description)}"')
        if self.scope:
            parts.append(f'scope="{_quoted(" ".join(self.scope))}"')
        if self.algs:
            parts.append(f'algs="{" ".join(self.algs)}"')
        parts.append(f'resource_metadata="{_quoted(metadata_url)}"')
        value = f"{self.scheme} " + ", ".join(parts)
        return value.encode("latin-1", "replace")


@attrs.frozen(eq=False)
class Presentation:
    """What a request shows beside its token, for proof of possession (DPoP, RFC
    9449): its method, its URL (without query), its ``DPoP`` header, and the store
    where the proofs already seen are claimed (shared by every replica with
    ``RedisStore``). A gate asked without one cannot check a proof, so it refuses
    every token bound to a key."""

    method: str
    url: str
    proof: str | None = attrs.field(repr=False)
    store: Store


class BearerGate(Protocol):
    """A bearer-token checker a mounted app runs before each request."""

    @property
    def resource_metadata(self) -> ProtectedResource:
        """The RFC 9728 document of the resource it protects."""

    @property
    def hide_ungranted(self) -> bool:
        """Whether lists show a caller only what their token can use."""

    async def admit(
        self, authorization: str | None, request: Presentation | None = None
    ) -> Admission | Challenge:
        """Check the ``Authorization`` header's value (None when absent); for a
        token bound to a key, the ``request``'s proof too.

        Never raises for anything a client sent; never waits longer than its
        timeouts.
        """

    def step_up(self, admission: Admission, missing: Iterable[str]) -> Challenge | None:
        """The 403 for a call missing capabilities that scopes would grant.

        None when some missing capability is granted by no scope (the call is then
        refused the ordinary way).
        """


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    """A tuple of strings; a bare string (a common slip) is refused, not split."""
    if isinstance(values, str):
        raise InvalidArgument(f"expected a list of strings, got the string {values!r}")
    return checks.as_tuple(values, "ProtectedResource", "a list of strings")


def _http_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:  # an unbalanced IPv6 bracket
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _check_servers(
    instance: object,
    attribute: attrs.Attribute[tuple[str, ...]],
    value: tuple[str, ...],
) -> None:
    if not value:
        raise InvalidArgument(
            "authorization_servers needs at least one issuer URL, such as "
            "'https://auth.example.com'"
        )
    for url in value:
        if (
            not isinstance(url, str)
            or not _http_url(url)
            or urlsplit(url).query
            or urlsplit(url).fragment
        ):
            raise InvalidArgument(
                f"authorization server {url!r} must be an http(s) issuer URL "
                "without query or fragment (RFC 8414 §2)"
            )


def _check_resource(
    instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None and (
        not isinstance(value, str) or not _http_url(value) or urlsplit(value).fragment
    ):
        raise InvalidArgument(
            f"resource {value!r} must be the absolute http(s) URL clients use for "
            "the MCP endpoint, without fragment (RFC 9728 §2)"
        )


def well_known_url(resource: str) -> str:
    """The metadata URL RFC 9728 §3.1 derives from a resource identifier."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}{query}"


@attrs.frozen
class ProtectedResource:
    """RFC 9728 protected resource metadata, served by ``Server.mount``.

    Args:
        authorization_servers: Issuer URLs of the authorization servers whose
            tokens the host accepts (at least one).
        scopes_supported: Scopes the host checks; also sent as the ``scope`` of a
            401's ``WWW-Authenticate``. Empty leaves both out.
        resource: The resource identifier, the absolute URL clients use for the MCP
            endpoint. By default it is built from each request (scheme, ``Host``,
            mount point and path); set it behind a proxy that changes any of them.
        resource_name: A human-readable name for the resource.
        resource_documentation: A URL of documentation for developers.
        dpop_signing_alg_values_supported: The DPoP proof algorithms accepted (RFC
            9449); empty leaves it out.
        dpop_bound_access_tokens_required: Whether every token must be DPoP-bound.

    Raises:
        McpError.InvalidArgument: if there is no authorization server, a URL is not
            an absolute http(s) URL, or a list argument is given as one string
            (also a ``ValueError`` and a ``TypeError``, what this raised before).
    """

    authorization_servers: tuple[str, ...] = attrs.field(
        converter=_strings, validator=_check_servers
    )
    scopes_supported: tuple[str, ...] = attrs.field(
        default=(), converter=_strings, validator=checks.each(checks.text, "a str")
    )
    resource: str | None = attrs.field(default=None, validator=_check_resource)
    resource_name: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    resource_documentation: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    dpop_signing_alg_values_supported: tuple[str, ...] = attrs.field(
        default=(), converter=_strings, validator=checks.each(checks.text, "a str")
    )
    dpop_bound_access_tokens_required: bool = attrs.field(
        default=False, validator=checks.flag
    )

    def document(self, resource: str) -> JsonObject:
        """The metadata document (RFC 9728 §2) for the resource identifier given."""
        doc: JsonObject = {
            "resource": self.resource or resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        if self.dpop_signing_alg_values_supported:
            algs: list[JsonValue] = list(self.dpop_signing_alg_values_supported)
            doc["dpop_signing_alg_values_supported"] = algs
        if self.dpop_bound_access_tokens_required:
            doc["dpop_bound_access_tokens_required"] = True
        return doc

    def challenge(self, metadata_url: str) -> bytes:
        """The ``WWW-Authenticate`` value of a 401 (RFC 9728 §5.1, RFC 6750 §3)."""
        value = f'Bearer resource_metadata="{_quoted(metadata_url)}"'
        if self.scopes_supported:
            value += f', scope="{_quoted(" ".join(self.scopes_supported))}"'
        return value.encode("latin-1", "replace")


def _quoted(text: str) -> str:
    """An RFC 9110 quoted-string body: backslash and double quote escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


@attrs.frozen(eq=False)
class Token:
    """The bearer token a caller presented: its admission, and where the resource's
    RFC 9728 metadata is (named by every challenge)."""

    admission: Admission
    metadata_url: str


@attrs.frozen(eq=False)
class Presented(Token):
    """A token a stream transport (WebSocket) admitted at its handshake, kept for
    the connection so each call checks it again (``Recheck``): a connection may
    outlive the token. Never shown: not in a repr, a log or a receipt."""

    authorization: str = attrs.field(repr=False)


#: The receipt's ``error_type`` of a call whose token no longer passes.
INVALID_TOKEN_TYPE = "invalid_token"


@attrs.frozen(eq=False)
class Recheck:
    """The step of a stream transport that checks the connection's token again
    for each call (answered from the gate's cache while it holds): a token that
    expired or was revoked since the handshake ends the call, refused."""

    gate: BearerGate

    async def __call__(self, call: Call, next: Next) -> Ending:
        token = call.caller.credentials
        if isinstance(token, Presented):
            admission = await self.gate.admit(token.authorization)
            if isinstance(admission, Challenge):
                ending = Ending.refused(
                    f"{admission.description}; reconnect with a valid token",
                    http_status=401,
                    code=wire.UNAUTHENTICATED,
                )
                return attrs.evolve(ending, error_type=INVALID_TOKEN_TYPE)
        return await next(call)


@attrs.frozen(eq=False)
class StepUp:
    """The step that answers 403 ``insufficient_scope`` where scopes would grant
    what the call lacks."""

    gate: BearerGate

    async def __call__(self, call: Call, next: Next) -> Ending:
        missing = call.required - call.granted
        token = call.caller.credentials
        if missing and isinstance(token, Token):
            challenge = self.gate.step_up(token.admission, missing)
            if challenge is not None:
                header = challenge.header(token.metadata_url).decode("latin-1")
                ending = Ending.refused(
                    challenge.description,
                    headers=(("www-authenticate", header),),
                    http_status=403,
                )
                return attrs.evolve(ending, error_type=INSUFFICIENT_SCOPE_TYPE)
        return await next(call)


class Protection:
    """The OAuth side of one app: its token checker and its RFC 9728 metadata.

    Args:
        auth: Checks bearer tokens (``auth=``), or None.
        metadata: The ``resource_metadata=`` document; with ``auth`` and none given,
            the checker's own.
        path: The app's MCP endpoint, whose metadata this is.
        store: Where seen DPoP proofs are claimed (the server's store); without
            one, a token bound to a key is refused.
    """

    def __init__(
        self,
        auth: BearerGate | None,
        metadata: ProtectedResource | None,
        path: str,
        store: Store | None = None,
    ) -> None:
        self.auth = auth
        self.store = store
        self.metadata = metadata
        if auth is not None and metadata is None:
            self.metadata = auth.resource_metadata
        self.path = path
        self.steps: tuple[StepUp | Recheck, ...] = (
            () if auth is None else (StepUp(auth),)
        )
        """The steps the app's edge takes from this: ``StepUp`` with ``auth``."""
        self.stream_steps: tuple[StepUp | Recheck, ...] = (
            () if auth is None else (Recheck(auth), StepUp(auth))
        )
        """A stream transport's: the connection's token checked again, then
        ``StepUp``."""

    async def admit(
        self, scope: Scope, headers: dict[str, str]
    ) -> tuple[Admission | None, Answer | None]:
        """The bearer token's admission, or the 401/403 refusing it (with ``auth``)."""
        if self.auth is None:
            return None, None
        request = None
        if self.store is not None:
            url = f"{request_base(scope, headers)}{self.path}"
            request = Presentation(
                str(scope.get("method", "")), url, headers.get("dpop"), self.store
            )
        admission = await self.auth.admit(headers.get("authorization"), request)
        if isinstance(admission, Challenge):
            return None, self._refusal(admission, scope, headers)
        return admission, None

    def caller(
        self,
        admission: Admission,
        base: Caller,
        scope: Scope,
        headers: dict[str, str],
    ) -> Caller:
        """The caller of an admitted request: its principal, the token's grants and
        ``allow``, the token; with ``hide_ungranted``, lists show only what those
        grants can use."""
        assert self.auth is not None
        granted = admission.granted | resolve_grants(base.allow, admission.principal)
        return attrs.evolve(
            base,
            principal=admission.principal,
            allow=granted,
            visible=granted if self.auth.hide_ungranted else None,
            credentials=Token(admission, self.metadata_url(scope, headers)),
        )

    def challenge(self, scope: Scope, headers: dict[str, str]) -> Answer:
        """The 401 for a request without a principal, naming the RFC 9728 metadata."""
        described = self.metadata
        header = (
            b"Bearer"
            if described is None
            else described.challenge(self.metadata_url(scope, headers))
        )
        return partial(
            send_fault,
            status=401,
            text="authentication required",
            code=wire.UNAUTHENTICATED,
            extra=[(b"www-authenticate", header)],
        )

    def _refusal(
        self, challenge: Challenge, scope: Scope, headers: dict[str, str]
    ) -> Answer:
        """The 401 or 403 of a ``Challenge`` (RFC 6750 §3), naming the metadata."""
        where = self.metadata_url(scope, headers)
        return partial(
            send_fault,
            status=challenge.status,
            text=challenge.description,
            code=wire.UNAUTHENTICATED if challenge.status == 401 else wire.REFUSED,
            extra=[(b"www-authenticate", challenge.header(where))],
        )

    # -- RFC 9728 metadata -------------------------------------------------------------
    def is_metadata_request(self, scope: Scope, route: str) -> bool:
        """Whether the request is for the metadata document of the endpoint."""
        metadata = self.metadata
        if metadata is None:
            return False
        if route == WELL_KNOWN + self.path:
            return True
        if metadata.resource is None:
            return False
        return bool(
            scope.get("path") == urlsplit(well_known_url(metadata.resource)).path
        )

    async def send_metadata(
        self, scope: Scope, headers: dict[str, str], send: Send
    ) -> None:
        """The RFC 9728 document, for the resource identifier this request used."""
        assert self.metadata is not None
        resource = f"{request_base(scope, headers)}{self.path}"
        await send_json(send, 200, encode_message(self.metadata.document(resource)))

    def metadata_url(self, scope: Scope, headers: dict[str, str]) -> str:
        """Where this request's client finds the metadata: a URL that reaches the app.

        At the origin's root this is RFC 9728 §3.1's well-known URL for the
        endpoint; below a mount point it is the same path under the mount point, so
        the header always leads to this app. An explicit ``resource`` gives its
        §3.1 URL (the host routes that one to the app).
        """
        metadata = self.metadata
        if metadata is not None and metadata.resource is not None:
            return well_known_url(metadata.resource)
        return f"{request_base(scope, headers)}{WELL_KNOWN}{self.path}"


def request_base(scope: Scope, headers: dict[str, str]) -> str:
    """``scheme://host`` as the client addressed the app, plus its mount point."""
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("localhost", None)
        host = f"{server[0]}:{server[1]}" if server[1] else str(server[0])
    root: str = scope.get("root_path", "")
    return f"{scope.get('scheme', 'http')}://{host}{root.rstrip('/')}"
