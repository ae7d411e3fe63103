"""One Redis connection manager for ``RedisStore`` and ``RedisBroadcast``.

Both hold a coredis client while they run, keep background work going through
outages and read a pub/sub channel; this module does that once:

- ``RedisConnection.running(*work)`` imports coredis (the ``redis`` extra; without it
  a ``McpError.Transport`` that says what to install), holds one client for the
  block and runs each piece of background work in *sessions*: a session that fails
  is reported (``lost``) and run again after a wait that doubles from
  ``reconnect_delay`` to ``max_reconnect_delay``. A session that reached Redis
  (it called ``task_status.started()``) makes the next wait start again from
  ``reconnect_delay``. Background work never raises into the server.
- ``read_channel`` is the pub/sub reader: it subscribes, says so
  (``task_status.started()``), hands each message's data on, and raises once the
  subscription ends, so its session is run again.
- Nothing is retried by coredis itself (``NoRetryPolicy``): a command that fails,
  fails now, and its caller decides. The client's pool replaces a connection that
  broke, so the next command after an outage connects again.

coredis runs on Trio through anyio: no thread and no blocking call touches the event
loop. It is imported only when a connection starts.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final, NoReturn

import trio

from ._errors import InvalidArgument, Transport, install_hint

if TYPE_CHECKING:
    import coredis

__all__ = ["SCHEMES", "ChannelLost", "RedisConnection", "check_url", "reason"]

#: The URL schemes coredis connects to: TCP, TLS, a Unix socket.
SCHEMES: Final = ("redis://", "rediss://", "unix://")

#: A session of background work: ``work(client, task_status=...)``. It calls
#: ``task_status.started()`` once it has reached Redis, and never returns normally.
Work = Callable[..., Awaitable[None]]
#: Told why a session of ``work`` ended: ``lost(work_name, reason)``.
Lost = Callable[[str, str], None]


class ChannelLost(Exception):
    """A pub/sub subscription ended without an error from coredis."""


def check_url(owner: str, url: str) -> str:
    """``url`` if it names a Redis coredis can reach.

    Raises:
        McpError.InvalidArgument: for any other scheme.
    """
    if not isinstance(url, str) or not url.startswith(SCHEMES):
        raise InvalidArgument(
            f"{owner} needs a redis://, rediss:// or unix:// URL, not {url!r}"
        )
    return url


def reason(exc: BaseException) -> str:
    """A short cause for the log: the first leaf of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


class RedisConnection:
    """One coredis client, held while ``running``, and the sessions of background
    work that use it.

    Args:
        url: A URL ``check_url`` accepts.
        owner: The class it serves, named in errors and the log.
        log: Where lost sessions are logged when ``lost`` is not given.
        connect_timeout: Seconds a connection attempt may take.
        reconnect_delay: First wait before a failed session runs again.
        max_reconnect_delay: Longest wait between sessions.
        lost: Told of every session that ended; by default a warning is logged.
    """

    def __init__(
        self,
        url: str,
        *,
        owner: str,
        log: logging.Logger,
        connect_timeout: float,
        reconnect_delay: float = 0.1,
        max_reconnect_delay: float = 5.0,
        lost: Lost | None = None,
    ) -> None:
        self.url = check_url(owner, url)
        self.owner = owner
        self.log = log
        self.connect_timeout = connect_timeout
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.lost: Lost = lost or self._log_lost
        self.client: coredis.Redis[bytes] | None = None
        """The client, while ``running``; None otherwise."""
        self._nursery: trio.Nursery | None = None

    @property
    def running_now(self) -> bool:
        """Whether a ``running`` block holds the client right now."""
        return self.client is not None

    @asynccontextmanager
    async def running(self, *work: Work) -> AsyncIterator[coredis.Redis[bytes]]:
        """Hold the client and run each ``work`` in sessions for the block.

        Raises:
            McpError.Transport: if coredis is not installed.
        """
        try:
            import coredis
            from coredis.retry import NoRetryPolicy
        except ImportError as exc:
            raise Transport(
                f"{self.owner} needs coredis; {install_hint('redis')}"
            ) from exc
        client: coredis.Redis[bytes] = coredis.Redis.from_url(
            self.url, retry_policy=NoRetryPolicy(), connect_timeout=self.connect_timeout
        )
        async with client:
            self.client = client
            try:
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    for each in work:
                        nursery.start_soon(self._sessions, each, client)
                    yield client
                    nursery.cancel_scope.cancel()
            finally:
                self.client = self._nursery = None

    def start_soon(self, fn: Callable[[], Awaitable[object]]) -> None:
        """Run ``fn`` beside the background work, until the ``running`` block ends
        (the broadcast's outage timer); nothing is started when not running."""
        if self._nursery is not None:
            self._nursery.start_soon(fn)

    async def _sessions(self, work: Work, client: coredis.Redis[bytes]) -> NoReturn:
        """Run sessions of ``work`` one after another, waiting between them."""
        name = getattr(work, "__name__", repr(work))
        delay = self.reconnect_delay
        while True:
            reached, why = await self._session(work, client)
            if reached:
                delay = self.reconnect_delay
            self.lost(name, why)
            await trio.sleep(delay)
            delay = min(delay * 2, self.max_reconnect_delay)

    async def _session(
        self, work: Work, client: coredis.Redis[bytes]
    ) -> tuple[bool, str]:
        """Run one session; return whether it reached Redis and why it ended.

        coredis may raise from its own cleanup while being cancelled (a closed
        stream), so the group is split: the cancellation propagates, the rest is
        only the reason.
        """
        reached, why = False, "it ended"
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(work, client)
                reached = True
        except* trio.Cancelled:
            raise
        except* Exception as group:
            why = reason(group)
        return reached, why

    def _log_lost(self, name: str, why: str) -> None:
        self.log.warning("%s: %s failed (%s); retrying", self.owner, name, why)

    async def read_channel(
        self,
        channel: str,
        deliver: Callable[[object], object],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> NoReturn:
        """Subscribe to ``channel``, then hand each message's data to ``deliver``.

        Raises:
            ChannelLost: when the subscription ends (any error of coredis otherwise).
        """
        from coredis.retry import NoRetryPolicy

        client = self.client
        if client is None:
            raise ChannelLost(f"{self.owner} is not running")
        async with client.pubsub(
            channels=[channel],
            ignore_subscribe_messages=True,
            retry_policy=NoRetryPolicy(),
        ) as pubsub:
            task_status.started()
            async for message in pubsub:
                deliver(message["data"])
        raise ChannelLost(f"the subscription to {channel} ended")
