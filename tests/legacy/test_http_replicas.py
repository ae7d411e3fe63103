"""A handshake-era session served by two replicas through a real redis-server.

Two ``trio-mcp serve --legacy`` processes share ``Server(store=RedisStore(url))``
(tests/support/scale_server.py): a session opened on one is served by the other; a
client's answer to a request asked on replica A, posted to replica B, completes the
call on A; ``notifications/cancelled`` sent to B cancels the call running on A; a
``resources/subscribe`` on B is in effect on A's ``GET`` stream before it is
answered; ``DELETE`` on B ends A's stream. No sticky routing anywhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import httpx
import pytest
import trio
from legacy_server import echo
from support import serving
from support.legacy import LegacyError
from support.legacy_http import LegacyHttpPeer, session_stream
from support.mcp_http import rpc
from support.scale_procs import HERE, STATE_KEY, RedisServer, Replicas

from trio_mcp import RedisStore, Server

CAPS: dict[str, Any] = {"elicitation": {}}


def two(redis_server: RedisServer, replicas: Replicas) -> tuple[str, str]:
    env = {"SCALE_STORE_URL": redis_server.url}
    a = replicas.start("replica-a", "--legacy", env=env)
    b = replicas.start("replica-b", "--legacy", env=env)
    return a.url, b.url


async def name(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_a_session_opened_on_a_is_served_on_b(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    a, b = two(redis_server, replicas)
    async with httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, a, capabilities=CAPS, answer=name)
        await peer.initialize()
        peer.url = b
        where = await peer.request("tools/call", {"name": "whoami", "arguments": {}})
        # The answer to a request asked on A's stream goes to B, and reaches A.
        peer.url, peer.answer_url = a, b
        greeted = await peer.request("tools/call", {"name": "greet", "arguments": {}})
        peer.url = b
        closed = await client.delete(b, headers=peer.headers())
        peer.url = a
        gone = await peer.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})

    assert where["content"][0]["text"].startswith("replica-b:")
    text = greeted["content"][0]["text"]
    assert text.startswith("Ada: asked by replica-a:"), text
    assert ", answered by replica-a:" in text
    assert [202] == peer.answered
    assert 200 == closed.status_code
    assert 404 == gone.status_code


async def test_notifications_cancelled_on_b_cancels_the_call_on_a(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    a, b = two(redis_server, replicas)
    async with httpx.AsyncClient(timeout=30) as client:
        peer = LegacyHttpPeer(client, a)
        await peer.initialize()
        replies: list[dict[str, Any] | None] = []
        ended = trio.Event()

        async def call() -> None:
            replies.append(
                await peer.exchange(
                    "tools/call",
                    {"name": "wait_cancel", "arguments": {}},
                    request_id="long",
                )
            )
            ended.set()

        canceller = LegacyHttpPeer(client, b)
        canceller.sid, canceller.revision = peer.sid, peer.revision
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                while not ended.is_set():
                    # A cancellation before the call runs on A finds nothing: repeat.
                    status = await canceller.notify(
                        "notifications/cancelled", {"requestId": "long"}
                    )
                    assert 202 == status
                    with trio.move_on_after(0.2):
                        await ended.wait()
        after = await peer.request("tools/call", {"name": "whoami", "arguments": {}})

    assert [None] == replies
    assert after["content"][0]["text"].startswith("replica-a:")


async def test_a_subscription_made_on_b_reaches_the_stream_on_a(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    a, b = two(redis_server, replicas)
    async with httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, a)
        await peer.initialize()
        assert peer.sid is not None
        async with session_stream(a, peer.sid) as stream:
            assert 200 == stream.status
            async with session_stream(b, peer.sid) as second:
                assert 409 == second.status  # one GET stream per session
            peer.url = b
            assert {} == await peer.request(
                "resources/subscribe", {"uri": "ticket://7"}
            )
            touched = await peer.request(
                "tools/call", {"name": "touch", "arguments": {"uri": "ticket://7"}}
            )
            updated = await stream.next_message()
            closed = await client.delete(b, headers=peer.headers())
            end = await stream.next_or_end()

    assert touched["content"][0]["text"].startswith("replica-b:")
    assert {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "ticket://7"},
    } == updated
    assert 200 == closed.status_code
    assert end is None


async def test_the_log_level_set_on_one_replica_holds_on_the_other(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    a, b = two(redis_server, replicas)
    async with httpx.AsyncClient() as client:
        peer = LegacyHttpPeer(client, a)
        await peer.initialize()
        peer.url = b
        quiet = await peer.request("tools/call", {"name": "chatty", "arguments": {}})
        assert [] == peer.notifications
        peer.url = a
        assert {} == await peer.request("logging/setLevel", {"level": "debug"})
        peer.url = b
        loud = await peer.request("tools/call", {"name": "chatty", "arguments": {}})
        with pytest.raises(LegacyError) as bad:
            await peer.request("logging/setLevel", {"level": 3})

    assert quiet["content"][0]["text"].startswith("replica-b:")
    assert loud["content"][0]["text"].startswith("replica-b:")
    assert [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "debug", "data": "chatty"},
        }
    ] == [
        {**n, "params": {k: v for k, v in n["params"].items() if k != "logger"}}
        for n in peer.notifications
    ]
    assert -32602 == bad.value.code


async def test_two_workers_serve_one_session_through_redis(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    """``trio-mcp serve --workers 2 --legacy``: each request on a fresh connection
    lands on either worker, and the session, its answers and its calls hold."""
    served = replicas.start(
        "replica-w",
        "--workers",
        "2",
        "--legacy",
        env={"SCALE_STORE_URL": redis_server.url},
    )
    fresh = {"connection": "close"}
    async with httpx.AsyncClient(timeout=30) as client:
        peer = LegacyHttpPeer(
            client, served.url, capabilities=CAPS, answer=name, headers=fresh
        )
        with trio.fail_after(90):  # spawned workers import the server anew
            await peer.initialize()
            seen: set[str] = set()
            for _ in range(200):
                where = await peer.request(
                    "tools/call", {"name": "whoami", "arguments": {}}
                )
                seen.add(where["content"][0]["text"])
                if len(seen) == 2:
                    break
            greetings = [
                await peer.request("tools/call", {"name": "greet", "arguments": {}})
                for _ in range(6)
            ]

    assert 2 == len(seen)
    assert all(g["content"][0]["text"].startswith("Ada: asked by") for g in greetings)
    assert [202] * 6 == peer.answered


def test_workers_serving_handshake_era_clients_need_a_shared_store() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "trio_mcp",
            "serve",
            f"{HERE / 'scale_server.py'}:server",
            "--port",
            "0",
            "--workers",
            "2",
            "--legacy",
        ],
        env={**os.environ, "TRIO_MCP_STATE_KEY": STATE_KEY},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert 2 == completed.returncode
    assert "store=RedisStore(url)" in completed.stderr


async def test_a_redis_outage_is_503_for_sessions_and_nothing_for_modern_calls(
    redis_server: RedisServer,
) -> None:
    server_with_store = Server(
        "outage",
        "1.0",
        tools=[echo],
        store=RedisStore(redis_server.url, timeout=0.5),
        legacy=True,
    )
    async with (
        serving(server_with_store) as base,
        httpx.AsyncClient(timeout=10) as client,
    ):
        url = base + "/mcp"
        peer = LegacyHttpPeer(client, url)
        await peer.initialize()
        redis_server.stop()
        down = await peer.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        modern = await rpc(
            client,
            base,
            "tools/call",
            {"name": "echo", "arguments": {"text": "up"}},
            name="echo",
        )
        redis_server.start()
        gone = await peer.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        again = LegacyHttpPeer(client, url)
        with trio.fail_after(20):  # the store reconnects in its own time
            while True:
                try:
                    await again.initialize()
                    break
                except AssertionError:
                    await trio.sleep(0.2)
        pong = await again.request("ping")

    assert 503 == down.status_code
    assert "1" == down.headers["retry-after"]
    assert "up" == modern["result"]["structuredContent"]
    assert 404 == gone.status_code  # the restarted Redis holds no sessions
    assert {} == pong
