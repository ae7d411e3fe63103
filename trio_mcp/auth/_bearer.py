"""``BearerAuth``: the resource server a mounted app consults on every request.

One request: the ``Authorization`` header is parsed (``Bearer <token>``); a token
seen before and still valid is answered from a cache keyed by its SHA-256 digest
(the token itself is never stored, logged or shown); otherwise a JWT is verified
against the issuer's keys and anything else is introspected. The verified claims
become a ``TokenPrincipal`` and the token's scopes the capabilities it is granted.
Every refusal is a ``Challenge`` value the transport sends as a 401 or 403.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Iterable, Mapping
from typing import Any

from trio_mcp import Capability, ProtectedResource
from trio_mcp._http._oauth import Admission, Challenge

from ._introspect import introspect
from ._jwt import InvalidToken, looks_like_jwt, numeric_date, verify_jwt
from ._keys import KeyCache
from ._principal import principal_of
from ._settings import Introspection, Settings, algorithms_of, scope_map, scope_names

__all__ = ["BearerAuth"]

#: Longest token accepted (characters); real access tokens are a few KiB at most.
MAX_TOKEN = 16_384
#: Most verified tokens remembered at once; the oldest go first.
MAX_CACHED = 10_000
#: How many a full cache keeps (the unexpired, newest first) when it makes room.
KEPT_WHEN_FULL = MAX_CACHED - MAX_CACHED // 8
_MISSING = Challenge(401, None, "authentication required: send a bearer token")
_MALFORMED = Challenge(
    401, "invalid_token", "the Authorization header must be 'Bearer <token>'"
)


class BearerAuth:
    """Check OAuth 2.1 bearer tokens for one MCP endpoint (an RFC 9728 resource).

    Args:
        issuer: The authorization server's issuer URL. Its metadata (RFC 8414, else
            OpenID Connect discovery) names ``jwks_uri`` and the introspection
            endpoint unless they are given.
        audience: This server's canonical URI (RFC 8707 resource); a token whose
            ``aud`` does not hold it is refused.
        scopes: The OAuth scope that grants each capability.
        required_scopes: Scopes every request needs (a 403 names them otherwise).
        jwks_uri: Where the issuer's signing keys are, if not from its metadata.
        introspection: How to introspect tokens that are not JWTs (RFC 7662).
        algorithms: The JWS algorithms accepted; by default the asymmetric ones.
            ``none`` and HMAC are never accepted.
        leeway: Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
        hide_ungranted: Lists show each caller only what their token can use.
        jwks_ttl: Seconds the issuer's keys are kept before they are fetched again.
        jwks_min_interval: Fewest seconds between two fetches of the keys, for any
            reason (a token with an unknown ``kid`` asks again only after it, and an
            issuer that is down is not asked on every request).
        timeout: Most seconds one request to the issuer may take.

    Raises:
        McpError.InvalidArgument: for a URL that is not absolute http(s), a
            forbidden or unknown algorithm, a negative number, a scope mapped to
            something that is not a ``Capability`` (also a ``ValueError`` and a
            ``TypeError``, what this raised before).
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        scopes: Mapping[str, Iterable[Capability]] | None = None,
        required_scopes: Iterable[str] = (),
        jwks_uri: str | None = None,
        introspection: Introspection | None = None,
        algorithms: Iterable[str] | None = None,
        leeway: float = 30.0,
        hide_ungranted: bool = False,
        jwks_ttl: float = 600.0,
        jwks_min_interval: float = 10.0,
        timeout: float = 5.0,
    ) -> None:
        self.settings = Settings(
            issuer=issuer,
            audience=audience,
            scopes=scope_map(scopes),
            required_scopes=scope_names("required_scopes", required_scopes),
            jwks_uri=jwks_uri,
            introspection=introspection,
            algorithms=algorithms_of(algorithms),
            leeway=leeway,
            hide_ungranted=hide_ungranted,
            jwks_ttl=jwks_ttl,
            jwks_min_interval=jwks_min_interval,
            timeout=timeout,
        )
        self.keys = KeyCache(self.settings)
        self._verified: dict[bytes, tuple[Admission, float]] = {}
        supported = [*self.settings.scopes, *self.settings.required_scopes]
        self._metadata = ProtectedResource(
            authorization_servers=[issuer],
            scopes_supported=list(dict.fromkeys(supported)),
            resource=audience,
        )

    def __repr__(self) -> str:
        s = self.settings
        return f"BearerAuth(issuer={s.issuer!r}, audience={s.audience!r})"

    @property
    def resource_metadata(self) -> ProtectedResource:
        """The RFC 9728 document: ``resource`` = audience, the issuer, the scopes."""
        return self._metadata

    @property
    def hide_ungranted(self) -> bool:
        """Whether lists show each caller only what their token can use."""
        return self.settings.hide_ungranted

    # -- admission --------------------------------------------------------------------
    async def admit(self, authorization: str | None) -> Admission | Challenge:
        """Check one request's ``Authorization`` value; a refusal as a value."""
        if authorization is None:
            return _MISSING
        token = _bearer_token(authorization)
        if token is None:
            return _MALFORMED
        digest = hashlib.sha256(token.encode()).digest()
        cached = self._verified.get(digest)
        if cached is not None and time.time() < cached[1]:
            admission = cached[0]
        else:
            try:
                admission, until = await self._verify(token)
            except InvalidToken as exc:
                return Challenge(401, "invalid_token", str(exc))
            self._remember(digest, admission, until)
        return self._required(admission)

    async def _verify(self, token: str) -> tuple[Admission, float]:
        """The admission of a token not seen before, and until when it holds.

        Raises:
            InvalidToken: if any check fails.
        """
        settings = self.settings
        claims: Mapping[str, Any]
        if looks_like_jwt(token):
            claims = await verify_jwt(token, self.keys, settings)
            until = numeric_date(claims["exp"]) or 0.0
        elif settings.introspection is not None:
            config = settings.introspection
            claims = await introspect(token, self.keys, settings, config)
            until = time.time() + config.cache_ttl
            exp = numeric_date(claims.get("exp"))
            if exp is not None:
                until = min(until, exp)
        else:
            raise InvalidToken("the token is not a JWT")
        try:
            principal = principal_of(claims, settings.issuer)
        except ValueError as exc:
            raise InvalidToken(str(exc)) from None
        granted = frozenset().union(
            *(settings.scopes.get(s, ()) for s in principal.scopes)
        )
        return Admission(principal, granted, principal.scopes), until

    def _remember(self, digest: bytes, admission: Admission, until: float) -> None:
        now = time.time()
        if until <= now:
            return
        if len(self._verified) >= MAX_CACHED:
            self._make_room(now)
        self._verified[digest] = (admission, until)

    def _make_room(self, now: float) -> None:
        """Forget the expired tokens, then the oldest down to ``KEPT_WHEN_FULL``.

        A full cache is swept once per ``MAX_CACHED - KEPT_WHEN_FULL`` new tokens,
        not on every one: with 10,000 tokens still valid, sweeping on each new token
        cost 1.5 ms per token instead of 0.07.
        """
        kept = {k: v for k, v in self._verified.items() if v[1] > now}
        for digest in list(itertools.islice(kept, max(0, len(kept) - KEPT_WHEN_FULL))):
            del kept[digest]
        self._verified = kept

    def _required(self, admission: Admission) -> Admission | Challenge:
        """The 403 for a token without every ``required_scopes``."""
        required = self.settings.required_scopes
        if set(required) <= admission.scopes:
            return admission
        return Challenge(
            403,
            "insufficient_scope",
            "the token lacks scopes every request needs",
            _scope_list(admission.scopes, required),
        )

    # -- step-up ------------------------------------------------------------------------
    def step_up(self, admission: Admission, missing: Iterable[str]) -> Challenge | None:
        """The 403 naming the scopes that would grant ``missing``; None if none can."""
        needed: list[str] = []
        for cap in sorted(missing):
            granting = [s for s, caps in self.settings.scopes.items() if cap in caps]
            if not granting:
                return None
            if not set(granting) & set(needed):
                needed.append(granting[0])
        return Challenge(
            403,
            "insufficient_scope",
            "the token's scopes do not grant what this call needs",
            _scope_list(admission.scopes, needed),
        )


def _scope_list(held: Iterable[str], needed: Iterable[str]) -> tuple[str, ...]:
    """The token's scopes, then the missing ones, each once."""
    return tuple(dict.fromkeys([*sorted(held), *needed]))


def _bearer_token(value: str) -> str | None:
    """The token of ``Bearer <token>`` (RFC 6750 §2.1), or None if malformed."""
    scheme, _, token = value.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN:
        return None
    if not token.isascii() or not token.isprintable() or " " in token:
        return None
    return token
