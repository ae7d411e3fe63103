"""RedisBroadcast in one Trio run against a real redis-server (issue 13).

Two broadcasts stand for two processes; a raw coredis subscriber shows what
reaches the channel. Nothing of ours is replaced by a stand-in.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import coredis
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from support import wire
from support.scale_procs import RedisServer

from trio_mcp import RedisBroadcast, Server, tool
from trio_mcp._changes import Change
from trio_mcp.testing import McpTestClient

WAIT = 10.0
U1 = Change.updated("ticket://1")
U2 = Change.updated("ticket://2")
U3 = Change.updated("ticket://3")
TOOLS = Change.list_changed("tools")


async def until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` (bounded): the broadcasts expose no events to wait on."""
    with trio.fail_after(WAIT):
        while not condition():  # noqa: ASYNC110 - no event exists
            await trio.sleep(0.01)


def fast(url: str, **kwargs: Any) -> RedisBroadcast:
    options: dict[str, Any] = {
        "outage_grace": 5.0,
        "reconnect_delay": 0.02,
        "max_reconnect_delay": 0.1,
        **kwargs,
    }
    return RedisBroadcast(url, **options)


@asynccontextmanager
async def running(*broadcasts: RedisBroadcast) -> AsyncIterator[None]:
    async with trio.open_nursery() as nursery:
        for broadcast in broadcasts:
            started = trio.Event()

            async def run(
                b: RedisBroadcast = broadcast, e: trio.Event = started
            ) -> None:
                async with b.running():
                    e.set()
                    await trio.sleep_forever()

            nursery.start_soon(run)
            await started.wait()
        for broadcast in broadcasts:
            await until(lambda: broadcast.connected)  # noqa: B023 - awaited at once
        yield
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def channel_reader(url: str) -> AsyncIterator[trio.MemoryReceiveChannel[Any]]:
    """Every message published on the default channel, decoded, as the test sees it."""
    send, receive = trio.open_memory_channel[Any](100)
    client: coredis.Redis[bytes] = coredis.Redis.from_url(url)
    async with (
        client,
        client.pubsub(
            channels=["trio-mcp:changes"], ignore_subscribe_messages=True
        ) as ps,
        trio.open_nursery() as nursery,
    ):

        async def pump() -> None:
            async for message in ps:
                data = message["data"]
                assert isinstance(data, str | bytes), data
                await send.send(json.loads(data))

        nursery.start_soon(pump)
        yield receive
        nursery.cancel_scope.cancel()


async def receive(subscription: Any) -> Change:
    with trio.fail_after(WAIT):
        change: Change = await subscription.receive()
    return change


async def test_a_change_published_on_one_reaches_the_other_once(
    redis_server: RedisServer,
) -> None:
    x, y = fast(redis_server.url), fast(redis_server.url)
    async with running(x, y):
        with x.subscribe([U1]) as on_x, y.subscribe([U1]) as on_y:
            reached = x.publish(U1)
            got_y = await receive(on_y)
            got_x = await receive(on_x)
            # Anything else (an echo of x's own message) would be queued by now.
            x.publish(U2)
            await until(lambda: not x._unsent)
            await trio.sleep(0.1)
            left = on_x.statistics()

    assert 1 == reached
    assert U1 == got_y
    assert U1 == got_x
    assert 0 == left.buffered + left.pending


async def test_list_changes_cross_processes_too(redis_server: RedisServer) -> None:
    x, y = fast(redis_server.url), fast(redis_server.url)
    async with running(x, y):
        with y.subscribe([TOOLS]) as on_y:
            x.publish(TOOLS)
            got = await receive(on_y)

    assert TOOLS == got


async def test_a_reconnect_resends_what_each_subscriber_wants_and_nothing_else(
    redis_server: RedisServer,
) -> None:
    """Messages may have been missed while disconnected: each subscription is told
    to read again exactly what it subscribed to; it stays open within the grace."""
    x = fast(redis_server.url)
    async with running(x):
        with x.subscribe([U1, TOOLS]) as mine, x.subscribe([U2]) as other:
            connections = x.connections
            redis_server.stop()
            await until(lambda: not x.connected)
            redis_server.start()
            await until(lambda: x.connections > connections)
            got = {await receive(mine), await receive(mine)}
            got_other = await receive(other)
            left = mine.statistics()

    assert {U1, TOOLS} == got
    assert U2 == got_other
    assert 0 == left.buffered + left.pending


async def test_an_outage_past_the_grace_ends_open_subscriptions(
    redis_server: RedisServer,
) -> None:
    x = fast(redis_server.url, outage_grace=0.2)
    async with running(x):
        with x.subscribe([U1]) as subscription:
            redis_server.stop()
            with trio.fail_after(WAIT):
                remaining = [change async for change in subscription]
            x.publish(U1)  # a tool's notify_updated: never fails, never waits

    assert [] == remaining
    assert [U1] == list(x._unsent)


