"""Everything of HTTP holds through the mount: auth, limits, metrics, receipts.

The mount serves every request with the app ``server.mount`` returns, so these are
the HTTP transport's own behaviours, checked once more end to end under uvicorn and
FastAPI: the principal from the host's authentication middleware, a 401 without
one, the busy answer past ``Limits``, the Prometheus scrape of ``metrics_path`` and a
receipt per call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from asgi_hosts import fastapi_host, post_call, run_clean, serving_uvicorn
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from starlette.middleware.authentication import AuthenticationMiddleware
from support.host_auth import HeaderUser
from support.waiting import Held

from trio_mcp import Limits, Receipt, Server, ToolContext, tool


@tool
async def whoami() -> str:
    """Name the caller."""
    principal = ToolContext.current().principal
    return getattr(principal, "username", "nobody")


def _app(server: Server, **options: Any) -> FastAPI:
    app, _ = fastapi_host(server, **options)
    app.add_middleware(AuthenticationMiddleware, backend=HeaderUser())
    return app


def test_the_principal_comes_from_the_hosts_authentication() -> None:
    """FastAPI's authentication middleware sets ``scope["user"]``; the tool sees it,
    the receipt names it, and ``require_auth`` answers 401 without it."""
    receipts: list[Receipt] = []
    server = Server("auth", "1.0", tools=[whoami], receipts=receipts.append)
    app = _app(server, require_auth=True)

    async def main() -> tuple[httpx.Response, httpx.Response]:
        async with serving_uvicorn(app) as url, httpx.AsyncClient() as client:
            known = await post_call(
                client, url + "/mcp/", "whoami", **{"x-user": "ada"}
            )
            anonymous = await post_call(client, url + "/mcp/", "whoami")
        return known, anonymous

    known, anonymous = run_clean(main)

    assert "ada" == known.json()["result"]["structuredContent"]
    assert 401 == anonymous.status_code
    assert "Bearer" == anonymous.headers["www-authenticate"]
    assert [("ok", "ada")] == [(r.outcome, r.principal_id) for r in receipts]


def test_a_call_past_the_limits_is_answered_busy_at_once() -> None:
    """``max_concurrent=1, max_waiting=0``: a second call gets 503, Retry-After and
    -32000 while the first runs; the first still answers."""
    hold = Held("hold", "held", asyncio.Event)
    server = Server("busy", "1.0", tools=[hold.tool])
    app = _app(server, limits=Limits(max_concurrent=1, max_waiting=0))

    async def main() -> tuple[httpx.Response, httpx.Response]:
        async with serving_uvicorn(app) as url, httpx.AsyncClient() as client:
            first = asyncio.create_task(post_call(client, url + "/mcp/", "hold"))
            await hold.started.wait()
            busy = await post_call(client, url + "/mcp/", "hold")
            hold.release.set()  # a sync Trio call from the host loop: allowed in guest mode
            return await first, busy

    first, busy = run_clean(main)

    assert "held" == first.json()["result"]["structuredContent"]
    assert 503 == busy.status_code
    assert "retry-after" in busy.headers
    assert -32000 == busy.json()["error"]["code"]


def test_metrics_are_scraped_through_the_mount() -> None:
    """``metrics_path`` is served below the mount, counting the calls made."""
    server = Server("metrics", "1.0", tools=[whoami])
    app = _app(server, metrics_path="/metrics")

    def calls(text: str) -> float:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if (
                    sample.name == "mcp_server_operation_duration_seconds_count"
                    and sample.labels.get("gen_ai_tool_name") == "whoami"
                ):
                    return sample.value
        return 0.0

    async def main() -> tuple[float, float]:
        async with serving_uvicorn(app) as url, httpx.AsyncClient() as client:
            before = calls((await client.get(url + "/mcp/metrics")).text)
            for _ in range(3):
                await post_call(client, url + "/mcp/", "whoami")
            after = calls((await client.get(url + "/mcp/metrics")).text)
        return before, after

    before, after = run_clean(main)

    assert 3 == after - before
