"""What an upstream receives of an inbound request: its own credential, the headers
named in ``forward_headers``, and nothing else; and no credential in any log or
receipt.

Real HTTP on both hops: a client calls the gateway (``serve_http``) with a bearer
token, a cookie and two headers; the upstream is a trio_mcp server behind a
pass-through that records every request's headers.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import pytest
from support import serving, serving_app
from support.gateway import listed
from support.receipts import Sink
from support.upstream import make_server

from trio_mcp import Server, Upstream
from trio_mcp.client import Client

INBOUND_TOKEN = "inbound-s3cret-token"
INBOUND_COOKIE = "sid=inbound-c00kie"
SECRETS = (INBOUND_TOKEN, "inbound-c00kie", "up-t0ken-for-alice", "up-k3y")


@attrs.frozen
class Person:
    """A principal that carries the inbound token outside its repr."""

    name: str
    token: str = attrs.field(repr=False)


def principal_of(scope: dict[str, Any]) -> Person | None:
    headers = dict(scope["headers"])
    bearer = headers.get(b"authorization", b"").decode()
    if not bearer.startswith("Bearer "):
        return None
    return Person("alice", bearer.removeprefix("Bearer "))


class Recording:
    """Records the headers of every request to the app behind it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.requests.append(headers)
        await self.app(scope, receive, send)


async def test_an_upstream_sees_its_own_credential_and_the_allowed_headers_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    asked: list[object] = []

    async def token_for(principal: object | None) -> str | None:
        asked.append(principal)
        return None if principal is None else f"up-t0ken-for-{principal.name}"  # type: ignore[attr-defined]

    sink = Sink()
    recording = Recording(make_server().mount())
    async with serving_app(recording) as upstream_base:
        gateway = Server(
            "gw",
            "1",
            receipts=sink,
            upstreams=[
                Upstream(
                    f"{upstream_base}/mcp",
                    headers={"X-Upstream-Key": "up-k3y"},
                    auth=token_for,
                    forward_headers=["X-Request-Id"],
                )
            ],
        )
        async with (
            serving(gateway, principal=principal_of) as base,
            Client(
                f"{base}/mcp",
                auth=INBOUND_TOKEN,
                headers={
                    "Cookie": INBOUND_COOKIE,
                    "X-Request-Id": "req-1",
                    "X-Other": "other-value",
                },
            ) as inbound,
        ):
            await listed(inbound.list_tools, "echo")
            result = await inbound.call_tool("echo", {"text": "hi"})

    assert "hi" == result.text
    call = next(r for r in recording.requests if r.get("mcp-method") == "tools/call")
    assert "Bearer up-t0ken-for-alice" == call["authorization"]
    assert "up-k3y" == call["x-upstream-key"]
    assert "req-1" == call["x-request-id"]
    assert "cookie" not in call
    assert "x-other" not in call
    catalog = [r for r in recording.requests if r.get("mcp-method") != "tools/call"]
    assert catalog  # discovery, lists, the listen stream: asked with no principal
    assert all("authorization" not in r for r in catalog)
    assert all(INBOUND_TOKEN not in str(r) for r in recording.requests)
    assert None in asked
    assert Person("alice", INBOUND_TOKEN) in asked
    shown = caplog.text + "".join(str(r.as_record()) for r in sink.receipts)
    for secret in SECRETS:
        assert secret not in shown
    assert any(r.upstream == f"{upstream_base}/mcp" for r in sink.receipts)


async def test_a_failing_credential_is_a_tool_error_that_shows_no_token() -> None:
    async def refuse(principal: object | None) -> str | None:
        if principal is None:
            return None
        raise RuntimeError(f"exchange failed for {INBOUND_TOKEN}")

    async with serving(make_server()) as upstream_base:
        gateway = Server(
            "gw", "1", upstreams=[Upstream(f"{upstream_base}/mcp", auth=refuse)]
        )
        async with (
            serving(gateway, principal=principal_of) as base,
            Client(f"{base}/mcp", auth=INBOUND_TOKEN) as inbound,
        ):
            await listed(inbound.list_tools, "echo")
            result = await inbound.call_tool("echo", {"text": "hi"})

    assert result.is_error
    assert (
        f"upstream {upstream_base}/mcp: its credential could not be obtained "
        "(RuntimeError)"
    ) == result.text
    assert INBOUND_TOKEN not in str(result.meta)
