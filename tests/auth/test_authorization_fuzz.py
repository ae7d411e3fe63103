"""Hypothesis at the boundary: any ``Authorization`` header is a 2xx, 401 or 403.

The header reaches the mounted app exactly as an ASGI server hands it over (bytes,
read as latin-1), so values no HTTP parser would let through are tried as well;
JWT-shaped junk (three base64url parts, headers naming the real key id and every
kind of algorithm) goes through the whole verification. Never a 5xx, never an
exception out of the app, never the value echoed back.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from joserfc import jws
from joserfc.jwk import RSAKey
from oauth_provider import AUDIENCE, Provider, signed, valid_claims
from support import META
from support.asgi import asgi_exchange, http_scope
from support.strategies import json_trees

from trio_mcp import Server, tool
from trio_mcp.auth import BearerAuth

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": META, "name": "ping", "arguments": {}},
    }
).encode()


@tool
def ping() -> str:
    """Answer."""
    return "pong"


def b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


json_values = json_trees(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    max_leaves=8,
)
headers = st.fixed_dictionaries(
    {
        "alg": st.sampled_from(["RS256", "ES256", "none", "HS256", "PS256", "", "x"])
        | json_values
    },
    optional={
        "kid": st.sampled_from(["key-1", "unknown"]) | json_values,
        "typ": st.sampled_from(["at+jwt", "JWT", "dpop+jwt"]) | json_values,
        "crit": json_values,
    },
)
claims = st.dictionaries(
    st.sampled_from(["iss", "aud", "exp", "nbf", "iat", "sub", "scope", "client_id"]),
    json_values,
    max_size=8,
)


@st.composite
def jwt_shaped(draw: st.DrawFn) -> bytes:
    header = b64(json.dumps(draw(headers)).encode())
    payload = b64(json.dumps(draw(claims)).encode())
    signature = b64(draw(st.binary(max_size=300)))
    token = b".".join([header, payload, signature])
    return draw(st.sampled_from([b"Bearer ", b"bearer ", b"Bearer  ", b""])) + token


authorization = st.one_of(
    st.binary(max_size=200),
    st.binary(max_size=200).map(lambda b: b"Bearer " + b),
    jwt_shaped(),
)


async def asgi_post(
    app: Any, value: bytes, *extra: tuple[bytes, bytes]
) -> tuple[int, dict[bytes, bytes], bytes]:
    """A ``tools/call`` of ``ping`` with ``Authorization: value`` (and ``extra``
    headers) through the ASGI app; its status, headers and body."""
    scope = http_scope(
        [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"ping"),
            (b"authorization", value),
            *extra,
        ]
    )
    sent = await asgi_exchange(app, scope, BODY)
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


_APPS: dict[str, Any] = {}


def app_for(provider: Provider) -> Any:
    """One app (and so one key cache) for all examples: the keys are fetched once."""
    if provider.issuer not in _APPS:
        server = Server("fuzz", "1.0", tools=[ping])
        _APPS[provider.issuer] = server.mount(
            auth=BearerAuth(provider.issuer, AUDIENCE)
        )
    return _APPS[provider.issuer]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=authorization)
async def test_any_authorization_header_is_never_a_5xx(
    provider: Provider, value: bytes
) -> None:
    status, response_headers, body = await asgi_post(app_for(provider), value)

    assert status in (200, 401), (status, body)
    if status == 401:
        assert response_headers[b"www-authenticate"].startswith(b"Bearer ")
        if len(value) >= 16:
            assert value not in body


# -- correctly signed tokens with any claim values ------------------------------------------
# The signature holds, so every claim check runs on whatever JSON the issuer wrote:
# integers no float can hold (``exp`` in 400 digits), NaN and infinities (Python's
# JSON writes and reads them), strings, booleans, null, lists and objects.
huge_integers = st.sampled_from([10**400, -(10**400), 2**1024, 10**309]) | st.integers(
    min_value=-(10**500), max_value=10**500
)
claim_values = json_values | huge_integers | st.floats()
claim_names = ["iss", "aud", "exp", "nbf", "iat", "sub", "scope", "client_id"]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    changes=st.dictionaries(st.sampled_from(claim_names), claim_values, max_size=4),
    dropped=st.sets(st.sampled_from(claim_names), max_size=2),
)
async def test_signed_tokens_with_any_claim_values_are_never_a_5xx(
    provider: Provider,
    signing_key: RSAKey,
    changes: dict[str, Any],
    dropped: set[str],
) -> None:
    claims = {**valid_claims(provider.issuer), **changes}
    for name in dropped - changes.keys():
        claims.pop(name, None)

    status, response_headers, body = await asgi_post(
        app_for(provider), b"Bearer " + signed(signing_key, claims).encode()
    )

    assert status in (200, 401), (status, body, claims)
    if status == 401:
        assert response_headers[b"www-authenticate"].startswith(b"Bearer ")


@pytest.mark.parametrize(
    "changes",
    [
        {"exp": 10**400},
        {"exp": -(10**400)},
        {"nbf": 10**400},
        {"iat": 10**400},
        {"iat": -(10**400)},
        {"exp": float("inf")},
        {"exp": float("nan")},
        {"exp": True},
    ],
    ids=[
        "exp=1e400",
        "exp=-1e400",
        "nbf=1e400",
        "iat=1e400",
        "iat=-1e400",
        "exp=inf",
        "exp=nan",
        "exp=true",
    ],
)
async def test_a_date_no_float_can_hold_is_a_401(
    provider: Provider, signing_key: RSAKey, changes: dict[str, Any]
) -> None:
    claims = {**valid_claims(provider.issuer), **changes}

    status, response_headers, _ = await asgi_post(
        app_for(provider), b"Bearer " + signed(signing_key, claims).encode()
    )

    assert 401 == status
    assert b'error="invalid_token"' in response_headers[b"www-authenticate"]


@pytest.mark.parametrize(
    "payload", [b"[1,2]", b'"x"', b"null", b"5", b'{"exp": NaN}', b"{", b""]
)
async def test_a_signed_payload_that_is_no_claims_object_is_a_401(
    provider: Provider, signing_key: RSAKey, payload: bytes
) -> None:
    token = jws.serialize_compact(
        {"alg": "RS256", "kid": signing_key.kid}, payload, signing_key
    )

    status, _, _ = await asgi_post(app_for(provider), b"Bearer " + token.encode())

    assert 401 == status
