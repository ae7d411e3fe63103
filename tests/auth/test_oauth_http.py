"""trio_mcp.auth through real HTTP, with a real authorization server.

The MCP server runs on Hypercorn on 127.0.0.1 with ``auth=BearerAuth(...)``; tokens
come from oidc-provider (conftest.py) by the client credentials grant with RFC 8707
resource indicators, or are minted here with the provider's own signing key to be
exactly what an honest server never issues.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import httpx
import pytest
import trio
from joserfc import jwt
from joserfc.jwk import RSAKey
from joserfc.jws import extract_compact
from oauth_provider import (
    AUDIENCE,
    OPAQUE_AUDIENCE,
    OTHER_AUDIENCE,
    READ,
    RESOURCE_SERVER,
    WRITE,
    Provider,
    new_key,
)
from support import META, serving
from support.spans import span_exporter

from trio_mcp import Capability, Receipt, Server, ToolContext, tool
from trio_mcp.auth import BearerAuth, Introspection, TokenPrincipal
from trio_mcp.auth._settings import DEFAULT_ALGORITHMS
from trio_mcp.testing import check_message

ROOT = Capability("root", description="Granted by no scope, only by allow=.")
SCOPES = {"notes:read": [READ], "notes:write": [WRITE]}

NOTES: dict[str, str] = {}


@tool(caps=[READ])
def read_note(name: str) -> str:
    """Read a note.

    Args:
        name: Its name.
    """
    return NOTES.get(name, "")


@tool(caps=[WRITE])
def write_note(name: str, text: str) -> str:
    """Write a note.

    Args:
        name: Its name.
        text: What it says.
    """
    NOTES[name] = text
    return "written"


@attrs.frozen
class Who:
    """Who a token speaks for."""

    id: str
    client_id: str | None
    scopes: list[str]
    issuer: str


@tool
def whoami() -> Who:
    """Who the token speaks for."""
    principal = ToolContext.current().principal
    assert isinstance(principal, TokenPrincipal)
    return Who(
        principal.id, principal.client_id, sorted(principal.scopes), principal.issuer
    )


@tool(caps=[ROOT])
def reboot() -> str:
    """Needs a capability no scope grants."""
    return "rebooted"


def headers_for(method: str, name: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        "mcp-name": name,
    }


def request_body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": META, **params},
    }


def checked(response: httpx.Response, method: str) -> dict[str, Any]:
    """The response's one JSON-RPC message, validated against the schema."""
    message: dict[str, Any] = response.json()
    check_message(message, method)
    return message


def make_server(receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "notes",
        "1.0",
        tools=[read_note, write_note, whoami, reboot],
        receipts=None if receipts is None else receipts.append,
    )


def make_auth(provider: Provider, **options: Any) -> BearerAuth:
    return BearerAuth(provider.issuer, AUDIENCE, scopes=SCOPES, **options)


@asynccontextmanager
async def mcp(
    auth: BearerAuth, receipts: list[Receipt] | None = None
) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    async with (
        serving(make_server(receipts), auth=auth) as url,
        httpx.AsyncClient() as client,
    ):
        yield url, client


async def call(
    client: httpx.AsyncClient,
    url: str,
    token: str | None,
    name: str = "whoami",
    arguments: dict[str, Any] | None = None,
) -> httpx.Response:
    headers = headers_for("tools/call", name)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = request_body("tools/call", {"name": name, "arguments": arguments or {}})
    with trio.fail_after(15):
        return await client.post(url + "/mcp", json=body, headers=headers)


def challenge(response: httpx.Response) -> dict[str, str]:
    """The ``WWW-Authenticate`` parameters (values without escapes, as ours are)."""
    value = response.headers["www-authenticate"]
    scheme, _, rest = value.partition(" ")
    assert "Bearer" == scheme
    params = {}
    for part in rest.split('", '):
        key, _, val = part.partition("=")
        params[key.strip()] = val.strip().strip('"')
    return params


METADATA_URL = "https://mcp.example/.well-known/oauth-protected-resource/mcp"


# -- the happy paths -------------------------------------------------------------------
async def test_no_token_is_a_401_naming_the_metadata(provider: Provider) -> None:
    async with mcp(make_auth(provider)) as (url, client):
        response = await call(client, url, None)

    assert 401 == response.status_code
    assert {"resource_metadata": METADATA_URL} == challenge(response)


