"""The broadcast behind listen streams: filtering, order, and bounded memory for laggards."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trio_mcp._changes._broadcast import Broadcast, Change, Subscription

URIS = [f"test://r{i}" for i in range(5)]


async def drain(subscription: Subscription) -> list[Change]:
    """Everything a subscription holds right now, without waiting for more."""
    subscription.end()
    return [change async for change in subscription]


async def test_a_subscription_receives_only_the_changes_it_wants() -> None:
    """Spec §8: the server MUST NOT send types the client did not request."""
    broadcast = Broadcast()
    wanted = [Change.list_changed("tools"), Change.updated(URIS[0])]
    with broadcast.subscribe(wanted) as subscription:
        for change in [
            Change.list_changed("prompts"),
            Change.updated(URIS[1]),
            Change.updated(URIS[0]),
            Change.list_changed("tools"),
        ]:
            broadcast.publish(change)

        received = await drain(subscription)

    assert [Change.updated(URIS[0]), Change.list_changed("tools")] == received


async def test_a_lagging_subscriber_gets_every_affected_uri_again_with_bounded_memory() -> (
    None
):
    """Our choice: 10,000 updates to a reader that never reads stay within the buffer
    plus one pending entry per subscribed URI, and the reader then learns of every
    URI updated after its buffer filled, each once."""
    broadcast = Broadcast(buffer_size=8)
    with (
        broadcast.subscribe([Change.updated(u) for u in URIS]) as slow,
        broadcast.subscribe([Change.updated(URIS[0])]) as narrow,
    ):
        for i in range(10_000):
            broadcast.publish(Change.updated(URIS[i % len(URIS)]))
            stats = broadcast.statistics()
            assert stats.buffered <= 2 * 8
            assert stats.pending <= len(URIS) + 1

        stats = broadcast.statistics()
        slow_received = await drain(slow)
        narrow_received = await drain(narrow)

    assert (2, 10_000, 8, len(URIS)) == (
        stats.subscribers,
        stats.published,
        stats.peak_buffered,
        stats.peak_pending,
    )
    assert [Change.updated(URIS[i % len(URIS)]) for i in range(8)] == slow_received[:8]
    assert {Change.updated(u) for u in URIS} == set(slow_received[8:])
    assert len(URIS) == len(slow_received[8:])
    assert [Change.updated(URIS[0])] * 9 == narrow_received


async def test_a_reader_that_catches_up_gets_new_changes_through_the_buffer_again() -> (
    None
):
    """Our choice: once the pending set drains, changes are buffered in order again."""
    broadcast = Broadcast(buffer_size=1)
    with broadcast.subscribe([Change.updated(u) for u in URIS]) as subscription:
        for uri in URIS[:3]:
            broadcast.publish(Change.updated(uri))
        first = [await subscription.receive() for _ in range(3)]
        broadcast.publish(Change.updated(URIS[4]))
        broadcast.publish(Change.updated(URIS[3]))

        rest = await drain(subscription)

    assert [Change.updated(u) for u in URIS[:3]] == first
    assert [Change.updated(URIS[4]), Change.updated(URIS[3])] == rest
    assert 0 == broadcast.statistics().subscribers


async def test_a_waiting_reader_is_woken_by_a_publish() -> None:
    """Our choice: publishing never blocks, and a waiting reader gets the change."""
    broadcast = Broadcast()
    received: list[Change] = []
    with broadcast.subscribe([Change.list_changed("tools")]) as subscription:
        async with trio.open_nursery() as nursery:

            async def read_one() -> None:
                received.append(await subscription.receive())

            nursery.start_soon(read_one)
            await trio.testing.wait_all_tasks_blocked()
            assert 1 == broadcast.publish(Change.list_changed("tools"))

    assert [Change.list_changed("tools")] == received


async def test_end_wakes_a_waiting_reader_and_stops_iteration() -> None:
    """Our choice: ending a subscription ends its reader's loop."""
    broadcast = Broadcast()
    received: list[Change] = []
    with broadcast.subscribe([Change.list_changed("tools")]) as subscription:
        async with trio.open_nursery() as nursery:

            async def read_all() -> None:
                received.extend([c async for c in subscription])

            nursery.start_soon(read_all)
            await trio.testing.wait_all_tasks_blocked()
            subscription.end()
        broadcast.publish(Change.list_changed("tools"))

    assert [] == received
    assert 0 == subscription.statistics().buffered


def test_a_buffer_must_hold_at_least_one_change() -> None:
    """Our choice: a zero buffer would coalesce everything; refuse it."""
    with pytest.raises(ValueError, match="buffer_size"):
        Broadcast(buffer_size=0)
