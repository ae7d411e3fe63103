"""Who may reach a mounted app: binding, RFC 9728 metadata and CORS.

- ``mount()`` serves requests that arrive on a loopback address; one that arrives
  elsewhere (``scope["server"]``, which the ASGI server fills from the socket's local
  address) is refused with 403 naming ``McpError.InsecureBinding`` unless
  ``require_auth=True`` (issue 11). Only 127.0.0.1 and ::1 exist here, so the
  non-loopback arrivals are ASGI scopes as Hypercorn builds them for a LAN interface,
  and Starlette's own test client, which reports ``("testserver", 80)``.
- ``resource_metadata=`` serves RFC 9728 metadata and a 401 points to it; ``cors_origins=``
  answers preflight and exposes the response headers (api.md "HTTP authorization
  metadata and browsers"), over Hypercorn on 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient
from support import serving, serving_app
from support.asgi import asgi_exchange
from support.mcp_http import headers_for, post, request_body
from test_http import make_server

from trio_mcp import ProtectedResource
from trio_mcp.testing import check_message

AUTH_SERVER = "https://auth.example.com"


def bearer(scope: MutableMapping[str, Any]) -> str | None:
    """The host's authentication: one known bearer token."""
    headers = dict(scope["headers"])
    return "alice" if headers.get(b"authorization") == b"Bearer good-token" else None


