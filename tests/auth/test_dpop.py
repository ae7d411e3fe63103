"""DPoP (RFC 9449) end to end: tokens a real authorization server binds to a key.

oidc-provider (conftest.py) issues DPoP-bound JWTs (``cnf.jkt``) to a client that
proves its key at the token endpoint, and answers introspection of bound opaque
tokens with ``cnf`` too. The MCP server is real Hypercorn on 127.0.0.1; the replay
test runs two of them sharing one real redis-server, as two replicas would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import attrs
import httpx
import pytest
import trio
from oauth_provider import (
    AUDIENCE,
    OPAQUE_AUDIENCE,
    READ,
    RESOURCE_SERVER,
    DPoPKey,
    Provider,
)
from support import serving, serving_websocket
from support.mcp_http import headers_for, request_body
from support.scale_procs import RedisServer
from support.ws_peer import handshake_answer

from trio_mcp import Server, ToolContext, tool
from trio_mcp._store import RedisStore
from trio_mcp.auth import BearerAuth, Introspection, TokenPrincipal
from trio_mcp.auth._dpop import DPOP_ALGORITHMS


@attrs.frozen
class Who:
    """Who a token speaks for."""

    id: str
    client_id: str | None


@tool(caps=[READ])
def whoami() -> Who:
    """Who the token speaks for."""
    principal = ToolContext.current().principal
    assert isinstance(principal, TokenPrincipal)
    return Who(principal.id, principal.client_id)


def make_auth(provider: Provider, **options: Any) -> BearerAuth:
    return BearerAuth(
        provider.issuer, AUDIENCE, scopes={"notes:read": [READ]}, **options
    )


@asynccontextmanager
async def mcp(auth: BearerAuth, **server: Any) -> AsyncIterator[str]:
    """The server's MCP endpoint URL."""
    async with serving(
        Server("notes", "1.0", tools=[whoami], **server), auth=auth
    ) as url:
        yield url + "/mcp"


async def call(
    url: str,
    authorization: str | None,
    proof: str | None = None,
    method: str = "POST",
) -> httpx.Response:
    headers = headers_for("tools/call", "whoami")
    if authorization is not None:
        headers["authorization"] = authorization
    if proof is not None:
        headers["dpop"] = proof
    body = request_body("tools/call", {"name": "whoami", "arguments": {}})
    async with httpx.AsyncClient() as client:
        with trio.fail_after(15):
            return await client.request(method, url, json=body, headers=headers)


def challenge(response: httpx.Response) -> tuple[str, dict[str, str]]:
    """The ``WWW-Authenticate`` scheme and parameters (values without escapes)."""
    scheme, _, rest = response.headers["www-authenticate"].partition(" ")
    params = {}
    for part in rest.split('", '):
        key, _, value = part.partition("=")
        params[key.strip()] = value.strip().strip('"')
    return scheme, params


def refused(response: httpx.Response, error: str, words: str) -> None:
    """A 401 in the DPoP scheme with ``error``, its description holding ``words``."""
    assert 401 == response.status_code, response.text
    scheme, params = challenge(response)
    assert "DPoP" == scheme
    assert error == params["error"]
    assert words in params["error_description"]
    assert params["algs"].split() == list(DPOP_ALGORITHMS)


# -- admitted -----------------------------------------------------------------------------
async def test_a_bound_token_with_a_valid_proof_runs_the_call(
    provider: Provider,
) -> None:
    key = DPoPKey()
    token = provider.token(dpop=key)
    async with mcp(make_auth(provider)) as url:
        response = await call(url, f"DPoP {token}", key.proof("POST", url, token))
        # The resource's canonical URI (its audience) is a valid htu too: what a
        # client behind a load balancer addresses.
        canonical = await call(url, f"DPoP {token}", key.proof("POST", AUDIENCE, token))

    assert 200 == response.status_code, response.text
    result = response.json()["result"]
    assert {"id": "agent", "client_id": "agent"} == result["structuredContent"]
    assert 200 == canonical.status_code, canonical.text


async def test_a_bound_opaque_token_is_checked_by_its_introspection_answer(
    provider: Provider,
) -> None:
    key = DPoPKey()
    token = provider.token(resource=OPAQUE_AUDIENCE, dpop=key)
    auth = BearerAuth(
        provider.issuer,
        OPAQUE_AUDIENCE,
        scopes={"notes:read": [READ]},
        introspection=Introspection(*RESOURCE_SERVER),
    )
    async with mcp(auth) as url:
        good = await call(url, f"DPoP {token}", key.proof("POST", url, token))
        bare = await call(url, f"Bearer {token}")

    assert 200 == good.status_code, good.text
    refused(bare, "invalid_token", "DPoP scheme")


# -- refused --------------------------------------------------------------------------------
async def test_a_bound_token_without_a_proof_is_refused(provider: Provider) -> None:
    key = DPoPKey()
    token = provider.token(dpop=key)
    async with mcp(make_auth(provider)) as url:
        missing = await call(url, f"DPoP {token}")
        as_bearer = await call(url, f"Bearer {token}", key.proof("POST", url, token))

    refused(missing, "invalid_dpop_proof", "needs a DPoP proof")
    refused(as_bearer, "invalid_token", "DPoP scheme")


