"""Handshake-era sessions over Streamable HTTP (revision 2025-11-25, "Session Management").

A real ``serve_http`` on 127.0.0.1 and a hand-written client (``LegacyHttpPeer``):
``initialize`` returns ``Mcp-Session-Id``; later requests carry it; unknown,
ended, evicted and foreign sessions are 404; ``DELETE`` ends a session; a second
``initialize``, a bad ``MCP-Protocol-Version`` and an answer to no waiting request
get the spec's status; a modern request beside them is served as before. Every
server message is validated against the negotiated revision's schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
import trio
from legacy_server import make_server
from support import META, serving
from support.legacy import LegacyError, initialize_request
from support.legacy_http import LegacyHttpPeer, session_headers
from support.legacy_schema import REVISIONS, check_legacy
from support.mcp_http import rpc

from trio_mcp import Limits


async def test_initialize_opens_a_session_that_later_requests_carry() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        init = await peer.initialize()
        tools = await peer.request("tools/list")
        added = await peer.request(
            "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}
        )
        read = await peer.request("resources/read", {"uri": "note://alpha"})
        pong = await peer.request("ping")

    assert "2025-11-25" == init["protocolVersion"]
    assert {"name": "legacy-test", "version": "1.0.0"} == init["serverInfo"]
    assert "A server for the legacy edge's tests." == init["instructions"]
    assert peer.sid is not None
    # Visible ASCII (0x21-0x7E), at least 128 random bits (base64url: 6 bits a character).
    assert re.fullmatch(r"[\x21-\x7e]+", peer.sid)
    assert 6 * len(peer.sid) >= 128
    assert "add" in {t["name"] for t in tools["tools"]}
    assert {"result": 5} == added["structuredContent"]
    assert "first note" == read["contents"][0]["text"]
    assert {} == pong


async def test_each_initialize_opens_its_own_session_at_its_revision() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        old = LegacyHttpPeer(client, base + "/mcp", revision="2025-06-18")
        new = LegacyHttpPeer(client, base + "/mcp")
        future = LegacyHttpPeer(client, base + "/mcp", revision="2099-01-01")
        assert "2025-06-18" == (await old.initialize())["protocolVersion"]
        await new.initialize()
        # An unknown revision gets the newest handshake-era one (negotiation).
        assert "2025-11-25" == (await future.initialize())["protocolVersion"]
        listed = await old.request("tools/list")
        called = await old.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}
        )

    assert len({old.sid, new.sid, future.sid}) == 3
    assert listed["tools"]
    assert {"result": 2} == called["structuredContent"]


async def test_unknown_ended_and_missing_sessions() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        unknown = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=session_headers("no-such-session"),
        )
        no_session = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=session_headers(None),
        )
        deleted = await client.delete(url, headers=session_headers(peer.sid))
        after = await peer.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
        deleted_again = await client.delete(url, headers=session_headers(peer.sid))
        get_after = await client.get(url, headers=session_headers(peer.sid))

    assert 404 == unknown.status_code
    assert "initialize" in unknown.json()["error"]["message"]
    for revision in REVISIONS:  # 2025-06-18 and 2025-03-26 require the id
        check_legacy(unknown.json(), revision)
    assert 1 == unknown.json()["id"]
    # Without a session a request must carry 2026-07-28 _meta: 400.
    assert 400 == no_session.status_code
    assert -32602 == no_session.json()["error"]["code"]
    assert 200 == deleted.status_code
    assert (
        404 == after.status_code == deleted_again.status_code == get_after.status_code
    )


async def test_a_session_is_bound_to_its_principal() -> None:
    def principal(scope: dict[str, Any]) -> str | None:
        for name, value in scope["headers"]:
            if name == b"x-user":
                return str(value.decode())
        return None

    server = make_server()
    async with (
        serving(server, require_auth=True, principal=principal) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        alice = LegacyHttpPeer(client, url, headers={"x-user": "alice"})
        await alice.initialize()
        assert alice.sid is not None
        mallory = LegacyHttpPeer(client, url, headers={"x-user": "mallory"})
        mallory.sid, mallory.revision = alice.sid, alice.revision
        stolen = await mallory.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        stolen_delete = await client.delete(
            url, headers={**session_headers(alice.sid), "x-user": "mallory"}
        )
        anonymous = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=session_headers(alice.sid),
        )
        still = await alice.request("tools/list")

    assert 404 == stolen.status_code == stolen_delete.status_code
    assert 401 == anonymous.status_code
    assert still["tools"]


async def test_the_wrong_turns_of_a_session_get_the_spec_s_status() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        again = await peer.post(initialize_request(7, name="again"))
        bad_version = await peer.post(
            {"jsonrpc": "2.0", "id": 8, "method": "ping"},
            **{"mcp-protocol-version": "1999-01-01"},
        )
        stray = await peer.post({"jsonrpc": "2.0", "id": "nobody.1", "result": {}})
        not_json = await client.post(
            base + "/mcp", content=b"{not json", headers=peer.headers()
        )
        batch = await peer.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
        unknown = await peer.exchange("tasks/list")
        with pytest.raises(LegacyError) as bad_level:
            await peer.request("logging/setLevel", {"level": "loud"})
        fine = await peer.request("ping")

    assert 400 == again.status_code
    assert -32600 == again.json()["error"]["code"]
    assert 400 == bad_version.status_code
    assert 400 == stray.status_code
    assert 400 == not_json.status_code
    assert -32700 == not_json.json()["error"]["code"]
    assert 400 == batch.status_code
    assert unknown is not None
    assert -32601 == unknown["error"]["code"]
    assert -32602 == bad_level.value.code
    assert {} == fine


async def test_beyond_max_sessions_the_least_recently_used_is_dropped() -> None:
    limits = Limits(max_sessions=2)
    async with (
        serving(make_server(), limits=limits) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        first, second, third = (LegacyHttpPeer(client, url) for _ in range(3))
        await first.initialize()
        await second.initialize()
        await first.request("ping")  # second is now the least recently used
        await third.initialize()
        dropped = await second.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        kept = await first.request("ping")
        newest = await third.request("ping")

    assert 404 == dropped.status_code
    assert {} == kept == newest


async def test_a_modern_request_beside_sessions_is_served_statelessly() -> None:
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        discovered = await rpc(client, base, "server/discover")
        called = await rpc(
            client,
            base,
            "tools/call",
            {"name": "add", "arguments": {"a": 1, "b": 2}},
            name="add",
        )
        probe = await client.post(
            base + "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "initialize",
                "params": {"_meta": META},
            },
            headers=session_headers(None, "2026-07-28"),
        )
        get_without_session = await client.get(base + "/mcp")

    assert ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"] == discovered[
        "result"
    ]["supportedVersions"]
    assert 3 == called["result"]["structuredContent"]
    # initialize carrying 2026-07-28 _meta is a modern request: the removed method.
    assert 404 == probe.status_code
    assert -32601 == probe.json()["error"]["code"]
    assert 405 == get_without_session.status_code


async def test_without_legacy_nothing_changes() -> None:
    async with (
        serving(make_server(legacy=False)) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        init = await client.post(
            url,
            json=initialize_request(),
            headers=session_headers(None),
        )
        with_session = await client.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=session_headers("made-up"),
        )
        get = await client.get(url, headers=session_headers("made-up"))
        discovered = await rpc(client, base, "server/discover")

    assert 404 == init.status_code
    assert -32601 == init.json()["error"]["code"]
    assert "mcp-session-id" not in init.headers
    assert 400 == with_session.status_code  # no _meta: the modern answer
    assert 405 == get.status_code
    assert ["2026-07-28"] == discovered["result"]["supportedVersions"]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_a_get_or_delete_at_a_revision_the_session_cannot_speak_is_400(
    method: str,
) -> None:
    """``MCP-Protocol-Version`` is checked on every request of a session, not only
    on POST: the stream is not opened, the session not ended."""
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        headers = {**peer.headers(), "mcp-protocol-version": "1999-01-01"}
        with trio.fail_after(10):
            async with client.stream(method, url, headers=headers) as refused:
                assert 400 == refused.status_code  # before a stream's endless body
                body = json.loads(await refused.aread())
        still = await peer.request("ping")

    assert "1999-01-01" in body["error"]["message"]
    assert {} == still


def x_user(scope: dict[str, Any]) -> str | None:
    return dict(scope["headers"]).get(b"x-user", b"").decode() or None


async def test_a_caller_past_its_share_loses_its_own_session_never_another_s() -> None:
    """The audit's finding: one caller could end every other caller's session. Now
    a caller holds ``max_sessions_per_caller``, and a full store refuses a newcomer
    (503) rather than end a session of someone else."""
    limits = Limits(max_sessions=3, max_sessions_per_caller=2)
    async with (
        serving(make_server(), limits=limits, principal=x_user) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"

        def peer(name: str) -> LegacyHttpPeer:
            return LegacyHttpPeer(client, url, headers={"x-user": name})

        bob, alice = peer("bob"), [peer("alice") for _ in range(3)]
        await bob.initialize()
        for session in alice:
            await session.initialize()
        refused = await client.post(
            url,
            json=initialize_request(9),
            headers={**session_headers(None), "x-user": "carol"},
        )
        statuses = [
            (await p.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status_code
            for p in (bob, *alice)
        ]

    assert [200, 404, 200, 200] == statuses  # alice's first went, bob's stayed
    assert 503 == refused.status_code
    assert "retry-after" in refused.headers
    assert "mcp-session-id" not in refused.headers
    assert -32000 == refused.json()["error"]["code"]
    assert 9 == refused.json()["id"]


async def test_anonymous_callers_have_a_share_per_client_address() -> None:
    limits = Limits(max_sessions_per_caller=1)
    async with (
        serving(make_server(), limits=limits, trusted_proxies=["127.0.0.1"]) as base,
        httpx.AsyncClient() as client,
    ):
        url = base + "/mcp"
        here, there, there_again = (
            LegacyHttpPeer(client, url, headers={"x-forwarded-for": address})
            for address in ("192.0.2.1", "198.51.100.7", "198.51.100.7")
        )
        for peer in (here, there, there_again):
            await peer.initialize()
        statuses = [
            (await p.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status_code
            for p in (here, there, there_again)
        ]

    assert [200, 404, 200] == statuses


@pytest.mark.parametrize(("size", "kept"), [(15 * 1024, True), (17 * 1024, False)])
async def test_what_a_session_keeps_of_its_client_is_bounded(
    size: int, kept: bool
) -> None:
    """The audit's finding: 40 ``initialize`` with 1 MB of ``clientInfo`` each took
    43 MB. At most 16 KiB of ``capabilities`` and ``clientInfo`` is kept."""
    request = initialize_request(3)
    request["params"]["clientInfo"]["description"] = "x" * size
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        answer = await client.post(
            base + "/mcp", json=request, headers=session_headers(None)
        )

    assert kept == ("mcp-session-id" in answer.headers)
    if not kept:
        assert -32602 == answer.json()["error"]["code"]
        assert "16384" in answer.json()["error"]["message"]


async def test_one_get_stream_per_session_and_another_once_it_closed() -> None:
    """A second ``GET`` beside an open one is 409; the first's close frees the slot
    (its token is released), so the session is not left without a stream for good."""
    async with serving(make_server()) as base, httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        headers = {**peer.headers(), "accept": "text/event-stream"}
        async with client.stream("GET", base + "/mcp", headers=headers) as first:
            assert 200 == first.status_code
            second = await client.get(base + "/mcp", headers=headers)
        statuses = [second.status_code]
        with trio.move_on_after(5):  # the server notices the close, then releases
            while statuses[-1] != 200:
                await trio.sleep(0.05)
                async with client.stream(
                    "GET", base + "/mcp", headers=headers
                ) as again:
                    statuses.append(again.status_code)

    assert 409 == statuses[0]
    assert "only one is allowed per session" in second.json()["error"]["message"]
    assert 200 == statuses[-1], statuses


async def test_an_open_get_stream_keeps_its_session_past_session_idle() -> None:
    """A client that only listens is using its session: it does not idle out."""
    limits = Limits(session_idle=0.6)
    async with (
        serving(make_server(), limits=limits) as base,
        httpx.AsyncClient() as client,
    ):
        peer = LegacyHttpPeer(client, base + "/mcp")
        await peer.initialize()
        headers = {**peer.headers(), "accept": "text/event-stream"}
        async with client.stream("GET", base + "/mcp", headers=headers) as stream:
            assert 200 == stream.status_code
            await trio.sleep(1.5)  # two and a half times session_idle
            alive = await peer.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})

    assert 200 == alive.status_code
