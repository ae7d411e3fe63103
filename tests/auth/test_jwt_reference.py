"""``verify_jwt`` decides as joserfc's generic ``jwt.decode`` path does, token for token.

``trio_mcp.auth._jwt`` parses a token once with ``jws.extract_compact`` and verifies
that same object with ``jws.validate_compact`` (joserfc's public API, nothing of it
written again). ``reference`` below is the path before that (``jws.extract_compact``
for the header, then ``jwt.decode`` with a registry built per token): for any token,
signed well or badly, with any header, both must admit the same claims or refuse
with the same message. The one difference is deliberate: a header that is JSON but
not an object (``"alg"``, ``["alg"]``) was an ``AttributeError`` (a 500) in the old
path and is "not a well-formed JWT" in both.

The issuer's keys (RSA, EC P-256, Ed25519) come from a JWKS served on 127.0.0.1.
Last, the cache of verified tokens when it is full.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.errors import JoseError, SecurityWarning
from joserfc.jwk import ECKey, OKPKey, RSAKey
from joserfc.jws import JWSRegistry, extract_compact
from oauth_provider import AUDIENCE

from trio_mcp._http._oauth import Challenge
from trio_mcp.auth import BearerAuth, _bearer
from trio_mcp.auth._jwt import (
    InvalidToken,
    check_claims,
    looks_like_jwt,
    verify_jwt,
)
from trio_mcp.auth._keys import KeyCache
from trio_mcp.auth._settings import Settings

KEYS: dict[str, Any] = {
    "rsa": RSAKey.generate_key(2048, parameters={"kid": "rsa"}),
    "ec": ECKey.generate_key("P-256", parameters={"kid": "ec"}),
    "okp": OKPKey.generate_key("Ed25519", parameters={"kid": "okp"}),
}
SIGNERS = {
    "RS256": "rsa", "RS512": "rsa", "PS256": "rsa", "ES256": "ec",
    "ES384": "ec", "EdDSA": "okp", "Ed25519": "okp",
}  # fmt: skip
#: ES384 with the P-256 key: a signature that verifies, by a key of the wrong curve.
WRONG_CURVE = {"ES384"}


class _Issuer(http.server.BaseHTTPRequestHandler):
    """Serves the JWKS of ``KEYS`` (public parts) at any path."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        keys = [key.as_dict(private=False) for key in KEYS.values()]
        body = json.dumps({"keys": keys}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def auth() -> Iterator[BearerAuth]:
    """One checker (one key cache, fetched once) for every example."""
    issuer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Issuer)
    thread = threading.Thread(target=issuer.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{issuer.server_address[1]}"
    try:
        yield BearerAuth(url, AUDIENCE, jwks_uri=f"{url}/keys")
    finally:
        issuer.shutdown()
        issuer.server_close()


async def reference(token: str, keys: KeyCache, s: Settings) -> dict[str, Any]:
    """The verification as trio_mcp wrote it with joserfc's generic path."""
    try:
        header = extract_compact(token.encode("ascii")).headers()
    except (JoseError, ValueError, TypeError, UnicodeError):
        raise InvalidToken("the token is not a well-formed JWT") from None
    if not isinstance(header, dict):  # the old path's AttributeError (a 500)
        raise InvalidToken("the token is not a well-formed JWT")
    alg = header.get("alg")
    if alg not in s.algorithms:
        raise InvalidToken("the token's signing algorithm is not accepted")
    typ = header.get("typ")
    types = {"at+jwt", "application/at+jwt", "jwt", "application/jwt"}
    if typ is not None and (not isinstance(typ, str) or typ.lower() not in types):
        raise InvalidToken("the token's type (typ) is not an access token's")
    kid = header.get("kid")
    key = await keys.key(kid if isinstance(kid, str) else None)
    if key is None:
        raise InvalidToken("no key of the issuer matches the token's key id (kid)")
    registry = JWSRegistry(algorithms=[alg], strict_check_header=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SecurityWarning)
            claims = jwt.decode(token, key, algorithms=[alg], registry=registry).claims
    except (JoseError, ValueError, TypeError):
        raise InvalidToken("the token's signature does not verify") from None
    check_claims(claims, s)
    return claims


async def outcome(check: Any, token: str, auth: BearerAuth) -> object:
    try:
        return await check(token, auth.keys, auth.settings)
    except InvalidToken as exc:
        return str(exc)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


junk = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8),
    st.lists(st.text(max_size=4), max_size=2), st.just({"a": 1}),
)  # fmt: skip


