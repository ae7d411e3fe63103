"""Verifying a JWT access token (RFC 9068) the way RFC 8725's best practices say.

In this order, each failure an ``InvalidToken`` whose reason names the check, never
the token or a claim's value:

1. the compact form parses (within joserfc's size limits, RFC 7797 ``b64`` honoured)
   and the header is a JSON object naming ``alg``;
2. ``alg`` is on the allow-list (asymmetric only: never ``none``, never HMAC, so an
   HS256 token keyed with the issuer's public key fails here), and ``typ``, when
   present, is ``at+jwt`` or ``JWT``;
3. a key of the issuer's JWKS has the header's ``kid`` and a type that fits ``alg``;
4. the header's ``crit`` and registered members are well typed, the key fits the
   algorithm (type, curve, ``use``, ``alg``, ``key_ops``) and the signature verifies
   (joserfc, with only that algorithm allowed), then the payload is a JSON object;
5. the claims: ``iss`` is the issuer, ``aud`` holds the audience (RFC 8707), ``exp``
   is present and not past, ``nbf`` and ``iat`` not in the future (each with
   ``leeway`` seconds).

Parsing and signature checks are joserfc's public API (``jws.extract_compact``, then
``jws.validate_compact`` on the same object, so the token is decoded once); none of
that security code is written again here. A verified token is cached by
``BearerAuth`` until its expiry, so this runs once per token.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError, SecurityWarning

from ._keys import KeyCache, PublicKey
from ._settings import Settings

__all__ = [
    "InvalidToken",
    "deprecated_name_allowed",
    "looks_like_jwt",
    "verify_jwt",
]

_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt", "application/jwt"})
_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
#: joserfc's size limits and header rules; ``strict_check_header=False`` lets a
#: header carry members joserfc does not know (issuers add their own).
_PARSING = jws.JWSRegistry(strict_check_header=False)


class InvalidToken(Exception):
    """A token failed a check; the message says which, and is safe to send."""


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has the JWS compact form (three base64url parts)."""
    return _SHAPE.fullmatch(token) is not None


async def verify_jwt(token: str, keys: KeyCache, settings: Settings) -> dict[str, Any]:
    """The claims of a token that passes every check of the module docstring.

    Raises:
        InvalidToken: naming the first check that failed.
    """
    try:
        compact = jws.extract_compact(token.encode("ascii"), registry=_PARSING)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("the token is not a well-formed JWT") from None
    header = compact.headers()
    if not isinstance(header, dict):  # JSON naming "alg" but no object: '"alg"'
        raise InvalidToken("the token is not a well-formed JWT")
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
    try:
        claims = _verified_claims(compact, alg, key)
    except (JoseError, ValueError, TypeError):
        # Stale keys: the issuer may have put a new key under the same kid.
        newer = await keys.newer(kid if isinstance(kid, str) else None, key)
        if newer is None:
            raise InvalidToken("the token's signature does not verify") from None
        try:
            claims = _verified_claims(compact, alg, newer)
        except (JoseError, ValueError, TypeError):
            raise InvalidToken("the token's signature does not verify") from None
    check_claims(claims, settings)
    return claims


def _verified_claims(
    compact: jws.CompactSignature, alg: str, key: PublicKey
) -> dict[str, Any]:
    """The payload as a JSON object, once joserfc verifies the signature with ``key``
    and ``alg`` as the only algorithm allowed.

    joserfc warns (``SecurityWarning``) on every ``EdDSA`` token, since RFC 9864
    deprecates the name in favour of ``Ed25519``/``Ed448``; issuers still sign with
    it, and a warning per token is noise for the operator (an error under
    ``-W error``), so that one warning is silenced for that one algorithm.

    Raises:
        JoseError, ValueError, TypeError: if a check fails or the payload is not a
            JSON object.
    """
    registry = jws.JWSRegistry(algorithms=[alg], strict_check_header=False)
    with deprecated_name_allowed(alg):
        verified = jws.validate_compact(compact, key, registry=registry)
    if not verified:
        raise JoseError("bad signature")
    claims = json.loads(compact.payload)
    if not isinstance(claims, dict):
        raise JoseError("the payload is not a JSON object")
    return claims


@contextlib.contextmanager
def deprecated_name_allowed(alg: str) -> Iterator[None]:
    """joserfc's ``SecurityWarning`` for the deprecated name ``EdDSA`` silenced
    while ``alg`` is that name; nothing changed for the others."""
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
