"""The official Python client's OAuth discovery (``mcp`` 2.3.0) against our metadata.

Offline, on 127.0.0.1: a host application authenticates bearer tokens in front of a
mounted trio_mcp server that has ``resource_metadata=``; a minimal authorization
server (RFC 8414 metadata, RFC 7591 registration, a token endpoint) runs beside it.
The SDK's ``OAuthClientProvider`` gets our 401, follows ``resource_metadata`` from
``WWW-Authenticate`` (RFC 9728 §5.1), validates the document against the endpoint
(RFC 8707), discovers and registers with the authorization server it names, runs
the authorization-code grant with PKCE (the browser step is the redirect handler
reading the URL), and retries with the token. Token checking stays with the host.
"""

from __future__ import annotations

import secrets
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import trio
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from support import serving_app
from support.asgi import Recorder
from support.sdk import sdk_streams_left_open

from trio_mcp import ProtectedResource, Server, ToolContext, tool

TOKEN = f"token-{secrets.token_hex(8)}"


@tool
def whoami() -> str:
    """Return the principal the host authenticated."""
    return str(ToolContext.current().principal_id)


class AuthorizationServer:
    """Just enough of an OAuth 2.1 authorization server to issue one token."""

    def __init__(self) -> None:
        self.issuer = ""
        self.seen: list[str] = []
        self.token_requests: list[dict[str, list[str]]] = []
        self.app = Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self.metadata),
                Route("/register", self.register, methods=["POST"]),
                Route("/token", self.token, methods=["POST"]),
            ]
        )

    async def metadata(self, request: Request) -> JSONResponse:
        self.seen.append("metadata")
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "registration_endpoint": f"{self.issuer}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
        )

    async def register(self, request: Request) -> JSONResponse:
        self.seen.append("register")
        client = await request.json()
        client.update(client_id="client-1", token_endpoint_auth_method="none")
        return JSONResponse(client, status_code=201)

    async def token(self, request: Request) -> JSONResponse:
        self.seen.append("token")
        form = parse_qs((await request.body()).decode())
        self.token_requests.append(form)
        return JSONResponse(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}
        )


class MemoryStorage:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """The user's browser: it approves at once and the callback gets the code."""

    def __init__(self) -> None:
        self.authorization_urls: list[str] = []

    async def open(self, url: str) -> None:
        self.authorization_urls.append(url)

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.authorization_urls[-1]).query)
        return AuthorizationCodeResult(code="code-1", state=query["state"][0])


def bearer(scope: MutableMapping[str, Any]) -> str | None:
    headers = dict(scope["headers"])
    expected = f"Bearer {TOKEN}".encode()
    return "oauth-user" if headers.get(b"authorization") == expected else None


@sdk_streams_left_open
async def test_the_official_client_discovers_authorizes_and_calls() -> None:
    auth = AuthorizationServer()
    browser = Browser()
    async with serving_app(auth.app) as auth_url:
        auth.issuer = auth_url
        server = Server("oauth", "1", tools=[whoami])
        host = Recorder(
            server.mount(
                require_auth=True,
                principal=bearer,
                resource_metadata=ProtectedResource(
                    authorization_servers=[auth_url],
                    scopes_supported=["mcp:tools"],
                ),
            )
        )
        async with serving_app(host) as url:
            provider = OAuthClientProvider(
                server_url=f"{url}/mcp",
                client_metadata=OAuthClientMetadata(
                    client_name="trio-mcp test",
                    redirect_uris=[AnyUrl("http://127.0.0.1:1/callback")],
                ),
                storage=MemoryStorage(),
                redirect_handler=browser.open,
                callback_handler=browser.callback,
            )
            with trio.fail_after(30):
                async with (
                    httpx2.AsyncClient(auth=provider, timeout=30) as http,
                    Client(
                        streamable_http_client(f"{url}/mcp", http_client=http)
                    ) as client,
                ):
                    result = await client.call_tool("whoami", {})

    metadata_path = "/.well-known/oauth-protected-resource/mcp"
    assert ("POST", "/mcp", 401) == host.paths[0]
    assert ("GET", metadata_path, 200) in host.paths
    assert ["metadata", "register", "token"] == auth.seen
    (authorization_url,) = browser.authorization_urls
    query = parse_qs(urlsplit(authorization_url).query)
    assert [f"{url}/mcp"] == query["resource"]
    assert ["mcp:tools"] == query["scope"]
    assert [f"{url}/mcp"] == auth.token_requests[0]["resource"]
    assert (False, "oauth-user") == (result.is_error, result.structured_content)
