"""``RedisBroadcast``: change notices shared by every process through Redis pub/sub.

Each process keeps the in-process fan-out of ``Broadcast`` for its own listen
streams and adds one Redis connection for publishing and one for subscribing to a
channel. A change published here reaches local subscriptions at once and is sent to
Redis tagged with this broadcast's origin; a change read from Redis with another
origin is offered to local subscriptions. The connection (one coredis client,
reconnecting, the pub/sub reader) is ``trio_mcp._redis.RedisConnection``, shared with
``RedisStore``; coredis runs on Trio through anyio (the trial that chose it is in
docs/deploy.md) and is imported only when ``running()`` starts.

Invariants:
- ``publish`` never blocks and never fails, connected or not: what Redis has not
  taken yet waits in an insertion-ordered set that coalesces repeats. Past
  ``max_unsent`` distinct changes the set is dropped for one "resync" message,
  which makes every other process re-offer every subscription all it wants.
- Nothing is invented: a resync offers each subscription only the changes it asked
  for (its URIs, its list kinds), which means "read it again".
- Each (re)connection resyncs the local subscriptions, since messages may have been
  missed while the subscriber was not subscribed.
- An outage longer than ``outage_grace`` ends the subscriptions open when it
  started, so listen streams return their results and clients listen again (maybe
  on a healthy replica). Listens opened during the outage stay open and are resynced
  once Redis is back. Tool calls never see the outage.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final, NoReturn

import trio

from .. import _checks as checks
from .._redis import RedisConnection
from ._broadcast import DEFAULT_BUFFER_SIZE, Broadcast, Change

if TYPE_CHECKING:
    import coredis

__all__ = ["DEFAULT_CHANNEL", "RedisBroadcast"]

log = logging.getLogger("trio_mcp.broadcast")

DEFAULT_CHANNEL: Final = "trio-mcp:changes"
_UPDATED: Final = "notifications/resources/updated"
_LIST_CHANGED: Final = frozenset(
    f"notifications/{kind}/list_changed" for kind in ("tools", "prompts", "resources")
)


class RedisBroadcast(Broadcast):
    """Publishes changes to the listen streams of every process sharing one Redis.

    Needs the ``redis`` extra (``pip install ".[redis]"`` in a clone, or the wheel). Give it to
    ``Server(broadcast=...)``, or pass ``--broadcast URL`` to ``trio-mcp serve``.
    The serve methods and the mounted app's ASGI lifespan keep it connected; an
    ASGI host that does not run a mounted app's lifespan enters
    ``async with server.broadcast.running():`` itself.

    Args:
        url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for TLS,
            or ``unix://path``.
        channel: The pub/sub channel; servers that must not hear each other (other
            catalogs on one Redis) use different channels.
        buffer_size: Changes buffered per local subscription before coalescing.
        outage_grace: Seconds without Redis after which open listens are ended.
        max_unsent: Distinct changes kept for Redis while it is unreachable; past
            that they are replaced by one resync message.
        reconnect_delay: First wait before reconnecting; it doubles per failure up
            to ``max_reconnect_delay``.
        max_reconnect_delay: Longest wait between reconnection attempts.
    """

    def __init__(
        self,
        url: str,
        *,
        channel: str = DEFAULT_CHANNEL,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        outage_grace: float = 2.0,
        max_unsent: int = 1024,
        reconnect_delay: float = 0.1,
        max_reconnect_delay: float = 5.0,
    ) -> None:
        super().__init__(buffer_size=buffer_size)
        where = "RedisBroadcast({}=...)".format
        self.channel = checks.string(channel, where("channel"))
        if not checks.is_finite_number(outage_grace) or outage_grace < 0:
            raise checks.invalid(
                where("outage_grace"), "a finite number of seconds >= 0", outage_grace
            )
        self.outage_grace = float(outage_grace)
        self.max_unsent = checks.count(max_unsent, where("max_unsent"), 1)
        self.reconnect_delay = checks.positive(
            reconnect_delay, where("reconnect_delay")
        )
        self.max_reconnect_delay = checks.positive(
            max_reconnect_delay, where("max_reconnect_delay")
        )
        self._redis = RedisConnection(
            url,
            owner="RedisBroadcast",
            log=log,
            connect_timeout=5.0,
            reconnect_delay=self.reconnect_delay,
            max_reconnect_delay=self.max_reconnect_delay,
            lost=self._lost,
        )
        self.url = url
        self.origin = secrets.token_hex(8)
        """Tags this process's messages so it skips its own echo."""
        self.connected = False
        """Whether the subscriber is subscribed and publishing works, right now."""
        self.connections = 0
        """Successful connections so far (reconnections included)."""
        self.resyncs = 0
        """Times the local subscriptions were offered everything they want again."""
        self._unsent: dict[Change, None] = {}
        self._resync_others = False
        self._wake = trio.Event()
        self._outage: trio.CancelScope | None = None

    def __repr__(self) -> str:
        return f"RedisBroadcast({self.url!r}, channel={self.channel!r})"

    # -- publishing ------------------------------------------------------------------
    def publish(self, change: Change) -> int:
        """Offer ``change`` to local subscriptions and queue it for Redis.

        Never blocks and never fails; returns how many local subscriptions want it.
        """
        reached = super().publish(change)
        if not self._resync_others:
            if change not in self._unsent and len(self._unsent) >= self.max_unsent:
                log.warning(
                    "%d changes wait for Redis; they are replaced by one resync",
                    len(self._unsent),
                )
                self._unsent.clear()
                self._resync_others = True
            else:
                self._unsent[change] = None
        self._wake.set()
        return reached

    def _deliver_locally(self, change: Change) -> None:
        Broadcast.publish(self, change)

    def resync(self) -> int:
        """Offer every local subscription all it wants again; return how many changes.

        What a subscriber gets is "read it again" for its own URIs and list kinds,
        so a missed message is made up for without inventing any.
        """
        self.resyncs += 1
        offered = 0
        for subscription in list(self._subscriptions):
            for change in sorted(subscription.wants, key=_order):
                subscription._offer(change)
                offered += 1
        return offered

    def end_listens(self) -> int:
        """End every local subscription (their listens return); return how many."""
        ended = 0
        for subscription in list(self._subscriptions):
            if not subscription._ended:
                subscription.end()
                ended += 1
        return ended

    # -- the connection ----------------------------------------------------------------
    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Stay connected to Redis (reconnecting as needed) for the block.

        A nested entry (one server served twice at once) shares the first one's
        connection, which ends with the first block.

        Raises:
            McpError.Transport: if coredis is not installed.
        """
        if self._redis.running_now:
            yield
            return
        try:
            async with self._redis.running(self._session):
                yield
        finally:
            self.connected = False
            self._outage = None

    def _lost(self, work: str, reason: str) -> None:
        """A session ended: log it once per outage and start the outage timer."""
        if self.connected or self._outage is None:
            log.warning("lost Redis at %s (%s); reconnecting", self.url, reason)
        self.connected = False
        if self._outage is None:
            self._outage = outage = trio.CancelScope()
            self._redis.start_soon(lambda: self._end_listens_after(outage))

    async def _end_listens_after(self, scope: trio.CancelScope) -> None:
        with scope:
            await trio.sleep(self.outage_grace)
            ended = self.end_listens()
            log.warning(
                "Redis at %s unreachable for %.1f s: ended %d listen streams",
                self.url,
                self.outage_grace,
                ended,
            )

    async def _session(
        self,
        client: coredis.Redis[bytes],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """One connection's life: subscribe, resync, then relay both ways.

        Raises:
            Exception: whatever ended the connection (it never returns normally).
        """
        async with trio.open_nursery() as nursery:
            await nursery.start(self._redis.read_channel, self.channel, self._receive)
            await client.ping()
            self.connected = True
            self.connections += 1
            if self._outage is not None:
                self._outage.cancel()
                self._outage = None
                log.warning("reconnected to Redis at %s", self.url)
            self.resync()
            task_status.started()
            await self._send_unsent(client)

    async def _send_unsent(self, client: coredis.Redis[bytes]) -> NoReturn:
        """Publish queued changes in order; a change is re-queued if sending fails."""
        while True:
            while self._resync_others or self._unsent:
                if self._resync_others:
                    self._resync_others = False
                    try:
                        await client.publish(self.channel, self._encode(None))
                    except BaseException:
                        self._resync_others = True
                        raise
                    continue
                change = next(iter(self._unsent))
                del self._unsent[change]
                try:
                    await client.publish(self.channel, self._encode(change))
                except BaseException:
                    # Sent again after reconnecting (unless it was queued anew).
                    self._unsent = {change: None, **self._unsent}
                    raise
            self._wake = trio.Event()
            await self._wake.wait()

    def _encode(self, change: Change | None) -> str:
        if change is None:
            return json.dumps({"o": self.origin, "resync": True})
        return json.dumps({"o": self.origin, "m": change.method, "u": change.uri})

    def _receive(self, data: object) -> None:
        """Offer a change read from Redis to local subscriptions; skip our own echo."""
        try:
            body = json.loads(data) if isinstance(data, bytes | str) else None
        except ValueError:
            body = None
        if not isinstance(body, dict):
            log.warning("ignored a message on %s that is not ours", self.channel)
            return
        if body.get("o") == self.origin:
            return
        if body.get("resync") is True:
            self.resync()
            return
        method, uri = body.get("m"), body.get("u")
        if method == _UPDATED and isinstance(uri, str):
            self._deliver_locally(Change.updated(uri))
        elif isinstance(method, str) and method in _LIST_CHANGED and uri is None:
            self._deliver_locally(Change(method))
        else:
            log.warning("ignored a message on %s that is not a change", self.channel)


def _order(change: Change) -> tuple[str, str]:
    return change.method, change.uri or ""
