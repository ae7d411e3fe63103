"""Fan-out of change notices to listen streams, with bounded memory per subscriber.

A ``Broadcast`` hands each published ``Change`` to every ``Subscription`` that wants
it. No I/O here: listen handlers read their subscription and write what they get.

Invariants:
- Publishing never blocks and never waits for a reader: it is synchronous.
- Each subscription buffers at most ``buffer_size`` changes in a Trio memory
  channel. When that buffer is full, further changes go to a pending set (an
  insertion-ordered dict) that coalesces repeats, so a reader that lags receives
  every affected change again once, never an invented one, and the set holds at most
  one entry per distinct change the subscription wants (three list kinds plus its
  subscribed URIs).
- Once anything is pending, newer changes queue behind it in the pending set, so a
  reader sees buffered changes first, then pending ones, in publication order of
  their latest occurrence.
- A change means "this may have changed, read it again": delivering one twice is
  harmless, which is what makes coalescing correct.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Final, Literal

import attrs
import trio

from .. import _checks as checks

__all__ = [
    "DEFAULT_BUFFER_SIZE",
    "Broadcast",
    "BroadcastStatistics",
    "Change",
    "ListKind",
    "Subscription",
    "SubscriptionStatistics",
]

#: Changes buffered per subscription before they are coalesced into its pending set.
DEFAULT_BUFFER_SIZE: Final = 64

ListKind = Literal["tools", "prompts", "resources"]


@attrs.frozen
class Change:
    """Something listeners may need to read again: a list, or one resource."""

    method: str
    """The notification's method, e.g. ``notifications/resources/updated``."""
    uri: str | None = None
    """The updated resource's URI; None for a list change."""
    task_id: str | None = None
    """The task whose status changed (``notifications/tasks``); None otherwise."""

    @classmethod
    def list_changed(cls, kind: ListKind) -> Change:
        """Return the change announcing that the list of ``kind`` changed."""
        return cls(f"notifications/{kind}/list_changed")

    @classmethod
    def updated(cls, uri: str) -> Change:
        """Return the change announcing that the resource at ``uri`` changed."""
        return cls("notifications/resources/updated", uri)

    @classmethod
    def task(cls, task_id: str) -> Change:
        """Return the change announcing that the task ``task_id`` changed status."""
        return cls("notifications/tasks", task_id=task_id)


@attrs.frozen
class SubscriptionStatistics:
    """A snapshot of one subscription's queues."""

    buffered: int
    """Changes waiting in the memory channel's buffer."""
    pending: int
    """Distinct changes coalesced because the buffer was full."""
    buffer_size: int
    """The buffer's capacity."""


@attrs.frozen
class BroadcastStatistics:
    """A snapshot of a broadcast: its subscribers and the most any of them holds."""

    subscribers: int
    published: int
    """Changes published since the broadcast was made."""
    coalesced: int
    """Deliveries that went to a pending set instead of a buffer."""
    buffered: int
    """Changes buffered, summed over subscribers."""
    pending: int
    """Changes pending, summed over subscribers."""
    peak_buffered: int
    """The most changes any one subscription has had buffered at once."""
    peak_pending: int
    """The most changes any one subscription has had pending at once."""


class Subscription:
    """One listener's view of a broadcast: the changes it wants, in order.

    Iterate it (``async for change in subscription``); iteration ends after
    ``end()`` once everything buffered and pending has been received.
    """

    def __init__(self, wants: frozenset[Change], buffer_size: int) -> None:
        self.wants = wants
        self.buffer_size = buffer_size
        self._send, self._receive = trio.open_memory_channel[Change](buffer_size)
        self._pending: dict[Change, None] = {}
        self._ended = False

    def _offer(self, change: Change) -> bool:
        """Queue ``change``; return whether it had to be coalesced."""
        if self._ended:
            return False
        if not self._pending:
            try:
                self._send.send_nowait(change)
            except trio.WouldBlock:
                pass
            else:
                return False
        # Re-inserting moves nothing: the first pending occurrence keeps its place,
        # which is fine because the reader only learns "read it again".
        self._pending[change] = None
        return True

    def end(self) -> None:
        """Stop taking changes; iteration ends after what is queued is received."""
        self._ended = True
        self._send.close()

    def statistics(self) -> SubscriptionStatistics:
        """Return a snapshot of this subscription's queues."""
        return SubscriptionStatistics(
            buffered=self._receive.statistics().current_buffer_used,
            pending=len(self._pending),
            buffer_size=self.buffer_size,
        )

    async def receive(self) -> Change:
        """Return the next change, waiting for one.

        Raises:
            trio.EndOfChannel: after ``end()``, once everything queued was received.
        """
        await trio.lowlevel.checkpoint()
        try:
            return self._receive.receive_nowait()
        except (trio.WouldBlock, trio.EndOfChannel):
            if self._pending:
                change = next(iter(self._pending))
                del self._pending[change]
                return change
        # Nothing is buffered or pending, so new changes go to the channel (_offer).
        return await self._receive.receive()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Change:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None


class Broadcast:
    """Publishes changes to subscriptions within one process.

    Args:
        buffer_size: Changes buffered per subscription before coalescing.
    """

    def __init__(self, *, buffer_size: int = DEFAULT_BUFFER_SIZE) -> None:
        where = f"{type(self).__name__}(buffer_size=...)"
        self.buffer_size = checks.count(buffer_size, where, 1)
        self._subscriptions: set[Subscription] = set()
        self._published = 0
        self._coalesced = 0
        self._peak_buffered = 0
        self._peak_pending = 0

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep what this broadcast needs running for the block; here, nothing.

        Transports enter it while they serve, so a broadcast that spans processes
        (``RedisBroadcast``) can hold its connection for exactly that long.
        """
        yield

    @contextmanager
    def subscribe(self, wants: Iterable[Change]) -> Iterator[Subscription]:
        """Subscribe to the changes in ``wants`` for the duration of the block."""
        subscription = Subscription(frozenset(wants), self.buffer_size)
        self._subscriptions.add(subscription)
        try:
            yield subscription
        finally:
            self._subscriptions.discard(subscription)
            subscription.end()

    def publish_local(self, change: Change) -> int:
        """Offer ``change`` to this process's subscriptions only; return how many.

        For what exists in one process alone (a task's status, tasks extension): a
        broadcast spanning processes (``RedisBroadcast``) does not send it on.
        """
        return Broadcast.publish(self, change)

    def publish(self, change: Change) -> int:
        """Offer ``change`` to every subscription that wants it; return how many.

        Never blocks: a full buffer coalesces the change into the pending set.
        """
        self._published += 1
        reached = 0
        for subscription in self._subscriptions:
            if change not in subscription.wants:
                continue
            reached += 1
            if subscription._offer(change):
                self._coalesced += 1
            stats = subscription.statistics()
            self._peak_buffered = max(self._peak_buffered, stats.buffered)
            self._peak_pending = max(self._peak_pending, stats.pending)
        return reached

    def statistics(self) -> BroadcastStatistics:
        """Return a snapshot of the subscribers and their queues."""
        each = [s.statistics() for s in self._subscriptions]
        return BroadcastStatistics(
            subscribers=len(each),
            published=self._published,
            coalesced=self._coalesced,
            buffered=sum(s.buffered for s in each),
            pending=sum(s.pending for s in each),
            peak_buffered=self._peak_buffered,
            peak_pending=self._peak_pending,
        )