@st.composite
def headers(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly a header the issuer could write (an algorithm and its key's kid),
    with now and then a member out of place or of the wrong type."""
    alg = draw(st.sampled_from(list(SIGNERS)))
    header: dict[str, Any] = {"alg": alg, "kid": SIGNERS[alg], "typ": "at+jwt"}
    odd = draw(st.integers(0, 9))
    if odd == 0:
        header["alg"] = draw(st.sampled_from(["HS256", "none", "ES256K"]) | junk)
    elif odd == 1:
        header["kid"] = draw(st.sampled_from(["rsa", "ec", "okp", "unknown"]) | junk)
    elif odd == 2:
        header["typ"] = draw(
            st.sampled_from(["JWT", "application/at+jwt", "dpop+jwt"]) | junk
        )
    elif odd in (3, 4):
        name = draw(st.sampled_from(["crit", "b64", "jku", "x5c", "cty", "zip"]))
        header[name] = draw(junk | st.sampled_from([["b64"], ["exp"], False]))
        if draw(st.booleans()):
            header["crit"] = draw(st.sampled_from([["b64"], [name], ["zip"]]))
    elif odd == 5 and draw(st.booleans()):
        del header["kid"]
    return header


header_bytes = st.one_of(
    headers().map(lambda h: json.dumps(h).encode()),
    st.sampled_from([b'"alg"', b'["alg"]', b"{", b"", b'{"kid": "rsa"}']),
)


def claims_of(iss: str) -> st.SearchStrategy[bytes]:
    now = int(time.time())
    good = {"iss": iss, "aud": AUDIENCE, "sub": "s", "iat": now, "exp": now + 600}
    changed = st.dictionaries(
        st.sampled_from(["iss", "aud", "exp", "nbf", "iat", "sub"]),
        st.sampled_from([None, now - 3600, now + 3600, "x", iss, AUDIENCE, [AUDIENCE]]),
        max_size=2,
    )
    return st.one_of(
        st.just(json.dumps(good).encode()),
        changed.map(lambda c: json.dumps({**good, **c}).encode()),
        st.sampled_from([b"[1]", b"null", b"{", b"", "{}".encode("utf-16")]),
    )


@st.composite
def tokens(draw: st.DrawFn, iss: str) -> str:
    header, payload = draw(header_bytes), draw(claims_of(iss))
    signing_input = f"{b64(header)}.{b64(payload)}"
    named = json.loads(header) if header.startswith(b"{") and header != b"{" else {}
    named_alg = named.get("alg") if isinstance(named, dict) else None
    alg = named_alg if isinstance(named_alg, str) and named_alg in SIGNERS else "RS256"
    if draw(st.integers(0, 9)) == 0:  # signed by another key (or type of key)
        alg = draw(st.sampled_from(list(SIGNERS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        model = JWSRegistry.algorithms[alg]
        signature = b64(model.sign(signing_input.encode(), KEYS[SIGNERS[alg]]))
    if draw(st.integers(0, 3)) == 0:
        signature = draw(
            st.sampled_from([signature[:-2], signature + "A", signature[::-1], ""])
        )
    return f"{signing_input}.{signature}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
async def test_verify_jwt_decides_as_the_generic_path(
    auth: BearerAuth, data: st.DataObject
) -> None:
    token = data.draw(tokens(auth.settings.issuer))

    ours, theirs = (
        await outcome(verify_jwt, token, auth),
        await outcome(reference, token, auth),
    )

    event(ours if isinstance(ours, str) else "admitted")
    assert theirs == ours, token


async def test_each_algorithm_signed_well_is_admitted_by_both(auth: BearerAuth) -> None:
    now = int(time.time())
    claims = {"iss": auth.settings.issuer, "aud": AUDIENCE, "exp": now + 60}
    for alg, kid in SIGNERS.items():
        if alg in WRONG_CURVE:
            continue
        header = {"alg": alg, "kid": kid, "typ": "at+jwt"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SecurityWarning)
            token = jwt.encode(header, claims, KEYS[kid], algorithms=[alg])

        ours, theirs = (
            await outcome(verify_jwt, token, auth),
            await outcome(reference, token, auth),
        )

        assert (claims, claims) == (ours, theirs), alg


@given(text=st.text(alphabet="AZaz09-_.=+/ é", max_size=12))
def test_looks_like_jwt_is_three_base64url_parts(text: str) -> None:
    parts = text.split(".")
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    expected = (
        len(parts) == 3 and all(parts[:2]) and all(set(p) <= alphabet for p in parts)
    )

    assert expected == looks_like_jwt(text)


# -- the verified-token cache ------------------------------------------------------------
async def test_a_full_cache_makes_room_once_per_eighth_and_keeps_the_newest(
    auth: BearerAuth, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sweeping on every new token once 10,000 valid ones were held cost 1.5 ms per
    token: a full cache now drops the oldest down to ``KEPT_WHEN_FULL`` and then
    takes new tokens without sweeping until it is full again. (The sizes are scaled
    down to 64 and 56 so the test signs 72 tokens, not 11,250.)"""
    assert _bearer.MAX_CACHED // 8 == _bearer.MAX_CACHED - _bearer.KEPT_WHEN_FULL
    full, kept = 64, 56
    monkeypatch.setattr(_bearer, "MAX_CACHED", full)
    monkeypatch.setattr(_bearer, "KEPT_WHEN_FULL", kept)
    now = int(time.time())
    base = {"iss": auth.settings.issuer, "aud": AUDIENCE, "exp": now + 600}
    header = {"alg": "ES256", "kid": "ec"}
    tokens = [
        jwt.encode(header, {**base, "sub": f"u{i}"}, KEYS["ec"], ["ES256"])
        for i in range(2 * full - kept)
    ]
    auth._verified.clear()
    for token in tokens[: full + 1]:
        assert not isinstance(await auth.admit(f"Bearer {token}"), Challenge)

    assert kept + 1 == len(auth._verified)
    assert digest(tokens[full]) in auth._verified
    assert digest(tokens[full - kept]) in auth._verified
    assert digest(tokens[full - kept - 1]) not in auth._verified
    for token in tokens[full + 1 :]:
        await auth.admit(f"Bearer {token}")
    assert full == len(auth._verified)  # filled up again, no sweep on the way
    assert {32} == {len(key) for key in auth._verified}  # digests, never tokens


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()
