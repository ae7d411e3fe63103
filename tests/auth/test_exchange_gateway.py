"""A gateway in front of an upstream with its own audience, across a real token
exchange (RFC 8693).

Everything is real: oidc-provider (conftest.py) issues the caller's token for the
gateway's audience and exchanges it (its registered token-exchange grant) for one
for ``UPSTREAM_AUDIENCE``; the gateway is ``serve_http(auth=BearerAuth(...))`` with
``Upstream(url, auth=TokenExchange(...))``; the upstream is another trio_mcp server
over HTTP whose principal is what a ``BearerAuth`` of its own audience makes of the
request's token. It lists its catalog to anyone on loopback (the gateway's own
catalog requests carry no token, RFC 8693 having no caller to exchange for) and its
tool answers who called. Logs, receipts and results are searched for both tokens.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import attrs
import pytest
from oauth_provider import AUDIENCE, GATEWAY, READ, UPSTREAM_AUDIENCE, Provider
from support import serving, serving_app
from support.gateway import listed
from support.receipts import Sink

from trio_mcp import Server, ToolContext, Upstream, tool
from trio_mcp._http._oauth import Admission
from trio_mcp.auth import BearerAuth, TokenExchange, TokenPrincipal
from trio_mcp.client import Client


@attrs.frozen
class Caller:
    """Who the upstream served."""

    id: str
    client_id: str | None
    audience: str


@tool
def who_called() -> Caller:
    """Who the upstream's token speaks for."""
    principal = ToolContext.current().principal
    if not isinstance(principal, TokenPrincipal):
        return Caller("anonymous", None, "")
    return Caller(principal.id, principal.client_id, str(principal.claims["aud"]))


class Recorder:
    """The upstream app, recording each request's ``Authorization``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            value = dict(scope["headers"]).get(b"authorization")
            self.seen.append(None if value is None else value.decode())
        await self.app(scope, receive, send)


def upstream_app(provider: Provider) -> Recorder:
    checker = BearerAuth(provider.issuer, UPSTREAM_AUDIENCE)

    async def verified(scope: MutableMapping[str, Any]) -> object | None:
        value = dict(scope["headers"]).get(b"authorization")
        if value is None:
            return None
        admission = await checker.admit(value.decode())
        return admission.principal if isinstance(admission, Admission) else None

    server = Server("upstream", "1.0", tools=[who_called])
    return Recorder(server.mount(principal=verified))


@attrs.frozen
class Run:
    """What one run of a gateway in front of the upstream gave."""

    upstream: str
    """The upstream's URL (it names it in receipts and errors)."""
    results: list[Any]
    seen: list[str | None]
    """The ``Authorization`` of each request the upstream received."""
    shown: str
    """The receipts of the run, as records."""


async def through_gateway(
    provider: Provider, inbound: str, exchange: TokenExchange, calls: int
) -> Run:
    """Serve the upstream and a gateway reaching it with ``exchange``; call
    ``who_called`` through the gateway ``calls`` times with ``inbound``."""
    sink = Sink()
    recorder = upstream_app(provider)
    async with serving_app(recorder) as upstream:
        server = Server(
            "gateway",
            "1.0",
            receipts=sink,
            upstreams=[Upstream(f"{upstream}/mcp", auth=exchange, caps=[READ])],
        )
        gateway_auth = BearerAuth(
            provider.issuer, AUDIENCE, scopes={"notes:read": [READ]}
        )
        async with (
            serving(server, auth=gateway_auth) as base,
            Client(f"{base}/mcp", auth=inbound) as client,
        ):
            await listed(client.list_tools, "who_called")
            results = [await client.call_tool("who_called") for _ in range(calls)]
    receipts = "".join(str(r.as_record()) for r in sink.receipts)
    assert f"{upstream}/mcp" in {r.upstream for r in sink.receipts}
    return Run(f"{upstream}/mcp", results, recorder.seen, receipts)


async def test_the_upstream_sees_an_exchanged_token_for_the_callers_subject(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    inbound = provider.token("notes:read")
    exchange = TokenExchange(
        f"{provider.issuer}/token",
        *GATEWAY,
        resource=UPSTREAM_AUDIENCE,
        scope="notes:read",
    )
    run = await through_gateway(provider, inbound, exchange, calls=2)

    first, second = run.results
    assert not first.is_error, first.text
    assert {
        "id": "agent",
        "client_id": "gateway",
        "audience": UPSTREAM_AUDIENCE,
    } == first.structured
    assert first.structured == second.structured
    sent = [value for value in run.seen if value is not None]
    assert 2 == len(sent)  # the two calls; the catalog requests carried none
    assert sent[0] == sent[1]  # the second call reused the cached token
    exchanged = sent[0].removeprefix("Bearer ")
    assert exchanged != inbound
    assert None in run.seen
    shown = caplog.text + run.shown + str(first) + str(second)
    assert inbound not in shown
    assert exchanged not in shown


async def test_a_failed_exchange_is_a_tool_error_naming_the_upstream(
    provider: Provider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    inbound = provider.token("notes:read")
    refused = TokenExchange(
        f"{provider.issuer}/token", GATEWAY[0], "not-the-gateways-secret",
        resource=UPSTREAM_AUDIENCE,
    )  # fmt: skip
    run = await through_gateway(provider, inbound, refused, calls=1)

    [result] = run.results
    assert result.is_error
    assert (
        f"upstream {run.upstream}: its credential could not be obtained (ExchangeFailed)"
    ) == result.text
    assert all(value is None for value in run.seen)  # never called without one
    shown = caplog.text + run.shown
    assert inbound not in shown + str(result)
    assert "not-the-gateways-secret" not in shown
    assert "answered HTTP 401, error invalid_client" in caplog.text
