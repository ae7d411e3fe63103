"""Two replicas on different ports sharing one real redis-server (issue 13).

No sticky sessions: a multi round-trip request may change replica between rounds,
a listener on one replica hears updates published on the other, and a Redis outage
ends listens (clients listen again) without failing any tool call.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
from support.scale_http import call, listening
from support.scale_procs import RedisServer, Replicas
from support.sse import SseStream

ALICE = {"action": "accept", "content": {"name": "Alice"}}


@pytest.fixture
def pair(redis_server: RedisServer, replicas: Replicas) -> tuple[str, str]:
    """Replica A's and replica B's URLs; their broadcast is ``redis_server``."""
    return replicas.pair({"SCALE_REDIS_URL": redis_server.url})


async def test_a_second_round_on_another_replica_completes(
    pair: tuple[str, str],
) -> None:
    """The first round is answered by A, the retry with requestState by B: the
    shared state key lets B verify what A sealed."""
    a, b = pair

    first = await call(a, "greet")
    second = await call(
        b,
        "greet",
        inputResponses={"user_name": ALICE},
        requestState=first["requestState"],
    )

    assert "input_required" == first["resultType"]
    assert "complete" == second["resultType"]
    text = second["structuredContent"]
    assert text.startswith("Alice: asked by replica-a:")
    assert ", answered by replica-b:" in text


async def test_a_listener_on_a_gets_an_update_published_on_b(
    pair: tuple[str, str],
) -> None:
    a, b = pair

    async with listening(a, resourceSubscriptions=["ticket://7"]) as listen:
        published_by = (await call(b, "touch", {"uri": "ticket://7"}))[
            "structuredContent"
        ]
        update = await listen.next_or_end()

    assert published_by.startswith("replica-b:")
    assert update is not None
    assert "notifications/resources/updated" == update["method"]
    assert "ticket://7" == update["params"]["uri"]


async def test_updates_reach_only_listeners_of_that_uri_across_replicas(
    pair: tuple[str, str],
) -> None:
    a, b = pair

    async with (
        listening(a, resourceSubscriptions=["ticket://1"]) as one,
        listening(a, resourceSubscriptions=["ticket://2"]) as two,
    ):
        await call(b, "touch", {"uri": "ticket://2"})
        await call(b, "touch", {"uri": "ticket://1"})
        first = await one.next_or_end()
        second = await two.next_or_end()

    assert first is not None
    assert second is not None
    assert "ticket://1" == first["params"]["uri"]
    assert "ticket://2" == second["params"]["uri"]


async def test_a_redis_outage_ends_listens_keeps_calls_and_delivery_resumes(
    pair: tuple[str, str], redis_server: RedisServer
) -> None:
    """Stopping Redis mid-stream closes the listen with its result while tool calls
    (publishing included) keep working; after a restart, delivery resumes."""
    a, b = pair

    async with listening(a, resourceSubscriptions=["ticket://9"]) as listen:
        # Proves the path works before the outage.
        await call(b, "touch", {"uri": "ticket://9"})
        before = await listen.next_or_end()
        redis_server.stop()
        # A reconnection while redis-server shuts down resyncs the stream (an update
        # for its URI: "read it again"); then the outage ends it with its result.
        resyncs, ended = await _until_ended(listen)
        rest = await listen.next_or_end()
        during = await call(b, "touch", {"uri": "ticket://9"})
        whoami = await call(a, "whoami")

    redis_server.start()
    async with listening(a, resourceSubscriptions=["ticket://9"]) as again:
        await call(b, "touch", {"uri": "ticket://9"})
        after = await again.next_or_end()
        # A second publication after A got the first: live delivery, not a resync.
        await call(b, "touch", {"uri": "ticket://9"})
        live = await again.next_or_end()

    assert before is not None
    assert "ticket://9" == before["params"]["uri"]
    assert ended is not None
    assert "result" in ended
    assert "listen" == ended["id"]
    assert all("ticket://9" == resync["params"]["uri"] for resync in resyncs)
    assert rest is None
    assert during["isError"] is False
    assert whoami["structuredContent"].startswith("replica-a:")
    assert after is not None
    assert "ticket://9" == after["params"]["uri"]
    assert live is not None
    assert "ticket://9" == live["params"]["uri"]


async def _until_ended(
    listen: SseStream, most: int = 5
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The notifications a listen stream sends before its result, and the result."""
    seen: list[dict[str, Any]] = []
    while len(seen) < most:
        message = await listen.next_or_end()
        if message is None or "method" not in message:
            return seen, message
        seen.append(message)
    return seen, None


async def test_a_replica_without_redis_answers_calls_at_once(
    redis_server: RedisServer, replicas: Replicas
) -> None:
    """Redis down from the start: calls and publications never wait for it."""
    redis_server.stop()
    a = replicas.start("replica-a", env={"SCALE_REDIS_URL": redis_server.url})

    with trio.fail_after(5):
        touched = await call(a.url, "touch", {"uri": "ticket://1"})

    assert touched["isError"] is False
