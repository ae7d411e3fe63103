"""The tables of handshake-era HTTP sessions: in memory, and in a real redis-server.

Both keep at most ``Limits.max_sessions`` (the least recently used goes), forget a
session unused for ``Limits.session_idle``, find a session only for its owner, hold
at most ``MAX_SUBSCRIPTIONS`` URIs per session and one ``GET`` stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st
from support.scale_procs import RedisServer

from trio_mcp import Limits, RedisStore
from trio_mcp._legacy._session import MAX_SUBSCRIPTIONS, Session
from trio_mcp._legacy._sessions import (
    MemorySessions,
    RedisSessions,
    Sessions,
    SessionsFull,
    TooManySubscriptions,
    new_session_id,
    owner_of,
)

SESSION = Session("2025-11-25", {"sampling": {}}, {"name": "c", "version": "1"})
LIMITS = Limits(max_sessions=3, session_idle=60)


@asynccontextmanager
async def redis_sessions(url: str) -> AsyncIterator[RedisSessions]:
    store = RedisStore(url)
    async with store.running():
        for _ in range(1000):  # until the heartbeat says this process is alive
            if await store.alive(store.origin):
                break
            await trio.sleep(0.01)
        yield RedisSessions(store)


async def check_the_table(table: Sessions, me: str = "me") -> None:
    """What both tables do, apart from time (``me``: this process's origin)."""
    alice, bob = owner_of("alice"), owner_of("bob")
    first = await table.open(SESSION, alice, alice, LIMITS)
    second = await table.open(SESSION, alice, alice, LIMITS)
    third = await table.open(SESSION, bob, bob, LIMITS)
    assert (await table.find(first, alice, LIMITS)) is not None  # first is fresh now
    fourth = await table.open(SESSION, alice, alice, LIMITS)  # second is dropped

    found = await table.find(first, alice, LIMITS)
    assert found is not None
    assert SESSION == found.session
    assert alice == found.owner
    assert await table.find(second, alice, LIMITS) is None
    assert await table.find(third, alice, LIMITS) is None  # bob's
    assert await table.find(third, bob, LIMITS) is not None
    assert await table.find(fourth, alice, LIMITS) is not None

    assert await table.set_level(first, "debug")
    assert await table.subscribe(first, "a://1", True, LIMITS) is True
    assert await table.subscribe(first, "a://1", True, LIMITS) is False
    assert await table.subscribe(first, "a://2", True, LIMITS) is True
    assert await table.subscribe(first, "a://2", False, LIMITS) is True
    changed = await table.find(first, alice, LIMITS)
    assert changed is not None
    assert "debug" == changed.session.log_level
    assert frozenset({"a://1"}) == changed.session.subscriptions

    assert await table.claim_stream(first, f"{me}/1") is True
    assert await table.claim_stream(first, f"{me}/2") is False
    assert await table.claim_stream(first, f"{me}/3", stale=f"{me}/1") is True
    await table.release_stream(first, f"{me}/1")  # not the holder: nothing happens
    held = await table.find(first, alice, LIMITS)
    assert held is not None
    assert f"{me}/3" == held.stream
    await table.release_stream(first, f"{me}/3")
    assert await table.claim_stream(first, f"{me}/4") is True

    assert await table.close(first)
    assert not await table.close(first)
    assert await table.find(first, alice, LIMITS) is None
    assert not await table.set_level(first, "info")
    assert await table.subscribe(first, "a://1", True, LIMITS) is None
    assert await table.claim_stream(first, f"{me}/5") is None


async def check_the_subscription_bound(table: Sessions) -> None:
    sid = await table.open(SESSION, "-", "-", LIMITS)
    for i in range(MAX_SUBSCRIPTIONS):
        assert await table.subscribe(sid, f"a://{i}", True, LIMITS)
    with pytest.raises(TooManySubscriptions):
        await table.subscribe(sid, "a://one-more", True, LIMITS)
    assert await table.subscribe(sid, "a://0", True, LIMITS) is False  # already held


async def check_the_shares(table: Sessions) -> None:
    """No caller ends another's session: past its share a caller loses its own least
    recently used one, and a full store refuses a caller that holds none."""
    limits = Limits(max_sessions=4, max_sessions_per_caller=2, session_idle=60)
    alice, bob, carol, dave = (owner_of(n) for n in ("alice", "bob", "carol", "dave"))

    async def opened(who: str) -> str:
        return await table.open(SESSION, who, who, limits)

    async def alive(sid: str, who: str) -> bool:
        return await table.find(sid, who, limits) is not None

    a1, a2 = await opened(alice), await opened(alice)
    assert await alive(a1, alice)  # a2 is now alice's least recently used
    a3 = await opened(alice)  # past her share of 2: a2 goes
    assert [True, False, True] == [await alive(s, alice) for s in (a1, a2, a3)]

    b1, c1 = await opened(bob), await opened(carol)  # the store is full: 4
    with pytest.raises(SessionsFull):
        await opened(dave)  # would end someone else's
    a4 = await opened(alice)  # full, but alice has her own to give: a1 goes
    b2 = await opened(bob)  # likewise b1
    assert [False, True, True] == [await alive(s, alice) for s in (a1, a3, a4)]
    assert [False, True] == [await alive(s, bob) for s in (b1, b2)]
    assert await alive(c1, carol)

    assert await table.close(c1)
    d1 = await opened(dave)  # room again
    assert await alive(d1, dave)


async def test_the_memory_table() -> None:
    await check_the_table(MemorySessions())
    await check_the_subscription_bound(MemorySessions())
    await check_the_shares(MemorySessions())


async def test_the_memory_table_frees_the_share_of_expired_sessions(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemorySessions()
    limits = Limits(max_sessions=2, max_sessions_per_caller=2, session_idle=30)
    old = [await table.open(SESSION, "-", "a", limits) for _ in range(2)]
    await trio.sleep(31)
    new = await table.open(SESSION, "-", "b", limits)  # the full store had expired

    assert 1 == len(table)
    assert await table.find(new, "-", limits) is not None
    assert [None, None] == [await table.find(s, "-", limits) for s in old]


async def test_the_memory_table_forgets_idle_sessions(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = MemorySessions()
    limits = Limits(session_idle=30)
    kept = await table.open(SESSION, "-", "-", limits)
    idle = await table.open(SESSION, "-", "-", limits)
    await trio.sleep(20)
    assert await table.find(kept, "-", limits) is not None
    await trio.sleep(20)

    assert await table.find(kept, "-", limits) is not None
    assert await table.find(idle, "-", limits) is None
    await trio.sleep(31)
    await table.open(SESSION, "-", "-", limits)  # opening drops what expired
    assert 1 == len(table)


async def test_the_redis_table(redis_server: RedisServer) -> None:
    async with redis_sessions(redis_server.url) as table:
        await check_the_table(table, table.store.origin)
        await check_the_subscription_bound(table)
        # A stream token of a process without a heartbeat (gone) is no claim.
        sid = await table.open(SESSION, "-", "-", LIMITS)
        assert await table.claim_stream(sid, "gone/1") is True
        assert await table.claim_stream(sid, f"{table.store.origin}/2") is True


async def test_the_redis_table_keeps_each_caller_to_its_share(
    redis_server: RedisServer,
) -> None:
    async with redis_sessions(redis_server.url) as table:
        await check_the_shares(table)


async def test_the_redis_table_frees_the_share_of_expired_sessions(
    redis_server: RedisServer,
) -> None:
    """A stale id (its session expired in Redis) holds no place in the store nor in
    its caller's share."""
    short = Limits(session_idle=0.3, max_sessions=2, max_sessions_per_caller=2)
    async with redis_sessions(redis_server.url) as table:
        old = [await table.open(SESSION, "-", "a", short) for _ in range(2)]
        client = table.store._redis.client
        assert client is not None
        for _ in range(40):  # Redis expires the keys in its own time
            if not await client.exists([table.prefix + old[1]]):
                break
            await trio.sleep(0.25)
        other = await table.open(SESSION, "-", "b", short)  # not full: both stale
        mine = await table.open(SESSION, "-", "a", short)
        indexed = await client.zrange(table.index, 0, -1)
        held = await client.zrange(f"{table.index}:caller:a", 0, -1)

    assert {other, mine} == {m.decode() for m in indexed}
    assert [mine] == [m.decode() for m in held]


async def test_the_redis_table_forgets_idle_sessions(redis_server: RedisServer) -> None:
    short = Limits(session_idle=0.3, max_sessions=2)
    async with redis_sessions(redis_server.url) as table:
        idle = await table.open(SESSION, "-", "-", short)
        await table.subscribe(idle, "a://1", True, short)
        client = table.store._redis.client
        assert client is not None
        for _ in range(40):  # Redis expires the keys in its own time
            if not await client.exists([table.prefix + idle]):
                break
            await trio.sleep(0.25)
        expired = await table.find(idle, "-", short)
        # Expired ids leave the index too: two new sessions drop nothing live.
        first = await table.open(SESSION, "-", "-", short)
        second = await table.open(SESSION, "-", "-", short)
        indexed = await client.zrange(table.index, 0, -1)
        leftover = await client.exists([f"{table.prefix}{idle}:subs"])

    assert expired is None
    assert {first, second} == {m.decode() for m in indexed}
    assert 0 == leftover


@given(st.text())
def test_an_owner_is_a_digest_of_the_principal_id(who: str) -> None:
    owner = owner_of(who)
    assert owner == owner_of(who)
    assert len(owner) == 32
    assert set(owner) <= set("0123456789abcdef")
    assert owner != owner_of(who + "x")
    assert "-" == owner_of(None)


def test_session_ids_are_visible_ascii_and_long() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert 1000 == len(ids)
    assert all(all(0x21 <= ord(c) <= 0x7E for c in i) and len(i) >= 22 for i in ids)


async def test_a_redis_session_in_use_outlives_session_idle(
    redis_server: RedisServer,
) -> None:
    """Each use pushes the expiry on (the memory table's test above, on Redis): a
    session used every 0.2 s lives through three times ``session_idle``, its
    subscriptions with it; left alone, it goes."""
    idle = Limits(session_idle=1.5, max_sessions=4)
    async with redis_sessions(redis_server.url) as table:
        busy = await table.open(SESSION, "-", "-", idle)
        await table.subscribe(busy, "a://kept", True, idle)
        deadline = trio.current_time() + 3 * idle.session_idle
        while trio.current_time() < deadline:
            assert await table.find(busy, "-", idle) is not None
            await trio.sleep(0.2)
        kept = await table.find(busy, "-", idle)
        await trio.sleep(idle.session_idle + 0.5)
        gone = await table.find(busy, "-", idle)

    assert kept is not None
    assert frozenset({"a://kept"}) == kept.session.subscriptions
    assert gone is None
