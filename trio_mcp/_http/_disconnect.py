"""Noticing that an HTTP client left: a watcher only for requests that last.

ASGI reports a client's disconnect only through ``receive()``, so noticing it while
a handler runs takes a task blocked in ``receive()``. A task and a nursery for every
request cost about a fifth of the ASGI app's own CPU per call (spawning the task,
opening and closing the nursery, waking the task for the ``http.disconnect`` that the
finished response itself produces), and almost every request had ended before a
disconnect could have mattered. So a request registers here (a dict entry), and one
task per Trio run, the sweeper, starts a watcher for each request still running
``GRACE`` seconds after it registered. A disconnect is then noticed within about
``2 * GRACE`` of the request's start, or at once after that.

The sweeper is a Trio system task (``trio.lowlevel.spawn_system_task``), one per
``trio.run``, started by the first request: the app may be mounted where no ASGI
lifespan runs (inside a router), so it has no nursery of its own to start it in.

Invariants:
- A request's scope is cancelled only by its own watcher, at the first
  ``http.disconnect``, and never after ``Watched.done()``: the final send, in which
  Hypercorn ends the response and re-arms the connection's idle timer (producing the
  ``http.disconnect`` of a finished response), is never cut short from here.
- The sweeper sleeps only while an unwatched request is pending and parks otherwise,
  so an idle server is not woken, nor a ``MockClock`` with autojump kept busy.
- Nothing here raises into the run (a system task's exception would end it): a
  ``receive()`` that fails ends that watcher alone, and is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import trio

__all__ = ["GRACE", "Watched", "cancel_on_disconnect", "watch"]

log = logging.getLogger("trio_mcp.http")

#: Seconds a request runs before a watcher is started for it.
GRACE: Final = 0.05

# An ASGI receive callable; the messages are plain dicts whose values vary by key.
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class Watched:
    """One request while it runs: what to read and what to cancel if its client leaves."""

    __slots__ = ("ended", "receive", "scope", "since", "sweeper", "watcher")

    def __init__(
        self, receive: Receive, scope: trio.CancelScope, sweeper: _Sweeper
    ) -> None:
        self.receive = receive
        self.scope = scope
        self.sweeper = sweeper
        self.since = trio.current_time()
        self.watcher: trio.CancelScope | None = None
        self.ended = False

    def done(self) -> None:
        """The request ends: it is no longer watched, nor its scope cancelled."""
        self.ended = True
        if self.watcher is None:
            del self.sweeper.unwatched[self]
        else:
            self.watcher.cancel()


class _Sweeper:
    """The requests of one Trio run that have no watcher yet, oldest first."""

    def __init__(self) -> None:
        self.unwatched: dict[Watched, None] = {}
        self.wake: trio.Event | None = None

    def add(self, entry: Watched) -> None:
        self.unwatched[entry] = None
        if self.wake is not None:
            self.wake.set()
            self.wake = None

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            while True:
                if not self.unwatched:
                    self.wake = trio.Event()
                    await self.wake.wait()
                    continue
                oldest = next(iter(self.unwatched))
                due = oldest.since + GRACE
                if trio.current_time() < due:
                    await trio.sleep_until(due)
                    continue
                self._start_due(nursery)

    def _start_due(self, nursery: trio.Nursery) -> None:
        """Start a watcher for every request registered ``GRACE`` or more ago."""
        limit = trio.current_time() - GRACE
        while self.unwatched:
            entry = next(iter(self.unwatched))
            if entry.since > limit:
                return
            del self.unwatched[entry]
            entry.watcher = trio.CancelScope()
            nursery.start_soon(_watch_one, entry)


async def _watch_one(entry: Watched) -> None:
    """Cancel ``entry``'s scope at its client's ``http.disconnect``."""
    assert entry.watcher is not None
    with entry.watcher:
        try:
            while (await entry.receive())["type"] != "http.disconnect":
                pass
        except Exception:  # not ours to raise: this would end the whole run
            log.exception("HTTP: reading a request's disconnect failed; not watched")
            return
        if not entry.ended:
            entry.scope.cancel()


_SWEEPER: Final = trio.lowlevel.RunVar[_Sweeper]("trio_mcp_http_sweeper")


def watch(receive: Receive, scope: trio.CancelScope) -> Watched | None:
    """Register a request to be watched once it has run ``GRACE`` seconds.

    Returns None when the run no longer takes system tasks (it is ending); the caller
    then watches the request itself. Call ``entry.done()`` before the final send.
    """
    try:
        sweeper = _SWEEPER.get()
    except LookupError:
        sweeper = _Sweeper()
        try:
            trio.lowlevel.spawn_system_task(sweeper.run, name="trio_mcp HTTP sweeper")
        except RuntimeError:
            return None
        _SWEEPER.set(sweeper)
    entry = Watched(receive, scope, sweeper)
    sweeper.add(entry)
    return entry


async def cancel_on_disconnect(receive: Receive, scope: trio.CancelScope) -> None:
    """Cancel ``scope`` when the client goes away: a request with its own watcher
    task (a listen stream, one the sweeper could not take); it then ends quietly."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return
