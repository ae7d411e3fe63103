"""``BearerAuth``: the resource server a mounted app consults on every request.

One request: the ``Authorization`` header is parsed (``Bearer <token>`` or ``DPoP
<token>``); a token seen before and still valid is answered from a cache keyed by
its SHA-256 digest (the token is never logged or shown; the admission holds it for
token exchange); otherwise a JWT is verified against the issuer's keys and anything
else is introspected. The verified claims become a ``TokenPrincipal`` and the
token's scopes the capabilities it is granted. A token bound to a key (``cnf.jkt``)
then needs the ``DPoP`` scheme and a proof of this request (``_dpop``), checked on
every request, cached or not. Every refusal is a ``Challenge`` value the transport
sends as a 401 or 403.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from trio_mcp import Capability, ProtectedResource
from trio_mcp._http._oauth import Admission, Challenge, Presentation

from ._dpop import DPOP_ALGORITHMS, InvalidProof, binding_of, check_proof
from ._introspect import introspect
from ._jwt import InvalidToken, looks_like_jwt, numeric_date, verify_jwt
from ._keys import KeyCache, log
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
    401,
    "invalid_token",
    "the Authorization header must be 'Bearer <token>' or 'DPoP <token>'",
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
        dpop: ``"allowed"`` admits bearer tokens and DPoP-bound ones (RFC 9449,
            each with a proof); ``"required"`` refuses tokens not bound to a key.
        dpop_leeway: Seconds a DPoP proof's ``iat`` may be from now, either way;
            its ``jti`` is remembered as long (in the server's store), so a
            proof is used once.

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
        dpop: Literal["allowed", "required"] = "allowed",
        dpop_leeway: float = 300.0,
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
            dpop=dpop,
            dpop_leeway=dpop_leeway,
        )
        self.keys = KeyCache(self.settings)
        self._verified: dict[bytes, tuple[Admission, float, str | None]] = {}
        """Verified tokens by digest: the admission, until when, the key bound to."""
        supported = [*self.settings.scopes, *self.settings.required_scopes]
        self._metadata = ProtectedResource(
            authorization_servers=[issuer],
            scopes_supported=list(dict.fromkeys(supported)),
            resource=audience,
            dpop_signing_alg_values_supported=DPOP_ALGORITHMS,
            dpop_bound_access_tokens_required=dpop == "required",
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
    async def admit(
        self, authorization: str | None, request: Presentation | None = None
    ) -> Admission | Challenge:
        """Check one request's ``Authorization`` value and, for a token bound to a
        key, the ``request``'s DPoP proof (without ``request``, such a token is
        refused); a refusal as a value."""
        if authorization is None:
            return self._dpop_challenge(None, _MISSING.description)
        presented = _presented_token(authorization)
        if presented is None:
            return _MALFORMED
        scheme, token = presented
        digest = hashlib.sha256(token.encode()).digest()
        cached = self._verified.get(digest)
        if cached is not None and time.time() < cached[1]:
            admission, _, jkt = cached
        else:
            try:
                admission, until, jkt = await self._verify(token)
            except InvalidToken as exc:
                return Challenge(401, "invalid_token", str(exc))
            self._remember(digest, (admission, until, jkt))
        refusal = await self._possession(scheme, token, jkt, request)
        return refusal or self._required(admission)

    async def _possession(
        self, scheme: str, token: str, jkt: str | None, request: Presentation | None
    ) -> Challenge | None:
        """The refusal of a token used without the proof its binding asks for (RFC
        9449 §7), or of an unbound one under ``dpop="required"``; None to go on."""
        if jkt is None:
            if scheme == "dpop":
                return self._dpop_challenge(
                    "invalid_token",
                    "the token is not DPoP-bound: send it with the Bearer scheme",
                )
            if self.settings.dpop == "required":
                return self._dpop_challenge(
                    "invalid_token",
                    "this server accepts only DPoP-bound tokens: request the token "
                    "with a DPoP proof and send it with the DPoP scheme",
                )
            return None
        if scheme != "dpop":
            return self._dpop_challenge(
                "invalid_token",
                "the token is DPoP-bound: send it with the DPoP scheme and a proof",
            )
        if request is None:
            return self._dpop_challenge(
                "invalid_dpop_proof", "a DPoP proof cannot be checked on this transport"
            )
        try:
            proof = check_proof(
                request.proof,
                token=token,
                jkt=jkt,
                method=request.method,
                urls=(request.url, self.settings.audience),
                leeway=self.settings.dpop_leeway,
            )
        except InvalidProof as exc:
            return self._dpop_challenge("invalid_dpop_proof", str(exc))
        return await self._first_use(proof.replay_key(), proof.iat, request)

    async def _first_use(
        self, key: str, iat: float, request: Presentation
    ) -> Challenge | None:
        """Claim a proof's ``jti`` in the store for as long as its ``iat`` is
        accepted; the refusal of a replay, or of a proof the store cannot record
        (fail closed: a replay could not be told apart)."""
        # Until the iat is refused anyway, and a second more (past it, a replay
        # fails the iat check; a store rounds what is left up to a millisecond).
        seconds = iat + self.settings.dpop_leeway - time.time() + 1.0
        try:
            fresh = await request.store.claim(key, seconds)
        except Exception as exc:  # the store is down or full: refuse, never admit
            log.warning("DPoP: cannot record a proof (%s)", type(exc).__name__)
            return self._dpop_challenge(
                "invalid_dpop_proof",
                "the DPoP proof could not be checked for replay; retry with a new one",
            )
        if fresh:
            return None
        return self._dpop_challenge(
            "invalid_dpop_proof",
            "the DPoP proof was used before (jti): make a new proof for each request",
        )

    def _dpop_challenge(
        self,
        error: Literal["invalid_token", "invalid_dpop_proof"] | None,
        description: str,
    ) -> Challenge:
        """A 401 in RFC 9449 §7.1's ``DPoP`` scheme, naming the proof algorithms;
        under ``dpop="allowed"`` a request without a token gets the Bearer one."""
        if error is None and self.settings.dpop != "required":
            return _MISSING
        return Challenge(401, error, description, scheme="DPoP", algs=DPOP_ALGORITHMS)

    async def _verify(self, token: str) -> tuple[Admission, float, str | None]:
        """The admission of a token not seen before, until when it holds, and the
        key it is bound to (``cnf.jkt``; None when unbound).

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
            principal = principal_of(claims, settings.issuer, token)
            jkt = binding_of(claims)
        except (ValueError, InvalidProof) as exc:
            raise InvalidToken(str(exc)) from None
        granted = frozenset().union(
            *(settings.scopes.get(s, ()) for s in principal.scopes)
        )
        return Admission(principal, granted, principal.scopes), until, jkt

    def _remember(
        self, digest: bytes, entry: tuple[Admission, float, str | None]
    ) -> None:
        now = time.time()
        if entry[1] <= now:
            return
        if len(self._verified) >= MAX_CACHED:
            self._make_room(now)
        self._verified[digest] = entry

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


def _presented_token(value: str) -> tuple[str, str] | None:
    """The scheme (``bearer`` or ``dpop``, lower-cased) and token of ``Bearer
    <token>`` (RFC 6750 §2.1) or ``DPoP <token>`` (RFC 9449 §7.1); None if
    malformed."""
    scheme, _, token = value.strip().partition(" ")
    scheme, token = scheme.lower(), token.strip()
    if scheme not in ("bearer", "dpop") or not token or len(token) > MAX_TOKEN:
        return None
    if not token.isascii() or not token.isprintable() or " " in token:
        return None
    return scheme, token
