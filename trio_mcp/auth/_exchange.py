"""``TokenExchange``: a token aimed at an upstream, for the caller (RFC 8693).

A gateway must never forward its caller's token (the audience check of the upstream
would refuse it, and rightly: that is token passthrough). It asks its authorization
server instead, as a client of its own, to exchange the caller's access token for
one whose audience is the upstream: ``Upstream(url, auth=TokenExchange(...))``.

One exchange, for a principal ``BearerAuth`` admitted (``TokenPrincipal.token``):

1. no principal (the gateway's own catalog requests), or one without a verified
   token: no token, so the upstream call goes without ``Authorization``;
2. the cache: a digest keyed by the exchange's settings, the principal and the
   caller's token (HMAC with the state key: no token, not even its plain hash, is
   in a key), its value sealed with AES-256-GCM (bound to the key), kept until
   ``EARLY`` before the exchanged token expires; in the server's ``RedisStore`` when
   one is given, so replicas share it;
3. otherwise a POST to the token endpoint (client authentication by HTTP Basic;
   ``grant_type`` token-exchange, ``subject_token_type`` access token, the
   ``audience``, ``resource`` and ``scope`` given), within ``timeout``; the answer
   must be a 200 JSON object with a bearer ``access_token``.

A failure is ``ExchangeFailed``, whose message names the endpoint and what went
wrong (an HTTP status, the OAuth ``error`` code), never a token; the gateway turns
it into a tool error naming the upstream. Neither token is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx
import trio

from trio_mcp import McpError, Secret
from trio_mcp import _checks as checks
from trio_mcp._protocol._state import KeyConfig, parse_keys
from trio_mcp._store import MemoryStore, Store

from ._principal import TokenPrincipal
from ._settings import _finite, _url

__all__ = ["ExchangeFailed", "TokenExchange"]

log = logging.getLogger("trio_mcp.auth")

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
#: The issued token types taken as an access token (RFC 8693 §3).
ISSUED_TYPES = frozenset({ACCESS_TOKEN_TYPE, "urn:ietf:params:oauth:token-type:jwt"})
#: Seconds before its expiry that an exchanged token stops being reused (at most
#: a tenth of its lifetime for short-lived ones).
EARLY = 30.0
#: Largest answer read from the token endpoint (bytes).
MAX_ANSWER = 65_536
#: Longest exchanged token accepted (characters), as ``BearerAuth`` does.
MAX_TOKEN = 16_384
_SEALING = b"trio-mcp token exchange: sealing v1"
_NAMING = b"trio-mcp token exchange: cache keys v1"


class ExchangeFailed(McpError):
    """The authorization server did not exchange the caller's token; the message
    names the token endpoint and why, never a token."""


def _secret(value: str | Secret[str]) -> Secret[str]:
    if isinstance(value, Secret):
        return value
    return Secret(checks.string(value, "TokenExchange(client_secret=...)"))


@attrs.frozen(eq=False, repr=False)
class TokenExchange:
    """``Upstream(auth=...)``: the caller's access token exchanged for one aimed at
    the upstream (RFC 8693), cached per principal and audience.

    Args:
        token_endpoint: The authorization server's token endpoint.
        client_id: The gateway's client id there.
        client_secret: Its secret (HTTP Basic); held as a ``Secret``.
        audience: The upstream's audience (RFC 8693 ``audience``), if the
            authorization server names it so.
        resource: The upstream's resource URI (RFC 8707 ``resource``).
        scope: The scopes asked for the upstream (space-separated).
        timeout: Most seconds one exchange may take.
        store: Where exchanged tokens are cached: the server's ``RedisStore`` to
            share them across replicas; by default this process's memory.
        state_key: The key sealing the cache, as ``Server(state_key=...)`` takes
            it (by default ``TRIO_MCP_STATE_KEY``, else a random one: replicas
            sharing a store need the same key to share its entries).

    Raises:
        McpError.InvalidArgument: for an endpoint that is not an absolute http(s)
            URL, an empty client id, a timeout that is not a positive number.
    """

    token_endpoint: str = attrs.field()
    client_id: str = attrs.field(validator=checks.text)
    client_secret: Secret[str] = attrs.field(converter=_secret)
    audience: str | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional(checks.text)
    )
    resource: str | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional(checks.text)
    )
    scope: str | None = attrs.field(
        default=None, kw_only=True, validator=checks.optional(checks.text)
    )
    timeout: float = attrs.field(default=5.0, kw_only=True)
    store: Store = attrs.field(factory=MemoryStore, kw_only=True)
    state_key: KeyConfig = attrs.field(default=None, kw_only=True)
    _sealing: bytes = attrs.field(init=False)
    """The key sealing the cached tokens. Derived from the first state key only:
    the cache keys are too, so after a rotation every entry is a miss (and
    exchanged again), never opened with an old key."""
    _naming: bytes = attrs.field(init=False)
    """The key of the cache keys' HMAC."""

    def __attrs_post_init__(self) -> None:
        _url("token_endpoint", self.token_endpoint)
        if not self.client_id:
            raise checks.invalid("TokenExchange(client_id=...)", "a client id", "")
        if not _finite(self.timeout) or self.timeout <= 0:
            raise checks.invalid(
                "TokenExchange(timeout=...)", "a finite number > 0", self.timeout
            )
        if not isinstance(self.store, Store):
            raise checks.invalid(
                "TokenExchange(store=...)", "a MemoryStore or a RedisStore", self.store
            )
        key = parse_keys(self.state_key)[0]
        sealing = hmac.new(key, _SEALING, hashlib.sha256).digest()
        object.__setattr__(self, "_sealing", sealing)
        naming = hmac.new(key, _NAMING, hashlib.sha256).digest()
        object.__setattr__(self, "_naming", naming)

    def __repr__(self) -> str:
        target = self.audience or self.resource or ""
        return f"TokenExchange({self.token_endpoint!r}, audience={target!r})"

    async def __call__(self, principal: object | None) -> str | None:
        """The upstream's token for ``principal``; None without a caller's token.

        Raises:
            ExchangeFailed: if the authorization server does not exchange it.
        """
        if not isinstance(principal, TokenPrincipal) or principal.token is None:
            return None
        subject = principal.token.reveal()
        key = self._cache_key(principal, subject)
        cached = await self._cached(key)
        if cached is not None:
            return cached
        token, lifetime = await self._exchange(subject)
        keep = lifetime - min(EARLY, lifetime / 10)
        if keep > 0:
            await self._remember(key, token, keep)
        return token

    # -- the cache ------------------------------------------------------------------------
    def _cache_key(self, principal: TokenPrincipal, subject: str) -> str:
        """A digest of who asks, for what, with which token: names no value."""
        parts = [
            self.token_endpoint,
            self.client_id,
            self.audience or "",
            self.resource or "",
            self.scope or "",
            principal.issuer,
            principal.id,
            subject,
        ]
        text = "\0".join(parts).encode("utf-8", "surrogatepass")
        return "token-exchange:" + hmac.new(self._naming, text, "sha256").hexdigest()

    async def _cached(self, key: str) -> str | None:
        """The token cached under ``key`` that opens with a key held, or None."""
        try:
            sealed = await self.store.get(key)
        except Exception as exc:  # a store that is down is a miss, never a failure
            log.warning("token exchange: the cache is unreachable (%s)", _kind(exc))
            return None
        if sealed is None:
            return None
        return _open(self._sealing, key, sealed)

    async def _remember(self, key: str, token: str, seconds: float) -> None:
        sealed = _seal(self._sealing, key, token)
        try:
            await self.store.put(key, sealed, seconds)
        except Exception as exc:
            log.warning("token exchange: cannot cache a token (%s)", _kind(exc))

    # -- the exchange -----------------------------------------------------------------------
    async def _exchange(self, subject: str) -> tuple[str, float]:
        """The exchanged token and its lifetime in seconds (0 when not said).

        Raises:
            ExchangeFailed: naming the endpoint and why.
        """
        form = {
            "grant_type": GRANT_TYPE,
            "subject_token": subject,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
        }
        for name in ("audience", "resource", "scope"):
            value = getattr(self, name)
            if value is not None:
                form[name] = value
        answer = await self._post(form)
        return _issued(answer, self._where())

    async def _post(self, form: Mapping[str, str]) -> dict[str, Any]:
        where = self._where()
        auth = (self.client_id, self.client_secret.reveal())
        try:
            with trio.fail_after(self.timeout):
                async with httpx.AsyncClient(
                    timeout=self.timeout, follow_redirects=False
                ) as client:
                    response = await client.post(
                        self.token_endpoint,
                        data=form,
                        auth=auth,
                        headers={"accept": "application/json"},
                    )
        except (httpx.HTTPError, trio.TooSlowError, OSError) as exc:
            raise _failed(f"{where} could not be reached ({_kind(exc)})") from None
        body = response.content[: MAX_ANSWER + 1]
        try:
            answer = json.loads(body) if len(body) <= MAX_ANSWER else None
        except ValueError:
            answer = None
        if response.status_code != 200:
            code = answer.get("error") if isinstance(answer, dict) else None
            said = f", error {code}" if _safe_code(code) else ""
            raise _failed(f"{where} answered HTTP {response.status_code}{said}")
        if not isinstance(answer, dict):
            raise _failed(f"{where} answered something that is not a JSON object")
        return answer

    def _where(self) -> str:
        parts = urlsplit(self.token_endpoint)
        return f"the token endpoint {parts.scheme}://{parts.netloc}{parts.path}"


