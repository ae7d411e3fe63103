"""Cache scope from every guard (issue 11 "Cache scope"; RFC 156 Protocol 6).

Discovery and every list are ``cacheScope: "private"`` whenever the answer could
depend on who asks: a declaration of any kind with ``caps=``, an ``allow=`` that is
a per-principal callable, or an authenticated caller (a mount with
``require_auth=True`` serves only those). Otherwise they stay ``"public"`` with
``ttlMs: 3600000`` (api.md "Catalog defaults").
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support import serving, wire
from support.mcp_http import headers_for, post
from support.tools import add, greet

from trio_mcp import Capability, Server, resource
from trio_mcp.testing import McpTestClient

reports = Capability("reports", description="Read reports")
VERSION = "2026-07-28"
LISTS = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
]


@resource(uri="notes://{day}")
def notes(day: str) -> str:
    """
    The notes of a day.

    Args:
        day: Which day.
    """
    return day


@resource(uri="report://latest", caps=[reports])
def latest() -> str:
    """The latest report."""
    return "report"


@resource(uri="readme://main")
def readme() -> str:
    """The readme."""
    return "readme"


def open_server() -> Server:
    return Server("open", "1", tools=[add], prompts=[greet], resources=[notes, readme])


async def _scopes(client: McpTestClient) -> dict[str, tuple[str, int]]:
    found = {}
    for method in LISTS:
        result = wire(await client.request(method, {}))
        found[method] = (result["cacheScope"], result["ttlMs"])
    return found


def _all(scope: str) -> dict[str, tuple[str, int]]:
    return dict.fromkeys(LISTS, (scope, 3_600_000))


async def test_an_unguarded_catalog_is_public_everywhere() -> None:
    async with McpTestClient(open_server()) as client:
        assert _all("public") == await _scopes(client)


async def test_a_guard_on_a_resource_alone_makes_every_list_private() -> None:
    """Only a resource has caps=: tools/list and discovery are private all the same."""
    server = Server(
        "guarded", "1", tools=[add], prompts=[greet], resources=[notes, latest]
    )
    async with McpTestClient(server) as client:
        assert _all("private") == await _scopes(client)


async def test_a_per_principal_allow_makes_every_list_private() -> None:
    def allow(principal: object) -> list[Capability]:
        return [reports] if principal == "alice" else []

    async with McpTestClient(open_server(), allow=allow) as client:
        assert _all("private") == await _scopes(client)


async def test_a_fixed_allow_keeps_an_unguarded_catalog_public() -> None:
    async with McpTestClient(open_server(), allow=[reports]) as client:
        assert _all("public") == await _scopes(client)


async def test_an_authenticated_caller_gets_private_lists() -> None:
    async with McpTestClient(open_server(), principal="alice") as client:
        assert _all("private") == await _scopes(client)


async def _http_scopes(**mount: Any) -> dict[str, tuple[str, int]]:
    """Every list over Hypercorn on 127.0.0.1, authenticated as alice."""
    server = open_server()
    found = {}
    async with serving(server, **mount) as base, httpx.AsyncClient(timeout=30) as http:
        for index, method in enumerate(LISTS):
            response = await post(
                http,
                base,
                method,
                request_id=index,
                meta=McpTestClient(server).meta(),
                headers=headers_for(method, authorization="Bearer alice-token"),
                wait=30,
            )
            assert 200 == response.status_code, response.text
            result = response.json()["result"]
            found[method] = (result["cacheScope"], result["ttlMs"])
    return found


def _bearer(scope: dict[str, Any]) -> str | None:
    headers = dict(scope["headers"])
    return "alice" if headers.get(b"authorization") == b"Bearer alice-token" else None


@pytest.mark.parametrize(
    ("mount", "expected"),
    [
        ({}, "public"),
        ({"require_auth": True, "principal": _bearer}, "private"),
    ],
    ids=["open", "require_auth"],
)
async def test_require_auth_makes_every_list_private_over_http(
    mount: dict[str, Any], expected: str
) -> None:
    assert _all(expected) == await _http_scopes(**mount)
