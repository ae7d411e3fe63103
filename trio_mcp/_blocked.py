"""The blocked-loop warning: a handler that holds the event loop is named in the log.

An ``async def`` handler that calls ``time.sleep`` or a blocking socket function
stops every other call of the process, and its own ``timeout=`` cannot fire (Trio
checks deadlines only between task steps). Nothing fails, so nothing says why the
server stalled. While a server serves, a watchdog thread asks the Trio loop for a
beat (``run_sync_soon``) ten times per ``Limits.blocked_warning``; when a beat has
waited longer than that, the loop is held, and the watchdog looks at the loop
thread's stack: the task Trio is stepping, and the call in that task's context
(``ToolContext``). It warns on the ``trio_mcp`` logger, once per handler name for
the run, with where it was held and what to do instead.

Why a thread and not a ``trio.abc.Instrument`` timing each task step: the
instrument is exact, but Trio calls it on every step, which cost about 1 us per
step and 7-9 us per in-process call (8-10 %; ``bench/blocked_watch.py``). The
watchdog costs nothing per step or per call: ten beats per threshold (ten a second
by default), each a few microseconds of the loop's time.

Only a task that stays on the loop for the whole threshold is named: the watchdog
samples the stack at each of its polls, and names a task only if every sample since
the beat was asked for saw it (a batch of many short steps that adds up to the
threshold names no one). A step outside any call (the host's code, trio_mcp's own)
is not a handler's and is not logged.

One watchdog per Trio run, shared by every serve method and mounted app of the run
(a ``RunVar``), started by the first and stopped by the last; the shortest threshold
of those open applies.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import trio

from ._context import context_in

__all__ = ["watch_blocking"]

log = logging.getLogger("trio_mcp")

_clock = time.perf_counter

#: Polls per threshold: a stall is seen at most a tenth of the threshold late.
POLLS = 10

ADVICE = (
    "{name!r} held the event loop for more than {limit:g} s "
    "(Limits.blocked_warning){where}: every other call waited, and its timeout= "
    "could not fire meanwhile. Make the handler a plain def (trio_mcp runs it in a "
    "worker thread), or use Trio's async calls (await trio.sleep(), trio.socket, "
    "an async client, trio.to_thread.run_sync for blocking work)."
)

#: The code of Trio's run loop, whose frame holds the task being stepped (``task``);
#: a Trio without it names no one (tests/transports/test_blocked_loop.py fails).
_RUN_LOOP = getattr(getattr(trio._core._run, "unrolled_run", None), "__code__", None)


class _Watchdog:
    """The thread that asks the loop for beats and names who holds it."""

    def __init__(self, token: trio.lowlevel.TrioToken) -> None:
        self.token = token
        self.loop_thread = threading.get_ident()
        self.thresholds: list[float] = []
        self.threshold = math.inf
        self.warned: set[str] = set()
        self.stopping = threading.Event()
        self.asked: float | None = None
        """When the beat not yet given was asked for; None: none pending."""
        self.suspect: trio.lowlevel.Task | None = None
        self.suspect_since = 0.0

    def start(self) -> None:
        threading.Thread(
            target=self.run, name="trio_mcp blocked-loop watchdog", daemon=True
        ).start()

    def beat(self) -> None:
        """Run by the loop: it is free again."""
        self.asked = None

    def run(self) -> None:
        while not self.stopping.wait(self.threshold / POLLS):
            asked, now = self.asked, _clock()
            if asked is None:
                self.asked, self.suspect = now, None
                try:
                    self.token.run_sync_soon(self.beat)
                except trio.RunFinishedError:
                    return
            else:
                self.poll(asked, now)

    def poll(self, asked: float, now: float) -> None:
        """The loop has not beaten since ``asked``: who holds it, and how long?"""
        frame = sys._current_frames().get(self.loop_thread)
        task = None if frame is None else _stepping(frame)
        if task is None or task is not self.suspect:
            self.suspect, self.suspect_since = task, now
            return
        # Seen at every poll since the first after the beat was asked for.
        if self.suspect_since > asked + 1.5 * self.threshold / POLLS:
            return
        if now - asked > self.threshold:
            self.warn(task, frame)

    def warn(self, task: trio.lowlevel.Task, frame: FrameType | None) -> None:
        ctx = context_in(task.context)
        name = None if ctx is None else ctx.name
        if name is None or name in self.warned:
            return
        self.warned.add(name)
        where = "" if frame is None else f" at {_place(frame)}"
        log.warning(ADVICE.format(name=name, limit=self.threshold, where=where))


def _stepping(frame: FrameType) -> trio.lowlevel.Task | None:
    """The task Trio is stepping on the stack that ``frame`` tops, if any."""
    at: FrameType | None = frame
    while at is not None:
        if at.f_code is _RUN_LOOP:
            task = at.f_locals.get("task")
            return task if isinstance(task, trio.lowlevel.Task) else None
        at = at.f_back
    return None


def _place(frame: FrameType) -> str:
    """``file:line in function`` of the innermost Python frame (the blocking line)."""
    code = frame.f_code
    return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"


_watchdog: trio.lowlevel.RunVar[_Watchdog | None] = trio.lowlevel.RunVar(
    "trio_mcp_blocked_watchdog", default=None
)


@contextmanager
def watch_blocking(threshold: float) -> Iterator[None]:
    """Watch for handlers that hold the loop longer than ``threshold`` seconds
    while the block runs (an infinite threshold watches nothing)."""
    if math.isinf(threshold):
        yield
        return
    watchdog = _watchdog.get()
    if watchdog is None:
        watchdog = _Watchdog(trio.lowlevel.current_trio_token())
        _watchdog.set(watchdog)
        watchdog.thresholds.append(threshold)
        watchdog.threshold = threshold
        watchdog.start()
    else:
        watchdog.thresholds.append(threshold)
        watchdog.threshold = min(watchdog.thresholds)
    try:
        yield
    finally:
        watchdog.thresholds.remove(threshold)
        if watchdog.thresholds:
            watchdog.threshold = min(watchdog.thresholds)
        else:
            _watchdog.set(None)
            watchdog.stopping.set()
