"""A handshake-era HTTP call is held to what a 2026-07-28 call is held to.

The session's requests pass the app's ``Origin`` and ``Host`` checks and its
authentication, and its calls go through the app's edge: the capability ceiling
(``allow=``), the rate limit (429 with ``Retry-After``), and a receipt naming the
principal and the client's own request id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from legacy_server import add, echo
from support import serving
from support.legacy import initialize_request
from support.legacy_http import LegacyHttpPeer, session_headers
from support.receipts import Sink

from trio_mcp import Capability, RateLimit, Server, tool

desk_write = Capability("desk_write", description="Change the desk")


@tool(caps=[desk_write])
def close_ticket(ticket: str) -> str:
    """Close a ticket.

    Args:
        ticket: Its id.
    """
    return f"closed {ticket}"


def desk(sink: Sink) -> Server:
    return Server(
        "desk", "1.0", tools=[echo, add, close_ticket], receipts=sink, legacy=True
    )


def principal(scope: dict[str, Any]) -> str | None:
    for name, value in scope["headers"]:
        if name == b"x-user":
            return str(value.decode())
    return None


async def test_a_legacy_call_is_granted_refused_and_receipted_as_any(
    sink: Sink,
) -> None:
    async with (
        serving(
            desk(sink),
            require_auth=True,
            principal=principal,
            allow=lambda who: [desk_write] if who == "alice" else [],
        ) as base,
        httpx.AsyncClient() as client,
    ):
        alice = LegacyHttpPeer(client, base + "/mcp", headers={"x-user": "alice"})
        bob = LegacyHttpPeer(client, base + "/mcp", headers={"x-user": "bob"})
        await alice.initialize()
        await bob.initialize()
        closed = await alice.request(
            "tools/call",
            {"name": "close_ticket", "arguments": {"ticket": "T-1"}},
            request_id="alice-1",
        )
        refused = await bob.request(
            "tools/call",
            {"name": "close_ticket", "arguments": {"ticket": "T-1"}},
            request_id="bob-1",
        )
        listed = await bob.request("tools/list")

    assert "closed T-1" == closed["content"][0]["text"]
    assert refused["isError"] is True
    assert "close_ticket" in {t["name"] for t in listed["tools"]}
    by_id = {r.request_id: r for r in sink.receipts}
    assert "ok" == by_id["alice-1"].outcome
    assert "alice" == by_id["alice-1"].principal_id
    assert "refused" == by_id["bob-1"].outcome
    assert "bob" == by_id["bob-1"].principal_id


async def test_a_legacy_call_takes_a_token_of_the_callers_rate_limit(
    sink: Sink,
) -> None:
    async with (
        serving(desk(sink), rate_limit=RateLimit(2, 60)) as base,
        httpx.AsyncClient() as client,
    ):
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()  # a token, as a call takes one
        first = await peer.request(
            "tools/call", {"name": "echo", "arguments": {"text": "a"}}
        )
        second = await peer.post(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "b"}},
            }
        )
        pong = await peer.request("ping")  # not a call: never limited

    assert "a" == first["content"][0]["text"]
    assert 429 == second.status_code
    assert int(second.headers["retry-after"]) >= 1
    assert -32000 == second.json()["error"]["code"]
    assert 2 == second.json()["id"]
    assert {} == pong


@asynccontextmanager
async def alices_session(
    sink: Sink,
) -> AsyncIterator[tuple[httpx.AsyncClient, str, LegacyHttpPeer]]:
    """A server that requires a principal (``x-user``), and alice's open session."""
    async with (
        serving(desk(sink), require_auth=True, principal=principal) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url, headers={"x-user": "alice"})
        await peer.initialize()
        assert peer.sid is not None
        yield client, url, peer


async def test_origin_host_and_authentication_guard_every_session_request(
    sink: Sink,
) -> None:
    async with alices_session(sink) as (client, url, peer):
        assert peer.sid is not None
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        evil_origin = await peer.post(ping, origin="https://evil.example")
        evil_host = await peer.post(ping, host="evil.example")
        get_evil = await client.get(
            url, headers={**peer.headers(), "origin": "https://evil.example"}
        )
        anonymous = await client.post(url, json=ping, headers=session_headers(peer.sid))
        unauthenticated = await client.post(
            url,
            json=initialize_request(),
            headers=session_headers(None),
        )

    assert 403 == evil_origin.status_code == get_evil.status_code
    assert 421 == evil_host.status_code
    assert 401 == anonymous.status_code == unauthenticated.status_code
    assert "mcp-session-id" not in unauthenticated.headers


async def test_initialize_takes_a_token_of_the_callers_rate_limit(sink: Sink) -> None:
    """The audit's flood: one client opened 234 sessions a second. Now each
    ``initialize`` is paced like a call: past the bucket, 429 and no session."""
    async with (
        serving(desk(sink), rate_limit=RateLimit(2, 3600)) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        for _ in range(2):
            await LegacyHttpPeer(client, url).initialize()
        refused = await client.post(
            url, json=initialize_request(7), headers=session_headers(None)
        )

    assert 429 == refused.status_code
    assert int(refused.headers["retry-after"]) >= 1
    assert "mcp-session-id" not in refused.headers
    assert -32000 == refused.json()["error"]["code"]
    assert 7 == refused.json()["id"]
    assert refused.json()["error"]["data"]["retryable"] is True


GUARDS: dict[str, dict[str, str]] = {
    "a foreign Origin": {"x-user": "alice", "origin": "https://evil.example"},
    "a foreign Host": {"x-user": "alice", "host": "evil.example"},
    "no principal": {},
}
REFUSED_WITH = {"a foreign Origin": 403, "a foreign Host": 421, "no principal": 401}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("guard", sorted(GUARDS))
async def test_get_and_delete_pass_the_gate_a_post_passes(
    sink: Sink, method: str, guard: str
) -> None:
    async with alices_session(sink) as (client, url, peer):
        headers = {**session_headers(peer.sid), **GUARDS[guard]}
        with trio.fail_after(10):
            async with client.stream(method, url, headers=headers) as refused:
                status = refused.status_code  # before a stream's endless body
        still = await peer.request("ping")  # the session was not ended

    assert REFUSED_WITH[guard] == status
    assert {} == still


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_take_a_token_of_the_rate_limit(
    sink: Sink, method: str
) -> None:
    async with (
        serving(desk(sink), rate_limit=RateLimit(2, 3600)) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        await peer.request("tools/call", {"name": "echo", "arguments": {"text": "a"}})
        with trio.fail_after(10):
            async with client.stream(method, url, headers=peer.headers()) as refused:
                status, wait = refused.status_code, refused.headers.get("retry-after")
        still = await peer.request("ping")

    assert 429 == status
    assert wait is not None
    assert int(wait) >= 1
    assert {} == still
