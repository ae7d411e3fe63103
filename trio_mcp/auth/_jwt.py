"""Verifying a JWT access token (RFC 9068) the way RFC 8725's best practices say.

In this order, each failure an ``InvalidToken`` whose reason names the check, never
the token or a claim's value:

1. the compact form parses and the header is a JSON object;
2. ``alg`` is on the allow-list (asymmetric only: never ``none``, never HMAC, so an
   HS256 token keyed with the issuer's public key fails here), and ``typ``, when
   present, is ``at+jwt`` or ``JWT``;
3. a key of the issuer's JWKS has the header's ``kid`` and a type that fits ``alg``;
4. the signature verifies (joserfc, with only that algorithm allowed);
5. the claims: ``iss`` is the issuer, ``aud`` holds the audience (RFC 8707), ``exp``
   is present and not past, ``nbf`` and ``iat`` not in the future (each with
   ``leeway`` seconds).
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jws import JWSRegistry, extract_compact

from ._keys import KeyCache
from ._settings import Settings

__all__ = ["InvalidToken", "looks_like_jwt", "verify_jwt"]

_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt", "application/jwt"})
_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


class InvalidToken(Exception):
    """A token failed a check; the message says which, and is safe to send."""


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has the JWS compact form (three base64url parts)."""
    parts = token.split(".")
    return len(parts) == 3 and all(parts[:2]) and all(set(p) <= _B64URL for p in parts)


async def verify_jwt(token: str, keys: KeyCache, settings: Settings) -> dict[str, Any]:
    """The claims of a token that passes every check of the module docstring.

    Raises:
        InvalidToken: naming the first check that failed.
    """
    try:
        header = extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("the token is not a well-formed JWT") from None
    alg = header.get("alg")
    if alg not in settings.algorithms:
        raise InvalidToken("the token's signing algorithm is not accepted")
    typ = header.get("typ")
    if typ is not None and (not isinstance(typ, str) or typ.lower() not in _TYPES):
        raise InvalidToken("the token's type (typ) is not an access token's")
    kid = header.get("kid")
    key = await keys.key(kid if isinstance(kid, str) else None)
    if key is None:
        raise InvalidToken("no key of the issuer matches the token's key id (kid)")
    registry = JWSRegistry(algorithms=[alg], strict_check_header=False)
    try:
        with _deprecated_name_allowed(alg):
            claims = jwt.decode(token, key, algorithms=[alg], registry=registry).claims
    except (JoseError, ValueError, TypeError):
        raise InvalidToken("the token's signature does not verify") from None
    check_claims(claims, settings)
    return claims


@contextlib.contextmanager
def _deprecated_name_allowed(alg: str) -> Iterator[None]:
    """Silence joserfc's warning for ``EdDSA``, which RFC 9864 deprecates in favour of
    ``Ed25519``/``Ed448`` but which issuers still sign with (a warning per token is
    noise for the operator, and an error under ``-W error``)."""
    if alg != "EdDSA":
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        yield


def check_claims(claims: Mapping[str, Any], settings: Settings) -> None:
    """Step 5: issuer, audience and times.

    Raises:
        InvalidToken: naming the claim that failed.
    """
    if claims.get("iss") != settings.issuer:
        raise InvalidToken("the token was issued by another authorization server")
    if not has_audience(claims.get("aud"), settings.audience):
        raise InvalidToken("the token is not meant for this resource (aud)")
    now, leeway = time.time(), settings.leeway
    exp = numeric_date(claims.get("exp"))
    if exp is None:
        raise InvalidToken("the token has no expiry (exp)")
    if exp <= now - leeway:
        raise InvalidToken("the token has expired")
    for name in ("nbf", "iat"):
        if claims.get(name) is None:
            continue
        value = numeric_date(claims.get(name))
        if value is None:
            raise InvalidToken(f"the token's {name} is not a number")
        if value > now + leeway:
            raise InvalidToken(f"the token is not valid yet ({name})")


def has_audience(aud: object, audience: str) -> bool:
    """Whether an ``aud`` claim (a string or a list of strings) holds ``audience``."""
    if isinstance(aud, str):
        return aud == audience
    return isinstance(aud, list) and audience in aud


def numeric_date(value: object) -> float | None:
    """A claim's NumericDate as a float; None if it is not one.

    Not one: a boolean, NaN or an infinity (Python's JSON reads ``NaN``, and
    ``exp: NaN`` compares false with everything), or an integer too large for a
    float (JSON integers have no bound: ``exp: 1e400`` written out in digits).
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