async def asgi_request(
    app: Any,
    server: tuple[str, int | None] | None,
    method: str = "POST",
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> tuple[int, dict[str, str], bytes]:
    """Call the ASGI app as an ASGI server would, arriving on ``server``."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (k.encode(), v.encode())
            for k, v in {"host": "localhost:8000", **(headers or {})}.items()
        ],
        "client": ("192.0.2.99", 50000),
        "server": server,
    }
    sent = await asgi_exchange(app, scope, body)
    start = sent[0]
    assert "http.response.start" == start["type"]
    fields = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], fields, b"".join(m.get("body", b"") for m in sent[1:])


def discover_body() -> bytes:
    return json.dumps(request_body("server/discover")).encode()


# -- mount() behind a non-loopback address ------------------------------------------
@pytest.mark.parametrize(
    "server",
    [("192.0.2.10", 8000), ("2001:db8::1", 8000), ("0.0.0.0", 8000), None],
    ids=["ipv4", "ipv6", "unspecified", "unknown"],
)
async def test_a_request_arriving_beyond_loopback_is_refused(
    server: tuple[str, int] | None,
) -> None:
    app = make_server().mount()
    status, _, body = await asgi_request(
        app, server, headers=headers_for("server/discover"), body=discover_body()
    )

    message = json.loads(body)
    assert 403 == status
    assert "McpError.InsecureBinding" in message["error"]["message"]
    assert "require_auth=True" in message["error"]["message"]
    assert "allowed_hosts" in message["error"]["message"]
    assert "id" not in message


@pytest.mark.parametrize(
    "server",
    [("127.0.0.1", 8000), ("127.8.9.10", 8000), ("::1", 8000), ("::ffff:127.0.0.1", 1)],
    ids=["127.0.0.1", "127/8", "::1", "mapped"],
)
async def test_a_request_arriving_on_loopback_is_served(
    server: tuple[str, int],
) -> None:
    app = make_server().mount()
    status, _, body = await asgi_request(
        app, server, headers=headers_for("server/discover"), body=discover_body()
    )

    assert 200 == status
    check_message(json.loads(body), "server/discover")


async def test_the_refusal_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    app = make_server().mount()
    with caplog.at_level(logging.ERROR, logger="trio_mcp.http"):
        for _ in range(3):
            await asgi_request(app, ("192.0.2.10", 8000), path="/healthz", method="GET")

    refusals = [r for r in caplog.records if "InsecureBinding" in r.getMessage()]
    assert 1 == len(refusals)
    assert "192.0.2.10" in refusals[0].getMessage()
    assert "require_auth=True" in refusals[0].getMessage()


async def test_require_auth_serves_beyond_loopback() -> None:
    """With require_auth=True the host's authentication decides: 401, then 200."""
    app = make_server().mount(
        require_auth=True, principal=bearer, allowed_hosts=["mcp.example.com"]
    )
    anonymous, _, _ = await asgi_request(
        app,
        ("192.0.2.10", 8000),
        headers=headers_for("server/discover", host="mcp.example.com"),
        body=discover_body(),
    )
    signed_in, _, body = await asgi_request(
        app,
        ("192.0.2.10", 8000),
        headers=headers_for(
            "server/discover", host="mcp.example.com", authorization="Bearer good-token"
        ),
        body=discover_body(),
    )

    assert (401, 200) == (anonymous, signed_in)
    check_message(json.loads(body), "server/discover")


def test_a_host_that_reports_no_loopback_address_is_refused() -> None:
    """Inside Starlette, driven by its test client (server ``testserver``)."""
    host = Starlette(routes=[Mount("/api", app=make_server().mount())])
    with TestClient(host, backend="trio") as client:
        response = client.post(
            "/api/mcp",
            json=request_body("server/discover"),
            headers=headers_for("server/discover"),
        )

    assert 403 == response.status_code
    assert "McpError.InsecureBinding" in response.json()["error"]["message"]


async def test_serve_http_on_loopback_is_unaffected() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        response = await post(client, url, "server/discover")

    assert 200 == response.status_code


# -- RFC 9728 protected resource metadata ---------------------------------------------
def protected() -> ProtectedResource:
    return ProtectedResource(
        authorization_servers=[AUTH_SERVER], scopes_supported=["mcp:tools", "mcp:read"]
    )


async def test_a_401_points_to_the_metadata_which_describes_the_endpoint() -> None:
    server = make_server()
    async with (
        serving(
            server, require_auth=True, principal=bearer, resource_metadata=protected()
        ) as url,
        httpx.AsyncClient() as client,
    ):
        refused = await post(client, url, "server/discover")
        metadata_url = f"{url}/.well-known/oauth-protected-resource/mcp"
        metadata = await client.get(metadata_url)
        allowed = await post(
            client, url, "server/discover", authorization="Bearer good-token"
        )

    assert 401 == refused.status_code
    assert (
        f'Bearer resource_metadata="{metadata_url}", scope="mcp:tools mcp:read"'
        == refused.headers["www-authenticate"]
    )
    assert 200 == metadata.status_code
    assert "application/json" == metadata.headers["content-type"]
    assert {
        "resource": f"{url}/mcp",
        "authorization_servers": [AUTH_SERVER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:tools", "mcp:read"],
    } == metadata.json()
    assert 200 == allowed.status_code


async def test_without_metadata_a_401_is_a_plain_bearer_challenge() -> None:
    async with (
        serving(make_server(), require_auth=True, principal=bearer) as url,
        httpx.AsyncClient() as client,
    ):
        refused = await post(client, url, "server/discover")
        metadata = await client.get(f"{url}/.well-known/oauth-protected-resource/mcp")

    assert ("Bearer", 404) == (
        refused.headers["www-authenticate"],
        metadata.status_code,
    )


async def test_below_a_mount_point_the_header_leads_to_the_app() -> None:
    """Mounted at /api, the metadata is under the mount point and names /api/mcp."""
    app = make_server().mount(
        require_auth=True, principal=bearer, resource_metadata=protected()
    )
    host = Starlette(routes=[Mount("/api", app=app)])
    async with serving_app(host) as url, httpx.AsyncClient() as client:
        refused = await client.post(
            url + "/api/mcp",
            json=request_body("server/discover"),
            headers=headers_for("server/discover"),
        )
        pointed = refused.headers["www-authenticate"].split('"')[1]
        metadata = await client.get(pointed)

    assert f"{url}/api/.well-known/oauth-protected-resource/mcp" == pointed
    assert f"{url}/api/mcp" == metadata.json()["resource"]


async def test_an_explicit_resource_is_the_identifier_and_the_well_known_path() -> None:
    """Behind a proxy: resource= names the public URL; RFC 9728 §3.1 derives the rest."""
    described = ProtectedResource(
        authorization_servers=[AUTH_SERVER],
        resource="https://mcp.example.com/tools/mcp",
        resource_name="Example tools",
    )
    async with (
        serving(
            make_server(),
            require_auth=True,
            principal=bearer,
            resource_metadata=described,
        ) as url,
        httpx.AsyncClient() as client,
    ):
        refused = await post(client, url, "server/discover")
        metadata = await client.get(
            f"{url}/.well-known/oauth-protected-resource/tools/mcp"
        )

    assert (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/'
        'oauth-protected-resource/tools/mcp"' == refused.headers["www-authenticate"]
    )
    assert {
        "resource": "https://mcp.example.com/tools/mcp",
        "authorization_servers": [AUTH_SERVER],
        "bearer_methods_supported": ["header"],
        "resource_name": "Example tools",
    } == metadata.json()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"authorization_servers": []}, "at least one issuer"),
        ({"authorization_servers": ["auth.example.com"]}, "http"),
        ({"authorization_servers": [AUTH_SERVER + "?x=1"]}, "without query"),
        ({"authorization_servers": [AUTH_SERVER], "resource": "/mcp"}, "absolute"),
    ],
)
def test_protected_resource_refuses_what_clients_would_refuse(
    kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        ProtectedResource(**kwargs)


def test_a_bare_string_is_not_split_into_letters() -> None:
    with pytest.raises(TypeError, match="list of strings"):
        ProtectedResource(authorization_servers=AUTH_SERVER)


# -- CORS --------------------------------------------------------------------------------
APP_ORIGIN = "https://app.example"
#: The request headers an MCP client in a browser sends.
MCP_HEADERS = (
    "content-type",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-param-region",
    "authorization",
)


async def preflight(
    client: httpx.AsyncClient, url: str, origin: str, *asked: str
) -> httpx.Response:
    """The CORS preflight of a POST to /mcp from ``origin``, asking for the
    ``asked`` request headers."""
    headers = {"origin": origin, "access-control-request-method": "POST"}
    if asked:
        headers["access-control-request-headers"] = ", ".join(asked)
    return await client.options(url + "/mcp", headers=headers)


async def test_cors_is_off_by_default() -> None:
    async with serving(make_server()) as url, httpx.AsyncClient() as client:
        asked = await preflight(client, url, APP_ORIGIN)
        call = await post(client, url, "server/discover", origin=APP_ORIGIN)

    assert (403, 403) == (asked.status_code, call.status_code)
    assert "access-control-allow-origin" not in call.headers


async def test_a_preflight_from_an_allowed_origin_allows_the_mcp_headers() -> None:
    async with (
        serving(make_server(), cors_origins=[APP_ORIGIN]) as url,
        httpx.AsyncClient() as client,
    ):
        asked = await preflight(client, url, APP_ORIGIN, *MCP_HEADERS)

    allowed = {
        h.strip() for h in asked.headers["access-control-allow-headers"].split(",")
    }
    assert 204 == asked.status_code
    assert APP_ORIGIN == asked.headers["access-control-allow-origin"]
    assert "POST" in asked.headers["access-control-allow-methods"]
    assert set(MCP_HEADERS) == allowed


async def test_responses_to_an_allowed_origin_are_readable_errors_included() -> None:
    """A browser must read a 401's challenge too: expose WWW-Authenticate."""
    async with (
        serving(
            make_server(),
            cors_origins=[APP_ORIGIN],
            require_auth=True,
            principal=bearer,
            resource_metadata=protected(),
        ) as url,
        httpx.AsyncClient() as client,
    ):
        refused = await post(client, url, "server/discover", origin=APP_ORIGIN)
        served = await post(
            client,
            url,
            "server/discover",
            headers=headers_for(
                "server/discover", origin=APP_ORIGIN, authorization="Bearer good-token"
            ),
        )
        metadata = await client.get(
            url + "/.well-known/oauth-protected-resource/mcp",
            headers={"origin": APP_ORIGIN},
        )

    for response in (refused, served, metadata):
        assert APP_ORIGIN == response.headers["access-control-allow-origin"]
        assert "Origin" in response.headers["vary"]
    exposed = refused.headers["access-control-expose-headers"]
    assert "WWW-Authenticate" in exposed
    assert (401, 200, 200) == (
        refused.status_code,
        served.status_code,
        metadata.status_code,
    )


async def test_other_origins_get_no_cors_headers_and_are_refused() -> None:
    async with (
        serving(make_server(), cors_origins=[APP_ORIGIN]) as url,
        httpx.AsyncClient() as client,
    ):
        asked = await preflight(client, url, "https://evil.example")
        call = await post(client, url, "server/discover", origin="https://evil.example")

    assert (403, 403) == (asked.status_code, call.status_code)
    assert "access-control-allow-origin" not in asked.headers
    assert "access-control-allow-origin" not in call.headers


async def test_a_wildcard_allows_any_origin_and_echoes_it() -> None:
    async with (
        serving(make_server(), cors_origins=["*"]) as url,
        httpx.AsyncClient() as client,
    ):
        call = await post(client, url, "server/discover", origin="https://any.example")

    assert 200 == call.status_code
    assert "https://any.example" == call.headers["access-control-allow-origin"]