async def test_the_metadata_names_the_audience_the_issuer_and_the_scopes(
    provider: Provider,
) -> None:
    auth = make_auth(provider, required_scopes=["mcp"])
    async with mcp(auth) as (url, client):
        response = await client.get(url + "/.well-known/oauth-protected-resource/mcp")

    assert 200 == response.status_code
    assert {
        "resource": AUDIENCE,
        "authorization_servers": [provider.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:read", "notes:write", "mcp"],
        "dpop_signing_alg_values_supported": list(DEFAULT_ALGORITHMS),
    } == response.json()


async def test_a_real_token_runs_the_call_with_its_principal(
    provider: Provider,
) -> None:
    token = provider.token("notes:read")
    async with mcp(make_auth(provider)) as (url, client):
        response = await call(client, url, token)

    assert 200 == response.status_code
    result = checked(response, "tools/call")["result"]
    assert {
        "id": "agent",
        "client_id": "agent",
        "scopes": ["notes:read"],
        "issuer": provider.issuer,
    } == result["structuredContent"]


async def test_a_readers_token_on_a_writers_tool_is_a_403_before_the_handler(
    provider: Provider,
) -> None:
    NOTES.clear()
    receipts: list[Receipt] = []
    token = provider.token("notes:read")
    async with mcp(make_auth(provider), receipts) as (url, client):
        response = await call(
            client, url, token, "write_note", {"name": "a", "text": "x"}
        )

    assert 403 == response.status_code
    assert {
        "error": "insufficient_scope",
        "error_description": "the token's scopes do not grant what this call needs",
        "scope": "notes:read notes:write",
        "resource_metadata": METADATA_URL,
    } == challenge(response)
    assert {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -31403,
            "message": "the token's scopes do not grant what this call needs",
        },
    } == checked(response, "tools/call")
    assert {} == NOTES
    assert [("write_note", "refused", "insufficient_scope", "agent")] == [
        (r.name, r.outcome, r.error_type, r.principal_id) for r in receipts
    ]


async def test_the_writers_token_writes(provider: Provider) -> None:
    NOTES.clear()
    token = provider.token("notes:read notes:write")
    async with mcp(make_auth(provider)) as (url, client):
        response = await call(
            client, url, token, "write_note", {"name": "a", "text": "x"}
        )

    assert 200 == response.status_code
    assert {"a": "x"} == NOTES


async def test_a_capability_no_scope_grants_is_the_ordinary_refusal(
    provider: Provider,
) -> None:
    receipts: list[Receipt] = []
    token = provider.token("notes:read notes:write admin:all")
    async with mcp(make_auth(provider), receipts) as (url, client):
        response = await call(client, url, token, "reboot")

    assert 200 == response.status_code
    assert checked(response, "tools/call")["result"]["isError"] is True
    assert ["refused"] == [r.outcome for r in receipts]


async def test_required_scopes_missing_is_a_403_naming_them(
    provider: Provider,
) -> None:
    token = provider.token("notes:read")
    auth = make_auth(provider, required_scopes=["notes:write"])
    async with mcp(auth) as (url, client):
        response = await call(client, url, token)

    assert 403 == response.status_code
    assert "notes:read notes:write" == challenge(response)["scope"]


