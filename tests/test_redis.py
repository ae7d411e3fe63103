"""``trio_mcp._redis``: the one Redis connection manager of ``RedisStore`` and
``RedisBroadcast`` (their behaviour against a real redis-server, outages included, is
in tests/store and tests/changes). Here, what needs no server: sessions of background
work and their waits (on a ``MockClock``: coredis connects only when a command is sent), the URL
check and the missing extra."""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import McpError, RedisBroadcast, RedisStore
from trio_mcp._redis import SCHEMES, RedisConnection, check_url, reason

#: Nothing listens there; no test here sends a command.
NOWHERE = "redis://127.0.0.1:1/0"
log = logging.getLogger("tests.redis")


def connection(lost: list[tuple[float, str, str]]) -> RedisConnection:
    return RedisConnection(
        NOWHERE,
        owner="Test",
        log=log,
        connect_timeout=1.0,
        reconnect_delay=0.1,
        max_reconnect_delay=0.8,
        lost=lambda name, why: lost.append((trio.current_time(), name, why)),
    )


async def test_a_failed_session_runs_again_after_a_doubling_wait_that_a_reached_one_resets(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Sessions 1-3 fail before reaching Redis (waits 0.1, 0.2, 0.4); session 4
    reaches it (``task_status.started()``) then fails, so the next wait is 0.1 again,
    then 0.2, 0.4 and at most 0.8."""
    lost: list[tuple[float, str, str]] = []
    sessions = 0

    async def work(
        client: object, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> NoReturn:
        nonlocal sessions
        sessions += 1
        if sessions == 4:
            task_status.started()
        raise OSError(f"session {sessions}")

    with trio.move_on_after(3.0):
        async with connection(lost).running(work):
            await trio.sleep_forever()

    assert [
        (0.0, "work", "OSError: session 1"),
        (0.1, "work", "OSError: session 2"),
        (0.3, "work", "OSError: session 3"),
        (0.7, "work", "OSError: session 4"),
        (0.8, "work", "OSError: session 5"),
        (1.0, "work", "OSError: session 6"),
        (1.4, "work", "OSError: session 7"),
        (2.2, "work", "OSError: session 8"),
    ] == [(round(at, 6), name, why) for at, name, why in lost]


async def test_each_piece_of_work_has_its_own_sessions_and_the_block_ends_them(
    autojump_clock: trio.testing.MockClock,
) -> None:
    lost: list[tuple[float, str, str]] = []
    redis = connection(lost)

    async def steady(
        client: object, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        await trio.sleep_forever()

    async def broken(client: object, **_: object) -> None:
        raise ConnectionError("down")

    with trio.move_on_after(0.25):
        async with redis.running(steady, broken) as client:
            assert redis.running_now
            assert client is redis.client
            await trio.sleep_forever()

    assert not redis.running_now
    assert ["broken", "broken"] == [name for _, name, _ in lost]  # at 0, 0.1


async def test_without_coredis_running_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "coredis", None)
    for owner in (RedisStore(NOWHERE), RedisBroadcast(NOWHERE)):
        with pytest.raises(
            McpError.Transport, match=r'pip install "\.\[redis\]" in the clone'
        ):
            async with owner.running():
                pass


@given(url=st.text(max_size=30) | st.sampled_from(SCHEMES).map(lambda s: s + "h"))
def test_only_a_redis_url_is_accepted_by_both_owners(url: str) -> None:
    for owner in (RedisStore, RedisBroadcast, lambda u: check_url("Test", u)):
        if url.startswith(SCHEMES):
            owner(url)
            continue
        with pytest.raises(
            McpError.InvalidArgument, match="a redis://, rediss:// or unix:// URL"
        ) as refused:
            owner(url)
        assert isinstance(refused.value, ValueError)  # what it was before


def test_a_reason_names_the_first_leaf_of_a_group() -> None:
    group = ExceptionGroup("outer", [ExceptionGroup("inner", [OSError("refused")])])

    assert "OSError: refused" == reason(group)
    assert "ValueError: bad" == reason(ValueError("bad"))
