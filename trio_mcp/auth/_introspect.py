"""RFC 7662 token introspection: asking the issuer about an opaque token.

The resource server authenticates as a client (HTTP Basic, RFC 7662 §2.1) and posts
the token. It accepts the answer only if ``active`` is true, ``aud`` holds the
audience (RFC 8707; an answer without ``aud`` is refused, since MCP requires the
audience check), ``iss`` (when present) is the issuer and ``exp`` (when present) is
not past. The caller caches accepted answers for at most ``cache_ttl`` seconds and
never past ``exp``, so a revoked token stops working within ``cache_ttl``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import trio

from ._jwt import InvalidToken, has_audience, numeric_date
from ._keys import FetchError, KeyCache, log
from ._settings import Introspection, Settings

__all__ = ["introspect"]


async def introspect(
    token: str, keys: KeyCache, settings: Settings, config: Introspection
) -> dict[str, Any]:
    """The introspection answer for an active token meant for this resource.

    Raises:
        InvalidToken: if the token is not active, not for this resource, expired,
            or the issuer cannot be asked (never a 5xx for the client).
    """
    try:
        # Discovery and the question together: one ``timeout`` in all.
        with trio.fail_after(settings.timeout):
            endpoints = await keys.resolve()
            if endpoints.introspection_endpoint is None:
                raise InvalidToken("the token is not a JWT and cannot be introspected")
            endpoint = endpoints.introspection_endpoint
            answer = await _ask(token, endpoint, settings, config)
    except (FetchError, trio.TooSlowError) as exc:
        log.warning("cannot introspect: %s", exc or type(exc).__name__)
        raise InvalidToken("the token could not be checked") from None
    if answer.get("active") is not True:
        raise InvalidToken("the token is not active")
    if not has_audience(answer.get("aud"), settings.audience):
        raise InvalidToken("the token is not meant for this resource (aud)")
    iss = answer.get("iss")
    if iss is not None and iss != settings.issuer:
        raise InvalidToken("the token was issued by another authorization server")
    if answer.get("exp") is not None:
        exp = numeric_date(answer.get("exp"))
        if exp is None or exp <= time.time() - settings.leeway:
            raise InvalidToken("the token has expired")
    return answer


async def _ask(
    token: str, endpoint: str, settings: Settings, config: Introspection
) -> dict[str, Any]:
    auth = (config.client_id, config.client_secret.reveal())
    data = {"token": token, "token_type_hint": "access_token"}
    try:
        with trio.fail_after(settings.timeout):
            async with httpx.AsyncClient(
                timeout=settings.timeout, follow_redirects=False
            ) as client:
                response = await client.post(
                    endpoint,
                    data=data,
                    auth=auth,
                    headers={"accept": "application/json"},
                )
        if response.status_code != 200:
            raise FetchError(f"HTTP {response.status_code}")
        answer = json.loads(response.content)
    except (httpx.HTTPError, trio.TooSlowError, ValueError, OSError, FetchError) as exc:
        # The exception names the endpoint at most, never the posted token.
        log.warning("introspection at %s failed: %s", endpoint, type(exc).__name__)
        raise InvalidToken("the token could not be checked") from None
    if not isinstance(answer, dict):
        raise InvalidToken("the token could not be checked")
    return answer
