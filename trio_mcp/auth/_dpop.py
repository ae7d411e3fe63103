"""DPoP (RFC 9449): a token bound to a key is used only with a proof of that key.

A token is bound when its claims (or its introspection answer) hold ``cnf.jkt``,
the RFC 7638 thumbprint of the client's public key. Such a token comes with the
``DPoP`` authorization scheme and a ``DPoP`` header: a JWT the client signs for
this one request. ``check_proof`` runs RFC 9449 §4.3's checks, in this order, each
failure an ``InvalidProof`` whose reason names the check (never a value):

1. one proof, of bounded size, in the JWS compact form (joserfc parses it);
2. the header: ``typ`` is ``dpop+jwt``, ``alg`` an asymmetric algorithm accepted,
   ``jwk`` a public key of a type that fits it (no private member);
3. the signature verifies with that key (joserfc, that algorithm alone), and the
   payload is a JSON object;
4. the key's thumbprint is the token's ``cnf.jkt``;
5. ``htm`` is this request's method and ``htu`` its URL (or the resource's
   canonical URI, the audience), query and fragment ignored, scheme and host
   compared case-insensitively and default ports dropped;
6. ``iat`` is within ``dpop_leeway`` seconds of now, either way;
7. ``ath`` is the base64url SHA-256 of the token;
8. ``jti`` is a string, and (by the caller, last) not seen before within the
   window: ``Store.claim`` of a digest of the key and ``jti``, which ``RedisStore``
   shares across replicas.

No nonces (§8): the window and the shared replay check are the defence. Parsing
and signatures are joserfc's; nothing of JWS is written again here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
from joserfc import jws
from joserfc.errors import JoseError

from ._jwt import deprecated_name_allowed, numeric_date
from ._keys import KEY_TYPES, PRIVATE_MEMBERS, PublicKey
from ._settings import DEFAULT_ALGORITHMS

__all__ = ["DPOP_ALGORITHMS", "InvalidProof", "Proof", "binding_of", "check_proof"]

#: The proof algorithms accepted: the asymmetric ones (never ``none``, never HMAC).
DPOP_ALGORITHMS = DEFAULT_ALGORITHMS
#: Longest proof accepted (characters): an RSA-4096 key in the header fits.
MAX_PROOF = 8_192
#: Longest ``jti`` accepted (characters); RFC 9449 asks for 96 random bits.
MAX_JTI = 256


class _ProofRegistry(jws.JWSRegistry):
    """joserfc's rules for a proof: its header carries the client's public key,
    past joserfc's default bound of 512 bytes for a header (an RSA-2048 ``jwk``
    alone is about 400), so the bound is the proof's own."""

    max_header_length = MAX_PROOF


_PARSING = _ProofRegistry(strict_check_header=False)
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


class InvalidProof(Exception):
    """A DPoP proof failed a check; the message says which, and is safe to send."""


@attrs.frozen
class Proof:
    """A proof that passed every check but the replay one: its key's thumbprint,
    its ``jti`` and its ``iat``."""

    jkt: str
    jti: str
    iat: float

    def replay_key(self) -> str:
        """The store key of this proof: a digest, bounded, naming no value."""
        digest = hashlib.sha256(f"{self.jkt}\0{self.jti}".encode()).hexdigest()
        return f"dpop-jti:{digest}"


def binding_of(claims: Mapping[str, Any]) -> str | None:
    """The ``cnf.jkt`` a token is bound to, or None when it holds no ``cnf``.

    Raises:
        InvalidProof: for a ``cnf`` this server cannot check (not an object, no
            ``jkt`` string, or another confirmation method such as mTLS's
            ``x5t#S256``): a bound token is never taken as a bearer one.
    """
    if "cnf" not in claims:
        return None
    cnf = claims["cnf"]
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    if not isinstance(jkt, str) or not jkt or set(cnf) != {"jkt"}:
        raise InvalidProof("the token's confirmation (cnf) cannot be checked here")
    return jkt