async def test_changes_published_during_an_outage_are_sent_after_it(
    redis_server: RedisServer,
) -> None:
    # A one-second backoff lets the test's reader subscribe before x is back.
    x = fast(redis_server.url, reconnect_delay=1.0, max_reconnect_delay=1.0)
    async with running(x):
        redis_server.stop()
        await until(lambda: not x.connected)
        x.publish(U1)
        x.publish(U2)
        x.publish(U1)
        redis_server.start()
        async with channel_reader(redis_server.url) as seen:
            await until(lambda: x.connected)
            with trio.fail_after(WAIT):
                first, second = await seen.receive(), await seen.receive()

    assert ("notifications/resources/updated", "ticket://1") == (first["m"], first["u"])
    assert "ticket://2" == second["u"]
    assert x.origin == first["o"] == second["o"]


async def test_too_many_unsent_changes_become_one_resync(
    redis_server: RedisServer,
) -> None:
    """Past max_unsent the queue is dropped for one resync message, which makes the
    other processes re-offer every subscription all it wants. ``x`` is not running
    until then, which is the same as disconnected."""
    x = fast(redis_server.url, max_unsent=2)
    y = fast(redis_server.url)
    async with running(y):
        with y.subscribe([U3]) as on_y:
            for change in (U1, U2, U3):
                x.publish(change)
            queued = dict(x._unsent)
            resyncs = y.resyncs
            async with channel_reader(redis_server.url) as seen, running(x):
                with trio.fail_after(WAIT):
                    message = await seen.receive()
                await until(lambda: y.resyncs > resyncs)
            got = await receive(on_y)

    assert {} == queued
    assert {"o": x.origin, "resync": True} == message
    assert U3 == got


async def test_without_running_it_still_delivers_locally() -> None:
    """A RedisBroadcast that is not running behaves as disconnected, never fails."""
    x = RedisBroadcast("redis://127.0.0.1:1/0")
    with x.subscribe([U1]) as subscription:
        reached = x.publish(U1)
        got = await receive(subscription)

    assert 1 == reached
    assert U1 == got


def test_a_url_that_is_not_redis_is_refused() -> None:
    with pytest.raises(ValueError, match="redis://"):
        RedisBroadcast("http://127.0.0.1:6379")


_KEYS = st.sampled_from(["o", "m", "u", "resync", "x"])
_LEAF = st.none() | st.booleans() | st.integers() | st.text()
_LEVEL = _LEAF | st.lists(_LEAF, max_size=3) | st.dictionaries(_KEYS, _LEAF, max_size=4)
# Two fixed levels rather than st.recursive: its check that ``extend`` uses its
# argument misfires when an equal strategy was cached by another test.
JSON = (
    _LEVEL | st.lists(_LEVEL, max_size=3) | st.dictionaries(_KEYS, _LEVEL, max_size=4)
)
METHODS = st.sampled_from(
    [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/other",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=40),
        JSON.map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {"o": st.sampled_from(["peer", "self"]), "m": METHODS},
            optional={"u": st.none() | st.sampled_from(["ticket://1", "ticket://2"])},
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_whatever_arrives_on_the_channel_only_wanted_changes_come_out(
    data: bytes,
) -> None:
    """A foreign or garbled message never raises and never reaches a subscriber as
    anything but a change it asked for; our own echo is skipped."""
    x = RedisBroadcast("redis://127.0.0.1:1/0")
    data = data.replace(b'"self"', json.dumps(x.origin).encode())
    with x.subscribe([U1, TOOLS]) as subscription:
        x._receive(data)
        stats = subscription.statistics()
        got = [subscription._receive.receive_nowait() for _ in range(stats.buffered)]

    assert set(got) <= {U1, TOOLS}
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("o") == x.origin:
        assert [] == got


async def test_task_changes_stay_in_their_process(redis_server: RedisServer) -> None:
    """Tasks extension: a task lives in one process, so its status changes reach
    this process's listen streams and never the channel (the first message there
    is the list change published after the task ended)."""
    gate = trio.Event()

    @tool(task="optional")
    async def gated() -> str:
        """Finish once the test opens the gate."""
        await gate.wait()
        return "done"

    x = fast(redis_server.url)
    server = Server("s", "1", tools=[gated], broadcast=x)
    caps: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    async with (
        running(x),
        channel_reader(redis_server.url) as channel,
        McpTestClient(server, caps) as client,
    ):
        task_id = (await client.request("tools/call", {"name": "gated"}))["taskId"]
        async with client.listen(notifications={"taskIds": [task_id]}) as sub:
            gate.set()
            with trio.fail_after(WAIT):
                note = await sub.next()
                while wire(note)["params"]["status"] != "completed":
                    note = await sub.next()
        x.publish(TOOLS)
        with trio.fail_after(WAIT):
            first = await channel.receive()

    assert "notifications/tasks" == note["method"]
    assert "notifications/tools/list_changed" == first["m"]
