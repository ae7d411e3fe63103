"""``serve_websocket`` follows ``serve_http``'s rules (issue 34): no bind beyond
loopback without authentication, a principal from the handshake, a rate limit per
caller. (Bearer tokens over WebSocket: tests/auth/test_websocket_bearer.py.)
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import pytest
from support import serving_websocket
from support.host_auth import user_from_header
from support.tools import echo
from support.ws_peer import connected, handshake_answer

from trio_mcp import (
    InsecureBinding,
    Limits,
    RateLimit,
    Receipt,
    Server,
    ToolContext,
    tool,
)


@tool
def who() -> str:
    """Say who is calling."""
    return str(ToolContext.current().principal)


def ws_user(scope: MutableMapping[str, Any]) -> str | None:
    """The ``x-user`` header of a WebSocket handshake."""
    assert "websocket" == scope["type"]
    return user_from_header(scope)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.com"])
async def test_a_bind_beyond_loopback_without_auth_is_refused_before_binding(
    host: str,
) -> None:
    server = Server("ws", "1", tools=[echo])
    with pytest.raises(InsecureBinding, match="refusing to serve WebSocket on"):
        await server.serve_websocket(host, 0)


@pytest.mark.parametrize(
    "option",
    [
        {"principal": ws_user},
        {"rate_limit": RateLimit(10, 1)},
        {"trusted_proxies": ["127.0.0.1"]},
        {"trusted_proxies": ["127.0.0.1"], "forwarded_header": "forwarded"},
        {"allowed_origins": ["https://app.example"]},
        {"allow": ["admin"]},
        {"limits": Limits(max_concurrent=4)},
        {"path": "/ws"},
    ],
    ids=lambda option: "+".join(option),
)
async def test_no_other_option_stands_in_for_authentication(
    option: dict[str, Any],
) -> None:
    """Only ``require_auth`` or ``auth`` opens a bind beyond loopback: a principal
    function alone still admits anonymous handshakes, and no other option checks
    anyone. (A documentation address, which no interface here holds: code that
    let it through fails to bind at once instead of serving beyond loopback.)"""
    server = Server("ws", "1", tools=[echo])
    with pytest.raises(InsecureBinding, match="refusing to serve WebSocket on"):
        await server.serve_websocket("192.0.2.1", 0, **option)


@pytest.mark.parametrize(
    ("allowed_hosts", "host", "status"),
    [
        (None, "localhost:{port}", 101),
        (None, "[::1]:{port}", 101),
        (None, "evil.example", 421),
        (None, "evil.example:{port}", 421),
        (["mcp.example"], "mcp.example", 101),
        (["mcp.example"], "mcp.example:8443", 101),
        (["mcp.example:8443"], "mcp.example:9000", 421),
        (["mcp.example"], "rebound.example", 421),
        (["*"], "anything.example", 101),
    ],
)
async def test_the_host_is_checked_before_the_handshake_completes(
    allowed_hosts: list[str] | None, host: str, status: int
) -> None:
    """As ``serve_http`` checks it: a page whose DNS name was rebound to loopback
    cannot open a connection (421), a name in ``allowed_hosts`` can."""
    server = Server("ws", "1", tools=[echo])
    async with serving_websocket(server, allowed_hosts=allowed_hosts) as port:
        answered, _ = await handshake_answer(port, host=host.format(port=port))

    assert status == answered


async def test_require_auth_refuses_a_handshake_without_a_principal() -> None:
    server = Server("ws", "1", tools=[who])
    async with serving_websocket(server, require_auth=True, principal=ws_user) as port:
        refused, _ = await handshake_answer(port)
        async with connected(port, headers={"x-user": "alice"}) as peer:
            await peer.call(1, "who")
            reply = await peer.reply(1)
    assert 401 == refused
    assert "alice" == reply["result"]["structuredContent"]


async def test_a_call_over_the_rate_limit_gets_32000_with_its_retry_data() -> None:
    receipts: list[Receipt] = []
    server = Server("ws", "1", tools=[echo], receipts=receipts.append)
    limit = RateLimit(2, 60)
    async with serving_websocket(server, rate_limit=limit, principal=ws_user) as port:
        async with connected(port, headers={"x-user": "alice"}) as alice:
            for n in range(3):
                await alice.call(n, "echo", text="hi")
                await alice.reply(n)
        # A new connection of the same principal shares its bucket; another's not.
        async with connected(port, headers={"x-user": "alice"}) as again:
            await again.call(9, "echo", text="hi")
            again_reply = await again.reply(9)
        async with connected(port, headers={"x-user": "bob"}) as bob:
            await bob.call(1, "echo", text="hi")
            bob_reply = await bob.reply(1)

    over = alice.find(2)
    assert over is not None
    error = over["error"]
    assert -32000 == error["code"]
    assert error["message"].startswith("rate limited: ")
    assert error["data"]["retryable"] is True
    assert 1 <= error["data"]["retryAfterSeconds"] <= 30
    assert -32000 == again_reply["error"]["code"]
    assert "hi" == bob_reply["result"]["structuredContent"]
    limited = [r for r in receipts if r.outcome == "refused"]
    assert ["trio_mcp.RateLimit"] * 2 == [r.error_type for r in limited]


async def test_anonymous_callers_share_their_addresss_bucket() -> None:
    server = Server("ws", "1", tools=[echo])
    async with serving_websocket(server, rate_limit=RateLimit(1, 60)) as port:
        async with connected(port) as first:
            await first.call(1, "echo", text="a")
            ok = await first.reply(1)
        async with connected(port) as second:
            await second.call(1, "echo", text="b")
            limited = await second.reply(1)
    assert "a" == ok["result"]["structuredContent"]
    assert -32000 == limited["error"]["code"]


async def test_a_trusted_proxys_header_names_the_client() -> None:
    server = Server("ws", "1", tools=[echo])
    async with serving_websocket(
        server, rate_limit=RateLimit(1, 60), trusted_proxies=["127.0.0.1"]
    ) as port:
        replies = []
        for client in ("192.0.2.1", "192.0.2.2", "192.0.2.1"):
            async with connected(port, headers={"x-forwarded-for": client}) as peer:
                await peer.call(1, "echo", text="x")
                replies.append(await peer.reply(1))
    assert ["result", "result", "error"] == [
        "error" if "error" in r else "result" for r in replies
    ]