def check_proof(
    proof: str | None,
    *,
    token: str,
    jkt: str,
    method: str,
    urls: tuple[str, ...],
    leeway: float,
) -> Proof:
    """The proof of a request bearing ``token`` (bound to ``jkt``), checked.

    Raises:
        InvalidProof: naming the first check that failed.
    """
    payload, key = _verified(proof)
    if not _same(key.thumbprint(), jkt):
        raise InvalidProof("the DPoP proof is signed by another key than the token's")
    if payload.get("htm") != method:
        raise InvalidProof("the DPoP proof is for another HTTP method (htm)")
    htu = _normal_url(payload.get("htu"))
    if htu is None or htu not in [_normal_url(url) for url in urls]:
        raise InvalidProof("the DPoP proof is for another URL (htu)")
    iat = numeric_date(payload.get("iat"))
    if iat is None:
        raise InvalidProof("the DPoP proof has no issue time (iat)")
    if abs(time.time() - iat) > leeway:
        raise InvalidProof("the DPoP proof is too old or from the future (iat)")
    ath = payload.get("ath")
    if not isinstance(ath, str) or not _same(ath, token_hash(token)):
        raise InvalidProof("the DPoP proof is for another access token (ath)")
    jti = payload.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI:
        raise InvalidProof("the DPoP proof has no usable identifier (jti)")
    return Proof(jkt, jti, iat)


def _same(text: str, expected: str) -> bool:
    """Constant-time equality of two strings (``hmac.compare_digest`` refuses a
    ``str`` that is not ASCII, so both are compared as UTF-8; JSON may hold lone
    surrogates, kept as they are)."""
    return hmac.compare_digest(
        text.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def token_hash(token: str) -> str:
    """RFC 9449 §4.2 ``ath``: base64url (no padding) of the token's SHA-256."""
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _verified(proof: str | None) -> tuple[dict[str, Any], PublicKey]:
    """Checks 1 to 3: the payload and the public key of a proof whose signature
    verifies.

    Raises:
        InvalidProof: naming the first check that failed.
    """
    if not proof:
        raise InvalidProof("a DPoP-bound token needs a DPoP proof header")
    if "," in proof or len(proof) > MAX_PROOF:
        raise InvalidProof("send exactly one DPoP proof, of at most 8 KiB")
    try:
        compact = jws.extract_compact(proof.encode("ascii"), registry=_PARSING)
    except (JoseError, ValueError, TypeError, LookupError):
        raise InvalidProof("the DPoP proof is not a well-formed JWT") from None
    header = compact.headers()
    if not isinstance(header, dict):
        raise InvalidProof("the DPoP proof is not a well-formed JWT")
    typ = header.get("typ")
    if not isinstance(typ, str) or typ.lower() != "dpop+jwt":
        raise InvalidProof("the DPoP proof's type (typ) must be dpop+jwt")
    alg = header.get("alg")
    if alg not in DPOP_ALGORITHMS:
        raise InvalidProof("the DPoP proof's algorithm (alg) is not accepted")
    key = _public_key(header.get("jwk"))
    registry = _ProofRegistry(algorithms=[alg], strict_check_header=False)
    try:
        with deprecated_name_allowed(alg):
            verified = jws.validate_compact(compact, key, registry=registry)
        payload = json.loads(compact.payload) if verified else None
    except (JoseError, ValueError, TypeError, LookupError):
        payload = None
    if not isinstance(payload, dict):
        raise InvalidProof("the DPoP proof's signature does not verify")
    return payload, key


def _public_key(jwk: object) -> PublicKey:
    """The proof's ``jwk`` header as a public key.

    Raises:
        InvalidProof: if it is not a JSON object, holds a private or symmetric
            key, or does not import.
    """
    if not isinstance(jwk, dict):
        raise InvalidProof("the DPoP proof carries no public key (jwk)")
    if PRIVATE_MEMBERS & set(jwk):
        raise InvalidProof("the DPoP proof's jwk must be a public key")
    key_type = KEY_TYPES.get(jwk.get("kty"))  # type: ignore[arg-type]
    if key_type is None:
        raise InvalidProof("the DPoP proof's jwk is not an RSA, EC or OKP key")
    try:
        return key_type.import_key(jwk)
    except (JoseError, ValueError, TypeError, LookupError):  # an unknown crv: KeyError
        raise InvalidProof("the DPoP proof's jwk is not a usable key") from None


def _normal_url(url: object) -> tuple[str, str, str] | None:
    """``url`` compared as RFC 9449 §4.3 says (RFC 3986 §6.2.2-6.2.3): scheme and
    host lower-cased, the default port dropped, query and fragment ignored, an
    empty path as ``/``; None if it does not parse."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    if not scheme or not host:
        return None
    return scheme, host, parts.path or "/"
