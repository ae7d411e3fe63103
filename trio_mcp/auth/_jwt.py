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
   (joserfc's model of that one algorithm), then the payload is a JSON object;
5. the claims: ``iss`` is the issuer, ``aud`` holds the audience (RFC 8707), ``exp``
   is present and not past, ``nbf`` and ``iat`` not in the future (each with
   ``leeway`` seconds).

A token never seen before costs little more than its signature check: each part is
decoded once, the keys were imported when the JWKS was fetched, and joserfc's
checks are called directly rather than through ``jwt.decode`` (which decodes the
token again and needs a registry built per token). tests/auth/test_jwt_reference.py
holds the two paths to the same answers.
"""

from __future__ import annotations

import binascii
import json
import math
import re
import time
from collections.abc import Mapping
from typing import Any, Protocol

from joserfc.errors import DecodeError, JoseError
from joserfc.jws import JWSRegistry

from ._keys import KeyCache, PublicKey
from ._settings import Settings

__all__ = ["InvalidToken", "looks_like_jwt", "verify_jwt"]

_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt", "application/jwt"})
_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


class _Algorithm(Protocol):
    """What is used of joserfc's ``JWSAlgModel``."""

    def check_key(self, key: Any) -> None: ...
    def verify(self, msg: bytes, sig: bytes, key: Any) -> bool: ...


#: joserfc's size limits and header rules (``crit``, the registered parameters'
#: types); built once, its algorithm list unused (``alg`` is checked before).
_REGISTRY = JWSRegistry(strict_check_header=False)
#: The header members after which joserfc's header check is skipped (``_plain``).
_PLAIN_MEMBERS = frozenset({"alg", "kid", "typ"})
#: joserfc's algorithm models by name, ``none`` and HMAC among them: only an ``alg``
#: on the allow-list (asymmetric) is ever looked up. Taken directly, since
#: ``JWSRegistry.get_alg`` would warn on every ``EdDSA`` token (RFC 9864 deprecates
#: the name; issuers still sign with it).
_MODELS: Mapping[str, _Algorithm] = JWSRegistry.algorithms


class InvalidToken(Exception):
    """A token failed a check; the message says which, and is safe to send."""


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has the JWS compact form (three base64url parts)."""
    return _SHAPE.fullmatch(token) is not None


async def verify_jwt(token: str, keys: KeyCache, settings: Settings) -> dict[str, Any]:
    """The claims of a token that passes every check of the module docstring.

    Each part is decoded once: the header and payload by ``_parse``, the signature
    checked by joserfc's algorithm model with a key imported when the JWKS was
    fetched.

    Raises:
        InvalidToken: naming the first check that failed.
    """
    try:
        jws = _parse(token)
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("the token is not a well-formed JWT") from None
    alg = jws.header.get("alg")
    if alg not in settings.algorithms:
        raise InvalidToken("the token's signing algorithm is not accepted")
    typ = jws.header.get("typ")
    if typ is not None and (not isinstance(typ, str) or typ.lower() not in _TYPES):
        raise InvalidToken("the token's type (typ) is not an access token's")
    kid = jws.header.get("kid")
    key = await keys.key(kid if isinstance(kid, str) else None)
    if key is None:
        raise InvalidToken("no key of the issuer matches the token's key id (kid)")
    try:
        claims = jws.verified_claims(alg, key)
    except (JoseError, ValueError, TypeError):
        raise InvalidToken("the token's signature does not verify") from None
    check_claims(claims, settings)
    return claims


class _Compact:
    """A JWS in compact form, split and decoded (RFC 7515 §7.1), not yet verified."""

    __slots__ = ("header", "payload", "signature", "signing_input")

    def __init__(
        self, header: dict[str, Any], payload: bytes, signing_input: bytes, sig: bytes
    ) -> None:
        self.header = header
        self.payload = payload
        self.signing_input = signing_input
        self.signature = sig

    def verified_claims(self, alg: str, key: PublicKey) -> dict[str, Any]:
        """The payload as a JSON object, once the signature verifies with ``key``.

        The checks joserfc's ``jws.validate_compact`` makes: the header's ``crit``
        and registered parameters, the key's type, curve, ``use``, ``alg`` and
        ``key_ops`` against the algorithm, then the signature.

        Raises:
            JoseError, ValueError, TypeError: if any of them fails or the payload
                is not a JSON object.
        """
        model = _MODELS.get(alg)
        if model is None:
            raise JoseError(f"no JWS algorithm {alg!r}")
        if not _plain(self.header):
            _REGISTRY.check_header(self.header)
        model.check_key(key)
        if not model.verify(self.signing_input, b64url_decode(self.signature), key):
            raise JoseError("bad signature")
        claims = json.loads(self.payload)
        if not isinstance(claims, dict):
            raise JoseError("the payload is not a JSON object")
        return claims


def _parse(token: str) -> _Compact:
    """Split and decode a compact JWS, with joserfc's size limits and RFC 7797.

    Raises:
        JoseError, ValueError, TypeError, UnicodeError: if it is not well formed.
    """
    value = token.encode("ascii")
    _REGISTRY.validate_compact_value_size(value)
    parts = value.split(b".")
    if len(parts) != 3:
        raise DecodeError("not three parts")
    header_part, payload_part, signature = parts
    _REGISTRY.validate_header_size(header_part)
    _REGISTRY.validate_signature_size(signature)
    _REGISTRY.validate_payload_size(payload_part)
    header = json.loads(b64url_decode(header_part))
    if not isinstance(header, dict) or "alg" not in header:
        raise DecodeError("the header is not a JSON object with alg")
    payload = payload_part if _unencoded(header) else b64url_decode(payload_part)
    return _Compact(header, payload, header_part + b"." + payload_part, signature)


def _plain(header: dict[str, Any]) -> bool:
    """Whether joserfc's header check has nothing to refuse: no members but ``alg``,
    ``kid`` and ``typ`` (most issuers write no others), ``kid`` and ``typ`` strings
    when present (a ``null`` one is refused there). By then ``alg`` is on the
    allow-list, so ``crit`` is absent and each registered member has its type."""
    return (
        header.keys() <= _PLAIN_MEMBERS
        and isinstance(header.get("kid", ""), str)
        and isinstance(header.get("typ", ""), str)
    )


def b64url_decode(part: bytes) -> bytes:
    """A base64url part without padding, decoded as joserfc's ``urlsafe_b64decode``
    decodes it (same refusals: ``+``, ``/`` or ``=`` in it, a length of 4n+1, unused
    bits that are not zero), with its translation table built once.

    Raises:
        binascii.Error: if it is not canonical base64url.
    """
    pad = -len(part) % 4
    if pad == 3 or b"+" in part or b"/" in part or b"=" in part:
        raise binascii.Error("not base64url")
    if pad and part[-1] not in _LAST_CHARACTERS[pad - 1]:
        raise binascii.Error("base64url with unused bits set")
    standard = part.translate(_TO_STANDARD) + b"=" * pad
    return binascii.a2b_base64(standard, strict_mode=True)


_TO_STANDARD = bytes.maketrans(b"-_", b"+/")
#: The last character of a part one (then two) characters short of a multiple of 4
#: has unused low bits; they must be zero (RFC 4648 §3.5), which only these have.
_LAST_CHARACTERS = (b"AEIMQUYcgkosw048", b"AQgw")


def _unencoded(header: Mapping[str, Any]) -> bool:
    """Whether the payload is not base64url-encoded (RFC 7797 ``"b64": false``, which
    ``crit`` must name), as joserfc's ``jws.extract_compact`` decides it.

    Raises:
        DecodeError: for a ``b64`` that is not ``true`` and not named in ``crit``.
    """
    if "b64" not in header or header["b64"] is True:
        return False
    crit = header.get("crit")
    if isinstance(crit, list) and "b64" in crit:
        return True
    raise DecodeError("b64 must be named in crit")


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