# -- tokens that must fail ---------------------------------------------------------------
def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_for(provider: Provider, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {
        "iss": provider.issuer,
        "aud": AUDIENCE,
        "sub": "mallory",
        "client_id": "agent",
        "scope": "notes:read",
        "iat": now,
        "exp": now + 600,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def mint(key: RSAKey, claims: dict[str, Any], kid: str | None = None) -> str:
    header = {"alg": "RS256", "typ": "at+jwt", "kid": kid or key.kid}
    return jwt.encode(header, claims, key)


def forged(provider: Provider, key: RSAKey, case: str) -> str:
    """The token of one case of ``FORGERIES``."""
    now = int(time.time())
    if case == "expired":
        return mint(key, claims_for(provider, exp=now - 3600, iat=now - 7200))
    if case == "not yet valid":
        return mint(key, claims_for(provider, nbf=now + 3600))
    if case == "issued in the future":
        return mint(key, claims_for(provider, iat=now + 3600))
    if case == "wrong issuer":
        return mint(key, claims_for(provider, iss="https://evil.example"))
    if case == "wrong audience":
        return mint(key, claims_for(provider, aud="https://evil.example/mcp"))
    if case == "no exp":
        return mint(key, claims_for(provider, exp=None))
    if case == "alg none":
        header = b64(json.dumps({"alg": "none", "typ": "at+jwt"}).encode())
        return f"{header}.{b64(json.dumps(claims_for(provider)).encode())}."
    if case == "HS256 keyed with the public key":
        pem = key.as_pem(private=False)
        header = b64(json.dumps({"alg": "HS256", "kid": key.kid}).encode())
        body = b64(json.dumps(claims_for(provider)).encode())
        mac = hmac.new(pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{b64(mac)}"
    if case == "signed by another key":
        return mint(new_key("key-1"), claims_for(provider), kid=key.kid)
    if case == "an unpublished kid":
        return mint(new_key("nobody-knows-me"), claims_for(provider))
    if case == "tampered payload":
        header, _, signature = mint(key, claims_for(provider)).split(".")
        body = b64(json.dumps(claims_for(provider, scope="notes:write")).encode())
        return f"{header}.{body}.{signature}"
    assert "garbage" == case
    return "not.a.jwt-at-all"


FORGERIES = [
    "expired",
    "not yet valid",
    "issued in the future",
    "wrong issuer",
    "wrong audience",
    "no exp",
    "alg none",
    "HS256 keyed with the public key",
    "signed by another key",
    "an unpublished kid",
    "tampered payload",
    "garbage",
]


async def test_the_minted_control_token_passes(
    provider: Provider, signing_key: RSAKey
) -> None:
    """The forgeries below differ from this one in one thing each."""
    async with mcp(make_auth(provider)) as (url, client):
        response = await call(client, url, mint(signing_key, claims_for(provider)))

    assert 200 == response.status_code
    assert (
        "mallory"
        == checked(response, "tools/call")["result"]["structuredContent"]["id"]
    )


async def test_every_forgery_is_a_401_invalid_token(
    provider: Provider, signing_key: RSAKey, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    NOTES.clear()
    auth = make_auth(provider)
    answers = {}
    tokens = {case: forged(provider, signing_key, case) for case in FORGERIES}
    tokens["for another resource"] = provider.token(resource=OTHER_AUDIENCE)
    async with mcp(auth) as (url, client):
        for case, token in tokens.items():
            response = await call(client, url, token)
            answers[case] = (response.status_code, challenge(response).get("error"))
            assert token not in response.text

    assert dict.fromkeys(tokens, (401, "invalid_token")) == answers
    everything = caplog.text + repr(auth) + repr(caplog.records)
    assert [] == [case for case, token in tokens.items() if token in everything]


async def test_a_malformed_authorization_header_is_a_401_invalid_token(
    provider: Provider,
) -> None:
    async with mcp(make_auth(provider)) as (url, client):
        headers = {**headers_for("tools/call", "whoami"), "authorization": "Basic x"}
        body = request_body("tools/call", {"name": "whoami", "arguments": {}})
        response = await client.post(url + "/mcp", json=body, headers=headers)

    assert 401 == response.status_code
    assert "invalid_token" == challenge(response)["error"]


# -- keys: rotation, an issuer that is down -------------------------------------------------
async def test_rotation_at_the_provider_then_the_provider_down(
    tmp_path: Any,
) -> None:
    old, new = new_key("old"), new_key("new")
    own = Provider(tmp_path, [old])
    try:
        auth = BearerAuth(own.issuer, AUDIENCE, scopes=SCOPES, jwks_min_interval=0.1)
        async with mcp(auth) as (url, client):
            assert 200 == (await call(client, url, own.token())).status_code
            own.restart([new, old])
            await trio.sleep(0.2)
            rotated = own.token()
            assert "new" == extract_compact(rotated.encode()).headers()["kid"]
            assert 200 == (await call(client, url, rotated)).status_code
            own.stop()
            # Keys held keep working: a token never seen, signed by a held key.
            fresh = mint(old, claims_for(own, sub="offline"))
            assert 200 == (await call(client, url, fresh)).status_code
            # An unknown kid asks the (stopped) issuer, fails, and is a quick 401.
            started = trio.current_time()
            response = await call(client, url, mint(new_key("c"), claims_for(own)))
            assert 401 == response.status_code
            assert trio.current_time() - started < 5
    finally:
        own.stop()


# -- opaque tokens: introspection --------------------------------------------------------------
def opaque_auth(provider: Provider, cache_ttl: float = 30.0) -> BearerAuth:
    return BearerAuth(
        provider.issuer,
        OPAQUE_AUDIENCE,
        scopes=SCOPES,
        introspection=Introspection(*RESOURCE_SERVER, cache_ttl=cache_ttl),
    )


async def test_an_opaque_token_is_introspected(provider: Provider) -> None:
    token = provider.token("notes:read", resource=OPAQUE_AUDIENCE)
    assert token.count(".") == 0
    async with mcp(opaque_auth(provider)) as (url, client):
        response = await call(client, url, token)

    assert 200 == response.status_code
    who = checked(response, "tools/call")["result"]["structuredContent"]
    assert ("agent", ["notes:read"]) == (who["client_id"], who["scopes"])


async def test_an_opaque_token_for_another_resource_is_refused(
    provider: Provider,
) -> None:
    token = provider.token("notes:read", resource=OPAQUE_AUDIENCE)
    auth = BearerAuth(
        provider.issuer,
        AUDIENCE,
        scopes=SCOPES,
        introspection=Introspection(*RESOURCE_SERVER),
    )
    async with mcp(auth) as (url, client):
        response = await call(client, url, token)

    assert 401 == response.status_code
    assert "invalid_token" == challenge(response)["error"]


async def test_revocation_takes_effect_within_cache_ttl(provider: Provider) -> None:
    token = provider.token("notes:read", resource=OPAQUE_AUDIENCE)
    async with mcp(opaque_auth(provider, cache_ttl=0.5)) as (url, client):
        assert 200 == (await call(client, url, token)).status_code
        provider.revoke(token)
        assert 200 == (await call(client, url, token)).status_code  # cached
        await trio.sleep(0.6)
        response = await call(client, url, token)

    assert 401 == response.status_code
    assert "invalid_token" == challenge(response)["error"]


# -- lists and what never shows ----------------------------------------------------------------
async def list_tools(client: httpx.AsyncClient, url: str, token: str) -> dict[str, Any]:
    headers = {**headers_for("tools/list", ""), "authorization": f"Bearer {token}"}
    del headers["mcp-name"]
    with trio.fail_after(15):
        response = await client.post(
            url + "/mcp", json=request_body("tools/list", {}), headers=headers
        )
    assert 200 == response.status_code, response.text
    result: dict[str, Any] = checked(response, "tools/list")["result"]
    return result


async def test_hide_ungranted_lists_only_what_the_token_can_use(
    provider: Provider,
) -> None:
    reader = provider.token("notes:read")
    writer = provider.token("notes:read notes:write")
    async with mcp(make_auth(provider, hide_ungranted=True)) as (url, client):
        for_reader = await list_tools(client, url, reader)
        for_writer = await list_tools(client, url, writer)

    assert ["read_note", "whoami"] == [t["name"] for t in for_reader["tools"]]
    assert ["read_note", "write_note", "whoami"] == [
        t["name"] for t in for_writer["tools"]
    ]
    assert ("private", "private") == (
        for_reader["cacheScope"],
        for_writer["cacheScope"],
    )


async def test_without_hide_ungranted_every_tool_is_listed(provider: Provider) -> None:
    async with mcp(make_auth(provider)) as (url, client):
        listed = await list_tools(client, url, provider.token("notes:read"))

    assert ["read_note", "write_note", "whoami", "reboot"] == [
        t["name"] for t in listed["tools"]
    ]
    assert "private" == listed["cacheScope"]


async def test_the_raw_token_never_shows_in_logs_receipts_spans_or_reprs(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    exporter = span_exporter()
    exporter.clear()
    receipts: list[Receipt] = []
    token = provider.token("notes:read")
    auth = make_auth(provider)
    async with mcp(auth, receipts) as (url, client):
        assert 200 == (await call(client, url, token)).status_code
        assert (
            403
            == (
                await call(client, url, token, "write_note", {"name": "a", "text": "b"})
            ).status_code
        )
        assert 200 == (await call(client, url, token, "reboot")).status_code

    assert 3 == len(receipts)
    spans = exporter.get_finished_spans()
    assert 3 == len(spans)  # the 403 has its span too
    outcomes = {
        span.name: dict(span.attributes or {}).get("mcp.outcome") for span in spans
    }
    assert {
        "tools/call whoami": "ok",
        "tools/call write_note": "refused",
        "tools/call reboot": "refused",
    } == outcomes
    admitted = await auth.admit(f"Bearer {token}")
    shown = [
        caplog.text,
        repr(caplog.records),
        *(str(r.__dict__) for r in caplog.records),
        repr(receipts),
        *(json.dumps(r.as_record(), default=str) for r in receipts),
        repr(auth),
        repr(admitted),
        *(span.to_json() for span in spans),
    ]
    assert [] == [text for text in shown if token in text]
    signature = token.rsplit(".", 1)[1]
    assert [] == [text for text in shown if signature in text]


async def test_the_protocol_checks_come_before_the_step_up(provider: Provider) -> None:
    """A reader's malformed call to a writer's tool is a 400, not a 403: the
    step-up is the call runner's, after the revision's request checks."""
    token = provider.token("notes:read")
    headers = {
        **headers_for("tools/call", "write_note"),
        "authorization": f"Bearer {token}",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "write_note"},
    }
    async with mcp(make_auth(provider)) as (url, client):
        with trio.fail_after(15):
            response = await client.post(url + "/mcp", json=body, headers=headers)

    assert 400 == response.status_code
    assert -32602 == response.json()["error"]["code"]