def _issued(answer: Mapping[str, Any], where: str) -> tuple[str, float]:
    """The access token of a token endpoint's answer, and its lifetime.

    Raises:
        ExchangeFailed: if it is not a bearer access token.
    """
    token = answer.get("access_token")
    if (
        not isinstance(token, str)
        or not token
        or len(token) > MAX_TOKEN
        or not token.isascii()
        or not token.isprintable()
        or " " in token
    ):
        raise _failed(f"{where} answered without a usable access_token")
    token_type = answer.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise _failed(f"{where} issued a token that is not a bearer token")
    issued = answer.get("issued_token_type")
    if issued is not None and (
        not isinstance(issued, str) or issued not in ISSUED_TYPES
    ):
        raise _failed(f"{where} issued a token that is not an access token")
    expires = answer.get("expires_in")
    lifetime = 0.0
    if isinstance(expires, int | float) and not isinstance(expires, bool):
        lifetime = float(expires) if math.isfinite(expires) and expires > 0 else 0.0
    return token, lifetime


def _failed(message: str) -> ExchangeFailed:
    log.warning("token exchange failed: %s", message)
    return ExchangeFailed(f"token exchange failed: {message}")


def _kind(exc: BaseException) -> str:
    """An exception's type alone: its text may hold a URL with a query, or worse."""
    return type(exc).__name__


def _safe_code(code: object) -> bool:
    """An OAuth error code (RFC 6749 §5.2: printable ASCII, no quote or backslash),
    short enough to say; anything else is left out."""
    return (
        isinstance(code, str)
        and 0 < len(code) <= 64
        and all(0x20 <= ord(c) <= 0x7E and c not in '"\\' for c in code)
    )


def _seal(key: bytes, bound: str, token: str) -> bytes:
    """``token`` sealed with AES-256-GCM under ``key``, bound to ``bound`` (the
    cache key: an entry moved to another key does not open)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(12)
    return nonce + AESGCM(key).encrypt(nonce, token.encode(), bound.encode())


def _open(key: bytes, bound: str, sealed: bytes) -> str | None:
    """The token ``_seal`` sealed with ``key`` for ``bound``, or None (another
    key, another cache key, or bytes that are no sealed token)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce, body = sealed[:12], sealed[12:]
    try:
        return AESGCM(key).decrypt(nonce, body, bound.encode()).decode()
    except (InvalidTag, ValueError):
        return None