async def test_a_wrong_method_url_key_time_or_token_is_refused(
    provider: Provider,
) -> None:
    key, stranger = DPoPKey(), DPoPKey()
    token = provider.token(dpop=key)
    other = provider.token(dpop=key)
    async with mcp(make_auth(provider)) as url:
        wrong = {
            "htm": await call(url, f"DPoP {token}", key.proof("GET", url, token)),
            "htu": await call(
                url, f"DPoP {token}", key.proof("POST", url + "/other", token)
            ),
            "another key": await call(
                url, f"DPoP {token}", stranger.proof("POST", url, token)
            ),
            "iat": await call(
                url,
                f"DPoP {token}",
                key.proof("POST", url, token, iat=1),
            ),
            "ath": await call(url, f"DPoP {token}", key.proof("POST", url, other)),
        }

    for fault, response in wrong.items():
        refused(response, "invalid_dpop_proof", fault)


async def test_a_stale_proof_is_refused_and_the_leeway_is_the_operators(
    provider: Provider,
) -> None:
    import time

    key = DPoPKey()
    token = provider.token(dpop=key)
    async with mcp(make_auth(provider, dpop_leeway=60)) as url:
        stale = await call(
            url,
            f"DPoP {token}",
            key.proof("POST", url, token, iat=int(time.time()) - 90),
        )
        recent = await call(
            url,
            f"DPoP {token}",
            key.proof("POST", url, token, iat=int(time.time()) - 30),
        )
        future = await call(
            url,
            f"DPoP {token}",
            key.proof("POST", url, token, iat=int(time.time()) + 90),
        )

    refused(stale, "invalid_dpop_proof", "too old")
    assert 200 == recent.status_code, recent.text
    refused(future, "invalid_dpop_proof", "(iat)")


async def test_an_unbound_token_is_refused_when_dpop_is_required(
    provider: Provider,
) -> None:
    key = DPoPKey()
    bound, plain = provider.token(dpop=key), provider.token()
    async with (
        mcp(make_auth(provider, dpop="required")) as url,
        httpx.AsyncClient() as client,
    ):
        unbound = await call(url, f"Bearer {plain}")
        nothing = await call(url, None)
        admitted = await call(url, f"DPoP {bound}", key.proof("POST", url, bound))
        metadata = await client.get(
            url.removesuffix("/mcp") + "/.well-known/oauth-protected-resource/mcp"
        )

    refused(unbound, "invalid_token", "only DPoP-bound tokens")
    assert 401 == nothing.status_code
    assert "DPoP" == challenge(nothing)[0]
    assert 200 == admitted.status_code, admitted.text
    document = metadata.json()
    assert document["dpop_bound_access_tokens_required"] is True
    assert list(DPOP_ALGORITHMS) == document["dpop_signing_alg_values_supported"]


async def test_an_unbound_token_is_admitted_by_default_but_not_as_dpop(
    provider: Provider,
) -> None:
    plain = provider.token()
    async with mcp(make_auth(provider)) as url:
        admitted = await call(url, f"Bearer {plain}")
        as_dpop = await call(url, f"DPoP {plain}", DPoPKey().proof("POST", url, plain))

    assert 200 == admitted.status_code, admitted.text
    refused(as_dpop, "invalid_token", "not DPoP-bound")


async def test_a_replayed_proof_is_refused_on_another_replica(
    provider: Provider, redis_server: RedisServer
) -> None:
    key = DPoPKey()
    token = provider.token(dpop=key)
    # Each replica has its own BearerAuth (its own token cache), as two processes do.
    async with AsyncExitStack() as stack:
        urls = [
            await stack.enter_async_context(
                mcp(make_auth(provider), store=RedisStore(redis_server.url))
            )
            for _ in range(2)
        ]
        assert urls[0] != urls[1]
        proof = key.proof("POST", AUDIENCE, token)
        first = await call(urls[0], f"DPoP {token}", proof)
        again_elsewhere = await call(urls[1], f"DPoP {token}", proof)
        again_here = await call(urls[0], f"DPoP {token}", proof)
        fresh = await call(urls[1], f"DPoP {token}", key.proof("POST", AUDIENCE, token))

    assert 200 == first.status_code, first.text
    refused(again_elsewhere, "invalid_dpop_proof", "used before")
    refused(again_here, "invalid_dpop_proof", "used before")
    assert 200 == fresh.status_code, fresh.text


async def test_a_replica_whose_store_is_down_refuses_bound_tokens(
    provider: Provider, redis_server: RedisServer
) -> None:
    key = DPoPKey()
    token = provider.token(dpop=key)
    store = RedisStore(redis_server.url, timeout=0.5)
    async with mcp(make_auth(provider), store=store) as url:
        redis_server.stop()
        try:
            response = await call(url, f"DPoP {token}", key.proof("POST", url, token))
        finally:
            redis_server.start()

    refused(response, "invalid_dpop_proof", "could not be checked for replay")


@pytest.mark.parametrize("scheme", ["Bearer", "DPoP"])
async def test_a_bound_token_is_refused_over_websocket(
    provider: Provider, scheme: str
) -> None:
    """A WebSocket connection outlives any one proof: DPoP-bound tokens are for
    Streamable HTTP (each request proven), and refused at the handshake."""
    key = DPoPKey()
    token = provider.token(dpop=key)
    server = Server("notes", "1.0", tools=[whoami])
    async with serving_websocket(server, auth=make_auth(provider)) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        status, headers = await handshake_answer(
            port,
            headers={
                "authorization": f"{scheme} {token}",
                "dpop": key.proof("GET", url, token),
            },
        )

    assert 401 == status
    assert headers["www-authenticate"].startswith("DPoP ")
